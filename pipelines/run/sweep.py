"""Runs a killed `mobileforge run` left unfinished, found and marked failed by the next one."""

from __future__ import annotations

import socket

import dagster as dg
from dagster._core.storage.dagster_run import DagsterRunStatus

from pipelines.run.monitored_launcher import run_worker, worker_alive
from pipelines.run_tags import EXPERIMENT_TAG, HOST_TAG
from resources.experiment_lock import ExperimentBusy

UNFINISHED = [DagsterRunStatus.NOT_STARTED, DagsterRunStatus.STARTING, DagsterRunStatus.STARTED,
              DagsterRunStatus.CANCELING]


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
        worker = run_worker(instance, run.run_id)
        partition = run.tags.get("dagster/partition", "")
        what = f"run {run.run_id} ({run.job_name}{' ' + partition if partition else ''})"
        if worker is not None and worker_alive(*worker):
            raise ExperimentBusy(f"{what} of experiment {experiment!r} still runs (pid {worker[0]}) though the command "
                                 "that launched it is gone; wait for it to finish or terminate it (dagster dev, Runs)")
        gone = f"its process (pid {worker[0]}) is gone" if worker else "it never started a process"
        instance.report_run_failed(run, f"marked failed by the next `mobileforge run` of {experiment!r}: {gone} "
                                        "(killed or crashed without cleanup)")
        lines.append(f"{what} was left {run.status.value} but {gone}: marked failed")
    return lines
