"""While `mobileforge run` launches its code location's runs, their workers are forked from a zygote that has
imported the location once (pipelines.run.forked_runs); the runs behave as runs Dagster's code server
starts: they succeed, report their worker's pid, and are canceled when terminated. Runs on an instance
with another launcher start as Dagster starts them."""

from __future__ import annotations

import gc
import json
import signal
import sys
import time
from pathlib import Path

import dagster as dg
import psutil
import pytest
from dagster._core.storage.dagster_run import DagsterRunStatus

from pipelines.run.forked_runs import RunForker, ZygoteFailed, open_forker
from pipelines.run.launcher import FINISHED, LOCATION, code_location_runner
from pipelines.run.monitored_launcher import run_worker, worker_alive
from pipelines.run_tags import FORKED_TAG
from pipelines.start_point import StagePart
from tests.support import tiny_location
from tests.support.instances import project_instance

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> Path:
    directory = tmp_path_factory.mktemp("tiny_location")
    return tiny_location.write_workspace(directory / "workspace.yaml", LOCATION)


@pytest.fixture(scope="module")
def forking(workspace, tmp_path_factory):
    """The project's instance, and a runner of the tiny location forking its runs (the zygote and the code
    server started once for the module's tests)."""
    directory = tmp_path_factory.mktemp("forking")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TINY_LOCATION_REPORT", str(directory / "report.json"))
        with project_instance(str(directory)) as instance, code_location_runner(instance, workspace) as runner:
            yield instance, runner, directory / "report.json"


def _part(job: str) -> StagePart:
    return StagePart.whole(tiny_location.defs.resolve_job_def(job))


def _wait(instance: dg.DagsterInstance, run_id: str, statuses: set[DagsterRunStatus]) -> DagsterRunStatus:
    deadline = time.monotonic() + 120
    while (status := instance.get_run_by_id(run_id).status) not in statuses:
        assert time.monotonic() < deadline, status
        time.sleep(0.1)
    return status


def test_a_run_worker_is_forked_from_the_zygote_and_its_run_succeeds(forking):
    instance, runner, report_file = forking
    run_id = runner.launch(_part("quick"), None, {})
    assert _wait(instance, run_id, FINISHED) == DagsterRunStatus.SUCCESS
    report = json.loads(report_file.read_text())
    assert report["parent"] == open_forker(instance)._process.pid
    assert run_worker(instance, run_id)[0] == report["pid"]  # the pid run monitoring reads
    assert instance.get_run_by_id(run_id).tags[FORKED_TAG] == "true"


def test_terminating_a_forked_run_cancels_it(forking):
    instance, runner, _ = forking
    run_id = runner.launch(_part("slow"), None, {})
    _wait(instance, run_id, {DagsterRunStatus.STARTED})
    while run_worker(instance, run_id) is None:
        time.sleep(0.1)
    assert instance.run_launcher.terminate(run_id)
    assert _wait(instance, run_id, FINISHED) == DagsterRunStatus.CANCELED
    worker = run_worker(instance, run_id)
    deadline = time.monotonic() + 30
    while worker_alive(*worker):  # the zygote collects it: no zombie left for run monitoring to misread
        assert time.monotonic() < deadline
        time.sleep(0.1)
    assert not instance.run_launcher.terminate(run_id)  # finished: nothing to terminate


def _forked_servers(zygote_pid: int, workers: tuple[int, ...] = ()) -> list[psutil.Process]:
    """The zygote's children forked from it (its command line) that are not run workers."""
    zygote = psutil.Process(zygote_pid)
    return [child for child in zygote.children() if child.pid not in workers and child.cmdline() == zygote.cmdline()]


