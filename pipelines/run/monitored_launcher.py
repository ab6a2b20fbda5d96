"""The run launcher of the instance `mobileforge run` writes: Dagster's default launcher (a run
worker process per run, started by the code server) that also tells Dagster's run monitoring
whether a run's worker process still runs. So the daemon (`dagster dev`, `dagster-daemon run`)
marks a run failed once its process is gone — killed, out of memory — instead of showing it
STARTED until the next `mobileforge run` of its experiment sweeps it (`pipelines.run.sweep`).
"""

from __future__ import annotations

import socket

import dagster as dg
import psutil
from dagster._core.launcher import CheckRunHealthResult, WorkerStatus
from dagster._core.storage.dagster_run import DagsterRun

from pipelines.run_tags import HOST_TAG



def run_worker(instance: dg.DagsterInstance, run_id: str) -> tuple[int, float] | None:
    """(pid, time it reported) of a run's worker process, from its "Started process" event."""
    records = instance.get_records_for_run(run_id, of_type=dg.DagsterEventType.ENGINE_EVENT, limit=50).records
    for record in records:
        metadata = getattr(record.event_log_entry.dagster_event.event_specific_data, "metadata", None) or {}
        if "pid" in metadata:
            return int(metadata["pid"].value), record.event_log_entry.timestamp
    return None


def worker_alive(pid: int, reported_at: float) -> bool:
    """Whether process `pid` of this host is the one that reported at `reported_at` and still runs
    (a pid reused by a later process does not count)."""
    try:
        process = psutil.Process(pid)
        return process.status() != psutil.STATUS_ZOMBIE and process.create_time() <= reported_at + 1
    except psutil.NoSuchProcess:
        return False


class MonitoredRunLauncher(dg.DefaultRunLauncher):
    """`DefaultRunLauncher` that answers run monitoring's health check from the worker's pid."""

    @property
    def supports_check_run_worker_health(self) -> bool:
        return True

    def check_run_worker_health(self, run: DagsterRun) -> CheckRunHealthResult:
        if run.tags.get(HOST_TAG, socket.gethostname()) != socket.gethostname():
            return CheckRunHealthResult(WorkerStatus.RUNNING, "its worker runs on another host, not looked at from here")
        worker = run_worker(self._instance, run.run_id)
        if worker is None:  # not started yet: run monitoring's start timeout covers it
            return CheckRunHealthResult(WorkerStatus.RUNNING, "no worker process reported yet")
        pid, reported_at = worker
        if worker_alive(pid, reported_at):
            return CheckRunHealthResult(WorkerStatus.RUNNING, f"worker pid {pid} runs")
        return CheckRunHealthResult(WorkerStatus.FAILED, f"its run worker (pid {pid}) is gone: killed or crashed "
                                                         "without cleanup")
