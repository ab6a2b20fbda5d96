"""Runs a killed `mobileforge run` left unfinished, found and marked failed by the next one."""

from __future__ import annotations

import socket

import dagster as dg
import psutil
from dagster._core.storage.dagster_run import DagsterRunStatus

from pipelines.run_tags import EXPERIMENT_TAG, HOST_TAG
from resources.experiment_lock import ExperimentBusy

UNFINISHED = [DagsterRunStatus.NOT_STARTED, DagsterRunStatus.STARTING, DagsterRunStatus.STARTED,
              DagsterRunStatus.CANCELING]


def _worker(instance: dg.DagsterInstance, run_id: str) -> tuple[int, float] | None:
    """(pid, time it reported) of a run's worker process, from its "Started process" event."""
    records = instance.get_records_for_run(run_id, of_type=dg.DagsterEventType.ENGINE_EVENT, limit=50).records
    for record in records:
        metadata = getattr(record.event_log_entry.dagster_event.event_specific_data, "metadata", None) or {}
        if "pid" in metadata:
            return int(metadata["pid"].value), record.event_log_entry.timestamp
    return None


def _alive(pid: int, reported_at: float) -> bool:
    """Whether process `pid` of this host is the one that reported at `reported_at` and still runs
    (a pid reused by a later process does not count)."""
    try:
        process = psutil.Process(pid)
        return process.status() != psutil.STATUS_ZOMBIE and process.create_time() <= reported_at + 1
    except psutil.NoSuchProcess:
        return False


def sweep_abandoned_runs(instance: dg.DagsterInstance, experiment: str) -> list[str]:
    """Mark failed every unfinished run `mobileforge run` launched for `experiment` on this host
    whose process is gone (killed or crashed without cleanup: Dagster would show it STARTED
    forever); returns one line per run marked. Call it holding the experiment's lock: a run whose
    worker still runs then outlived its launcher, and raises ExperimentBusy rather than letting
    two runs write at once."""
    host = socket.gethostname()
    lines = []
    records = instance.get_run_records(dg.RunsFilter(statuses=UNFINISHED, tags={EXPERIMENT_TAG: experiment}))
    for record in records:
        run = record.dagster_run
        if run.tags.get(HOST_TAG) != host:
            continue
        worker = _worker(instance, run.run_id)
        partition = run.tags.get("dagster/partition", "")
        what = f"run {run.run_id} ({run.job_name}{' ' + partition if partition else ''})"
        if worker is not None and _alive(*worker):
            raise ExperimentBusy(f"{what} of experiment {experiment!r} still runs (pid {worker[0]}) though the command "
                                 "that launched it is gone; wait for it to finish or terminate it (dagster dev, Runs)")
        gone = f"its process (pid {worker[0]}) is gone" if worker else "it never started a process"
        instance.report_run_failed(run, f"marked failed by the next `mobileforge run` of {experiment!r}: {gone} "
                                        "(killed or crashed without cleanup)")
        lines.append(f"{what} was left {run.status.value} but {gone}: marked failed")
    return lines
