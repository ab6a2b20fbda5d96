"""Runs a killed `mobileforge run` left unfinished (Dagster would show them STARTED forever) are
marked failed by the next start; one whose worker still runs blocks it instead.

The run records are fabricated (a run created with the tags run_experiment puts on its runs, the
worker's "Started process" engine event with a real pid); the whole command killed mid-run is
not part of this file: a CI-sized run takes minutes here, not the ~60 s budget."""

from __future__ import annotations

import socket
import subprocess
import sys

import dagster as dg
import pytest
from dagster._core.events import EngineEventData
from dagster._core.storage.dagster_run import DagsterRunStatus
from dagster._core.test_utils import create_run_for_test

from pipelines.run.sweep import sweep_abandoned_runs
from pipelines.run_tags import EXPERIMENT_TAG, HOST_TAG
from resources.experiment_lock import ExperimentBusy
from resources.storage import StorageLocation
from tests.resources.storage.test_storage_integrity import _attempt


def _run(instance: dg.DagsterInstance, experiment: str, pid: int | None, host: str | None = None,
         status: DagsterRunStatus = DagsterRunStatus.STARTED) -> str:
    run = create_run_for_test(instance, job_name="interaction", status=status,
                              tags={EXPERIMENT_TAG: experiment, HOST_TAG: host or socket.gethostname(),
                                    "dagster/partition": experiment})
    if pid is not None:
        instance.report_engine_event(f"Started process for run (pid: {pid}).", run, EngineEventData.in_process(pid))
    return run.run_id


def _dead_pid() -> int:
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def test_runs_whose_process_is_gone_are_marked_failed(tmp_path):
    with dg.instance_for_test(temp_dir=str(tmp_path)) as instance:
        dead = _dead_pid()
        killed = _run(instance, "exp", dead)
        never_started = _run(instance, "exp", None, status=DagsterRunStatus.STARTING)
        other_experiment = _run(instance, "other", dead)
        other_host = _run(instance, "exp", dead, host="elsewhere")
        finished = _run(instance, "exp", dead, status=DagsterRunStatus.SUCCESS)

        lines = sweep_abandoned_runs(instance, "exp")

        status = {run_id: instance.get_run_by_id(run_id).status
                  for run_id in (killed, never_started, other_experiment, other_host, finished)}
        assert status == {killed: DagsterRunStatus.FAILURE, never_started: DagsterRunStatus.FAILURE,
                          other_experiment: DagsterRunStatus.STARTED, other_host: DagsterRunStatus.STARTED,
                          finished: DagsterRunStatus.SUCCESS}
        assert sorted(lines) == sorted([
            f"run {killed} (interaction exp) was left STARTED but its process (pid {dead}) is gone: marked failed",
            f"run {never_started} (interaction exp) was left STARTING but it never started a process: marked failed"])
        failure = instance.all_logs(killed, of_type=dg.DagsterEventType.RUN_FAILURE)[-1]
        assert "killed or crashed without cleanup" in failure.dagster_event.message
        assert sweep_abandoned_runs(instance, "exp") == []  # nothing left to sweep


def test_a_run_whose_worker_still_runs_blocks_the_next_start(tmp_path):
    worker = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        with dg.instance_for_test(temp_dir=str(tmp_path)) as instance:
            run_id = _run(instance, "exp", worker.pid)
            with pytest.raises(ExperimentBusy, match=f"run {run_id} .* still runs \\(pid {worker.pid}\\)"):
                sweep_abandoned_runs(instance, "exp")
            assert instance.get_run_by_id(run_id).status == DagsterRunStatus.STARTED
    finally:
        worker.kill()
        worker.wait()


def test_the_resume_counts_the_staged_attempts_by_stage(tmp_path):
    location = StorageLocation(root=str(tmp_path))
    for stage, attempts in (("rollouts", (1, 2, 3)), ("benchmark/base", (1,))):
        store = location.attempt_store("exp", stage)
        for attempt in attempts:
            store.save(_attempt(attempt))
    assert location.staged_attempts("exp") == {"rollouts": 3, "benchmark/base": 1}
    assert location.staged_attempts("never-run") == {}
