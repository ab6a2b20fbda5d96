"""The run launcher of the instance `mobileforge run` writes: Dagster's default launcher (a run
worker process per run, started by the code server) that also tells Dagster's run monitoring
whether a run's worker process still runs. So the daemon (`dagster dev`, `dagster-daemon run`)
marks a run failed once its process is gone — killed, out of memory — instead of showing it
STARTED until the next `mobileforge run` of its experiment sweeps it (`pipelines.run.sweep`).

While a `mobileforge run` launches its code location's runs (pipelines.run.forked_runs), their workers
are forked from a preloaded zygote instead; such a run is terminated (the UI's Terminate, Ctrl-C) by an
interrupt to its worker, which marks it canceled as Dagster's own worker does.
"""

from __future__ import annotations

import os
import signal
import socket

import dagster as dg
import psutil
from dagster._core.launcher import CheckRunHealthResult, LaunchRunContext, WorkerStatus
from dagster._core.storage.dagster_run import DagsterRun, DagsterRunStatus

from pipelines.run.forked_runs import open_forker
from pipelines.run_tags import FORKED_TAG, FORKS_TAG, HOST_TAG



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
    """`DefaultRunLauncher` that answers run monitoring's health check from the worker's pid, and forks the
    workers of a `mobileforge run`'s runs."""

    def launch_run(self, context: LaunchRunContext) -> None:
        run, forker = context.dagster_run, open_forker(self._instance)
        if forker is None or not forker.runs(run):
            super().launch_run(context)
            return
        self._instance.add_run_tags(run.run_id, {FORKED_TAG: "true", HOST_TAG: socket.gethostname()})
        forker.fork(run.run_id, shares_forkserver=run.tags.get(FORKS_TAG) == "true")

    def terminate(self, run_id: str) -> bool:
        run = self._instance.get_run_by_id(run_id)
        if run is None or run.tags.get(FORKED_TAG) != "true":
            return super().terminate(run_id)
        worker = run_worker(self._instance, run_id)
        if (run.status not in (DagsterRunStatus.STARTING, DagsterRunStatus.STARTED) or worker is None
                or run.tags.get(HOST_TAG) != socket.gethostname() or not worker_alive(*worker)):
            return False
        self._instance.report_run_canceling(run)
        os.kill(worker[0], signal.SIGTERM)  # the worker's interrupt handler (SIGTERM = SIGINT) cancels the run
        return True

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
