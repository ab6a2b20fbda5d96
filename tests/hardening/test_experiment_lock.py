"""One writer per (storage root, experiment): a second holder is refused with the owner named; a
lock left by a killed process is taken over with a line saying so; other experiments and roots
are independent."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from resources.experiment_lock import ExperimentBusy, experiment_lock, lock_path, refuse_if_held

REPO = Path(__file__).resolve().parents[2]
HOLD = """
import sys, time
from resources.experiment_lock import experiment_lock
with experiment_lock(sys.argv[1], "exp"):
    print("held", flush=True)
    time.sleep(120)
"""


def test_a_second_holder_is_refused_naming_the_owner_and_a_clean_release_frees_it(tmp_path):
    root = str(tmp_path / "storage")
    with experiment_lock(root, "exp") as owner:
        recorded = json.loads(lock_path(root, "exp").read_text())
        assert recorded["pid"] == os.getpid() and recorded["run"] == owner.run
        with pytest.raises(ExperimentBusy) as caught:
            with experiment_lock(root, "exp"):
                pass
        message = str(caught.value)
        assert (f"experiment 'exp' is being materialized by run {owner.run} (pid {os.getpid()} on {owner.host} "
                f"since {owner.started_at}") in message
        assert "wait for it to finish or use another --experiment" in message
        with experiment_lock(root, "other"), experiment_lock(str(tmp_path / "elsewhere"), "exp"):
            pass  # other experiments and other roots are independent
    assert lock_path(root, "exp").read_text() == ""  # released cleanly: no owner left behind
    lines: list[str] = []
    with experiment_lock(root, "exp", report=lines.append):
        pass
    assert lines == []


def test_a_lock_left_by_a_killed_process_is_taken_over_with_a_line(tmp_path):
    root = str(tmp_path / "storage")
    holder = subprocess.Popen([sys.executable, "-c", HOLD, root], cwd=REPO, stdout=subprocess.PIPE, text=True,
                              env={**os.environ, "PYTHONPATH": str(REPO)})
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(ExperimentBusy, match=f"pid {holder.pid} "):
            with experiment_lock(root, "exp"):
                pass
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=30)
    lines: list[str] = []
    start = time.perf_counter()
    with experiment_lock(root, "exp", report=lines.append) as owner:
        assert owner.pid == os.getpid()
    assert time.perf_counter() - start < 1.0
    (line,) = lines
    assert "taking over the lock of run" in line and f"pid {holder.pid} " in line
    assert "ended without releasing it" in line


def test_unsafe_experiment_names_get_no_lock_file(tmp_path):
    with pytest.raises(ValueError, match="experiment"):
        lock_path(str(tmp_path), "../escape")


def test_refuse_if_held_names_a_live_owner_and_creates_nothing(tmp_path):
    root = str(tmp_path / "storage")
    refuse_if_held(root, "exp")  # no lock file: free
    assert not (tmp_path / "storage").exists()
    with experiment_lock(root, "exp") as owner:
        with pytest.raises(ExperimentBusy, match=f"by run {owner.run} \\(pid {os.getpid()} "):
            refuse_if_held(root, "exp")
    refuse_if_held(root, "exp")  # released cleanly


def test_a_busy_experiment_is_refused_before_the_graph_is_imported(tmp_path):
    """`mobileforge run` of an experiment a live run holds is refused from the lock's owner record,
    before Dagster or torch is imported (the lock itself is taken after the import: 7 s idle, a
    minute or more on a loaded machine)."""
    root = str(tmp_path / "storage")
    holder = subprocess.Popen([sys.executable, "-c", HOLD, root], cwd=REPO, stdout=subprocess.PIPE, text=True,
                              env={**os.environ, "PYTHONPATH": str(REPO)})
    try:
        assert holder.stdout.readline().strip() == "held"
        probe = ("import sys\nfrom mobileforge.cli.main import cli\ntry:\n    cli(['run', '--experiment', 'exp'])\n"
                 "finally:\n    print('imported:', sorted(m for m in ('dagster', 'torch') if m in sys.modules), "
                 "file=sys.stderr)\n")
        env = {**os.environ, "DAGSTER_HOME": str(tmp_path / "dagster_home"), "MOBILEFORGE_STORAGE_ROOT": root}
        start = time.perf_counter()
        result = subprocess.run([sys.executable, "-c", probe], cwd=REPO, env=env, capture_output=True, text=True,
                                timeout=300)
        print(f"\nrefused in {time.perf_counter() - start:.2f} s")
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=30)
    assert result.returncode == 1, result.stderr
    assert "experiment 'exp' is being materialized by run" in result.stderr and f"(pid {holder.pid} " in result.stderr
    assert "imported: []" in result.stderr
    assert not (tmp_path / "dagster_home").exists()
