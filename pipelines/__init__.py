"""Dagster wiring: definitions, jobs, schedules, sensors, checks, the local runner."""

from pipelines import known_warnings  # noqa: F401  (its filters apply to whatever imports a pipelines module)
