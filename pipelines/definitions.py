"""The one place that assembles assets, checks, jobs, schedules and resources per profile."""

import dagster as dg

from assets.exploration import exploration_traces
from pipelines.checks import schema_check
from pipelines.resources import resources_for

ASSETS = [exploration_traces]

CHECKS = [
    schema_check(exploration_traces, "exploration_transitions"),
]

defs = dg.Definitions(assets=ASSETS, asset_checks=CHECKS, resources=resources_for())
