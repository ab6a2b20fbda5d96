"""The instance `mobileforge run` writes lets Dagster's run monitoring (the daemon `dagster dev`
runs) mark a run failed once its worker process is gone, without waiting for the next
`mobileforge run`: its launcher answers the health check from the worker's pid. One monitoring
iteration runs here as the daemon runs it."""

from __future__ import annotations

import logging
import socket
import subprocess
import sys

import dagster as dg
from dagster._core.events import EngineEventData
from dagster._core.storage.dagster_run import DagsterRunStatus
from dagster._core.test_utils import create_run_for_test
from dagster._core.workspace.context import WorkspaceProcessContext
from dagster._core.workspace.load_target import EmptyWorkspaceTarget
from dagster._daemon.monitoring.run_monitoring import execute_run_monitoring_iteration

from pipelines.run.instance import INSTANCE_SETTINGS, default_instance
from pipelines.run.monitored_launcher import MonitoredRunLauncher
from pipelines.run_tags import HOST_TAG


def _started_run(instance: dg.DagsterInstance, pid: int, host: str | None = None) -> str:
    run = create_run_for_test(instance, job_name="interaction", status=DagsterRunStatus.STARTED,
                              tags={HOST_TAG: host or socket.gethostname()})
    instance.report_engine_event(f"Started process for run (pid: {pid}).", run, EngineEventData.in_process(pid))
    return run.run_id


def test_a_run_whose_worker_is_gone_is_marked_failed_by_run_monitoring(tmp_path, monkeypatch):
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path))
    (tmp_path / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")  # what earlier versions wrote
    instance = default_instance()
    assert (tmp_path / "dagster.yaml").read_text() == INSTANCE_SETTINGS
    assert isinstance(instance.run_launcher, MonitoredRunLauncher) and instance.run_monitoring_enabled
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    alive = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    try:
        killed = _started_run(instance, gone.pid)
        running = _started_run(instance, alive.pid)
        elsewhere = _started_run(instance, gone.pid, host="another-host")
        with WorkspaceProcessContext(instance, EmptyWorkspaceTarget()) as context:
            list(execute_run_monitoring_iteration(context, logging.getLogger("run_monitoring")))
        status = {run_id: instance.get_run_by_id(run_id).status for run_id in (killed, running, elsewhere)}
    finally:
        alive.kill()
        alive.wait()
    assert status == {killed: DagsterRunStatus.FAILURE, running: DagsterRunStatus.STARTED,
                      elsewhere: DagsterRunStatus.STARTED}
    failure = instance.all_logs(killed, of_type=dg.DagsterEventType.RUN_FAILURE)[-1]
    assert f"its run worker (pid {gone.pid}) is gone" in failure.dagster_event.message


def test_a_users_own_instance_settings_are_kept(tmp_path, monkeypatch):
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path))
    (tmp_path / "dagster.yaml").write_text("telemetry:\n  enabled: true\n")
    default_instance()
    assert (tmp_path / "dagster.yaml").read_text() == "telemetry:\n  enabled: true\n"
