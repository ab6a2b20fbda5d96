"""The Dagster instance `mobileforge run` uses: the persistent one under $DAGSTER_HOME."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

import dagster as dg

from resources.experiment import EXPERIMENT_DIMENSION

REPO = Path(__file__).resolve().parents[2]


def default_instance() -> dg.DagsterInstance:
    """The persistent instance under $DAGSTER_HOME, defaulting to the project's own folder."""
    home = Path(os.environ.setdefault("DAGSTER_HOME", str(REPO / ".mobileforge" / "dagster_home")))
    home.mkdir(parents=True, exist_ok=True)
    settings = home / "dagster.yaml"
    # two commands starting on a fresh home would both create its SQLite tables ("table already exists")
    with (home / ".instance.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not settings.exists():  # the project's own home runs offline: no usage telemetry
            settings.write_text("telemetry:\n  enabled: false\n")
        instance = dg.DagsterInstance.get()
        instance.get_runs(limit=1)  # storages create their tables on first use
        instance.get_dynamic_partitions(EXPERIMENT_DIMENSION)
        return instance