def test_runs_whose_steps_fork_share_one_forkserver_of_the_zygote(forking):
    instance, runner, report_file = forking
    zygote = psutil.Process(open_forker(instance)._process.pid)
    first_launched, runs = time.time(), []
    for _ in range(2):
        runs.append(runner.launch(_part("forking"), None, {}))
        assert _wait(instance, runs[-1], FINISHED) == DagsterRunStatus.SUCCESS
    steps = [json.loads(line) for line in Path(f"{report_file}.steps").read_text().splitlines()]
    assert len(steps) == 2 and steps[0]["pid"] != steps[1]["pid"]
    server = psutil.Process(steps[0]["parent"])
    assert steps[1]["parent"] == server.pid  # one server for both runs' step processes
    # forked from the zygote (it imported nothing of its own), not a run's worker, and only for the first such run
    assert server.ppid() == zygote.pid and server.cmdline() == zygote.cmdline()
    assert server.pid not in {run_worker(instance, run_id)[0] for run_id in runs}
    assert server.create_time() >= first_launched - 0.5


# a launching process may ignore SIGTERM (an exec'd child keeps that): the zygote and its server must not
@pytest.mark.parametrize("launcher_sigterm", [signal.SIG_DFL, signal.SIG_IGN], ids=["default", "ignored"])
def test_a_closed_zygote_stops_its_forkserver(tmp_path, launcher_sigterm):
    with project_instance(str(tmp_path)) as instance:
        before = signal.signal(signal.SIGTERM, launcher_sigterm)
        try:
            forker = RunForker("tests.support.tiny_location", sys.executable, str(REPO), instance)
        finally:
            signal.signal(signal.SIGTERM, before)
        worker = forker.fork("no-such-run", shares_forkserver=True)  # it fails at once; the server is started
        servers = _forked_servers(forker._process.pid, (worker,))
        forker.close()
        zygote_ended = forker._process.poll() is not None
    assert len(servers) == 1 and not servers[0].is_running() and zygote_ended


def test_runs_on_an_instance_with_dagsters_launcher_start_from_the_code_server(workspace, tmp_path, monkeypatch):
    monkeypatch.setenv("TINY_LOCATION_REPORT", str(tmp_path / "report.json"))
    with dg.instance_for_test(temp_dir=str(tmp_path)) as instance, \
            code_location_runner(instance, workspace) as runner:
        assert open_forker(instance) is None
        run_id = runner.launch(_part("quick"), None, {})
        assert _wait(instance, run_id, FINISHED) == DagsterRunStatus.SUCCESS
        assert FORKED_TAG not in instance.get_run_by_id(run_id).tags
        spawned_by = psutil.Process(json.loads((tmp_path / "report.json").read_text())["parent"]).cmdline()
        assert spawned_by[1:5] == ["-m", "dagster", "api", "grpc"], spawned_by  # the code server


def test_a_zygote_that_cannot_import_its_location_says_why(tmp_path):
    with project_instance(str(tmp_path)) as instance:
        forker = RunForker("tests.support.no_such_location", sys.executable, str(REPO), instance)
        try:
            with pytest.raises(ZygoteFailed, match="importing tests.support.no_such_location: ModuleNotFoundError"):
                forker.fork("a-run")
        finally:
            forker.close()


def test_a_zygote_that_died_says_so_at_the_next_run(tmp_path):
    with project_instance(str(tmp_path)) as instance:
        forker = RunForker("tests.support.tiny_location", sys.executable, str(REPO), instance)
        try:
            forker._process.kill()
            with pytest.raises(ZygoteFailed, match=r"failed: it exited \(code -9\)"):
                forker.fork("a-run")
        finally:
            forker.close()


@pytest.mark.parametrize("module", ["json", "tests.support.no_such_location"])
def test_the_zygote_collects_garbage_again_after_importing(module, monkeypatch):
    from pipelines.run import zygote

    monkeypatch.setattr(zygote.threading, "active_count", lambda: 1)  # a zygote's one thread, not this worker's
    assert gc.isenabled()
    error = zygote._imported([module])
    assert (error is None) == (module == "json")
    assert gc.isenabled()  # its workers would otherwise never collect
