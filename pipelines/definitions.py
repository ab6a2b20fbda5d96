"""The one place that assembles assets, checks, jobs, schedules and resources per profile."""

from __future__ import annotations

import dagster as dg

defs = dg.Definitions(assets=[])
