"""The Dagster instance `mobileforge run` uses: the persistent one under $DAGSTER_HOME, with the
concurrency pools' limits of the deployment settings (resources.deployment)."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

import dagster as dg

from resources.deployment import Deployment, load_deployment
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
            settings.write_text(LOCAL_SETTINGS)
        instance = dg.DagsterInstance.get()
        instance.get_runs(limit=1)  # storages create their tables on first use
        instance.get_dynamic_partitions(EXPERIMENT_DIMENSION)
        apply_pool_limits(instance, load_deployment())
        return instance


# Pools are enforced per step (op granularity); their limits are set by apply_pool_limits.
LOCAL_SETTINGS = "telemetry:\n  enabled: false\nconcurrency:\n  pools:\n    granularity: op\n"


def apply_pool_limits(instance: dg.DagsterInstance, deployment: Deployment) -> dict[str, int]:
    """Set each pool's limit on the instance (Dagster keeps them in its storage, where
    `dagster instance concurrency set` writes them too); the limits that changed."""
    changed = {}
    for pool, limit in deployment.pools.items():
        info = instance.event_log_storage.get_concurrency_info(pool)
        if info.slot_count != limit:
            instance.event_log_storage.set_concurrency_slots(pool, limit)
            changed[pool] = limit
    return changed
