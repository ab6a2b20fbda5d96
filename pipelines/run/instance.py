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

# The settings the project writes into its own $DAGSTER_HOME: no usage telemetry (it runs offline);
# the run launcher whose health check lets run monitoring (Dagster's daemon, which `dagster dev` runs)
# mark a run failed when its worker process is gone; a run that never reports its worker is failed
# after START_TIMEOUT_SECONDS (a run worker imports the graph first: a minute on a loaded machine);
# concurrency pools enforced per step (op granularity), their limits set by apply_pool_limits.
START_TIMEOUT_SECONDS = 600
_TELEMETRY = "telemetry:\n  enabled: false\n"
_MONITORING = f"""run_launcher:
  module: pipelines.run.monitored_launcher
  class: MonitoredRunLauncher
run_monitoring:
  enabled: true
  start_timeout_seconds: {START_TIMEOUT_SECONDS}
  poll_interval_seconds: 30
  max_resume_run_attempts: 0
"""
_POOLS = "concurrency:\n  pools:\n    granularity: op\n"
INSTANCE_SETTINGS = _TELEMETRY + _MONITORING + _POOLS
# what earlier versions wrote: replaced by INSTANCE_SETTINGS; a user's own file is kept
EARLIER_SETTINGS = (_TELEMETRY, _TELEMETRY + _MONITORING)


def dagster_home() -> Path:
    """$DAGSTER_HOME, defaulting (and set) to the project's own folder."""
    return Path(os.environ.setdefault("DAGSTER_HOME", str(REPO / ".mobileforge" / "dagster_home")))


def instance_exists() -> bool:
    """Whether $DAGSTER_HOME holds an instance already: settings of the user's own (their storage,
    e.g. Postgres, is theirs to have created), or the project's settings and the SQLite run storage
    `default_instance` creates."""
    home = dagster_home()
    settings = home / "dagster.yaml"
    if not settings.is_file():
        return False
    if settings.read_text() not in (INSTANCE_SETTINGS, *EARLIER_SETTINGS):
        return True
    return (home / "history" / "runs.db").is_file()


def default_instance() -> dg.DagsterInstance:
    """The persistent instance under $DAGSTER_HOME, defaulting to the project's own folder, with the
    deployment's pool limits."""
    home = dagster_home()
    home.mkdir(parents=True, exist_ok=True)
    settings = home / "dagster.yaml"
    # two commands starting on a fresh home would both create its SQLite tables ("table already exists")
    with (home / ".instance.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not settings.exists() or settings.read_text() in EARLIER_SETTINGS:
            settings.write_text(INSTANCE_SETTINGS)
        instance = dg.DagsterInstance.get()
        instance.get_runs(limit=1)  # storages create their tables on first use
        instance.get_dynamic_partitions(EXPERIMENT_DIMENSION)
        apply_pool_limits(instance, load_deployment())
        return instance


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
