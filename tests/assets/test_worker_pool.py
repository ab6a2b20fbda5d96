"""Workers forked from the pool's forkserver: the caller's environment at each call, not the server's."""

import os

from assets.worker_pool import run_in_workers

PROBE = "MOBILEFORGE_WORKER_POOL_PROBE"


def _probe_value(name: str, log) -> tuple[str | None, int]:
    log(f"worker {os.getpid()}")
    return os.environ.get(name), os.getpid()


def test_workers_see_the_callers_environment_of_each_call(monkeypatch):
    lines: list[str] = []
    monkeypatch.setenv(PROBE, "first")
    first = run_in_workers(_probe_value, [PROBE, PROBE], 2, lines.append)
    monkeypatch.setenv(PROBE, "second")  # the forkserver kept the environment it started with
    second = run_in_workers(_probe_value, [PROBE, PROBE], 2, lines.append)
    assert [value for value, _ in first] == ["first", "first"]
    assert [value for value, _ in second] == ["second", "second"]
    assert os.getpid() not in {pid for _, pid in first + second}  # they ran in worker processes
    assert len(lines) == 4 and all(line.startswith("worker ") for line in lines)
