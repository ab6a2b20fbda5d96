"""A `mobileforge run` killed with SIGKILL mid-run (its whole process group: launcher, code server,
run workers) leaves its Dagster run STARTED; the next `mobileforge run` of the experiment takes
over the lock, marks that run failed and says what it resumes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import dagster as dg
import pytest
import yaml
from dagster._core.storage.dagster_run import DagsterRunStatus

from tests.pipelines.test_end_to_end import FAST

REPO = Path(__file__).resolve().parents[2]


def _started_runs(home: Path) -> list[str]:
    if not (home / "storage").exists():
        return []
    with dg.DagsterInstance.from_config(str(home)) as instance:
        return [run.run_id for run in instance.get_runs(dg.RunsFilter(statuses=[DagsterRunStatus.STARTED]))]


def _status(home: Path, run_id: str) -> DagsterRunStatus:
    with dg.DagsterInstance.from_config(str(home)) as instance:
        return instance.get_run_by_id(run_id).status


@pytest.mark.timeout(600)
def test_a_killed_run_is_marked_failed_by_the_next_start_which_says_what_it_resumes(tmp_path):
    home = tmp_path / "dagster_home"
    (tmp_path / "ci.yaml").write_text(yaml.safe_dump(FAST))
    env = {key: value for key, value in os.environ.items() if not key.startswith("MOBILEFORGE_")}
    env.update(DAGSTER_HOME=str(home), MOBILEFORGE_STORAGE_ROOT=str(tmp_path / "storage"), OMP_NUM_THREADS="1")
    command = [sys.executable, "-m", "mobileforge.cli.main", "run", "--experiment", "ci",
               "--config", str(tmp_path / "ci.yaml")]
    first = subprocess.Popen(command, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             start_new_session=True)
    try:
        deadline = time.monotonic() + 240
        started: list[str] = []
        while not started and first.poll() is None and time.monotonic() < deadline:
            time.sleep(1)
            started = _started_runs(home)
        assert started, "no run reached STARTED"
    finally:
        os.killpg(first.pid, signal.SIGKILL)  # no cleanup: the launcher, its code server and run workers
        first.wait()
    time.sleep(1)
    killed = _started_runs(home)  # a stage's runs start together: one or more
    assert killed and all(_status(home, run) == DagsterRunStatus.STARTED for run in killed)  # shown forever

    second = subprocess.Popen(command, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True, start_new_session=True)
    lines: list[str] = []
    try:
        for line in second.stdout:
            lines.append(line)
            if "resuming experiment 'ci'" in line or "Error" in line:
                break
    finally:
        os.killpg(second.pid, signal.SIGTERM)
        try:
            second.wait(timeout=60)
        except subprocess.TimeoutExpired:  # a loaded machine can take longer to stop the run's processes
            os.killpg(second.pid, signal.SIGKILL)
            second.wait()
    output = "".join(lines)
    print(output)
    assert "taking over the lock of run" in output and "ended without releasing it" in output
    assert all(f"run {run} " in output for run in killed) and "marked failed" in output
    assert "resuming experiment 'ci': finished attempts staged before the interruption:" in output
    assert all(_status(home, run) == DagsterRunStatus.FAILURE for run in killed)
