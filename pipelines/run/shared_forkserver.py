"""One multiprocessing forkserver for all the run workers of a zygote (pipelines.run.zygote).

A stage that starts processes (the training stage's multiprocess executor, the rollout and benchmark worker pools)
starts them from a forkserver that has imported the graph, torch, transformers and the trainers once. multiprocessing
starts that server per process on first use, so each run worker would start its own and import all of it again:
7-11 CPU s per stage, on the experiment's critical path (benchmarks/step_process_start.py). The zygote starts one
server when it is sent the first run of a stage that starts processes, and the workers it forks inherit the server's
socket and alive pipe.

A code location opts in by declaring `FORKSERVER_PRELOAD` (the modules its step processes import); the server
preloads those, and so does the zygote itself then (those stages' run workers use most of them in-process too). multiprocessing offers no way for a process to use a server it did not start: it checks its server
with `waitpid`, which only the server's parent may call. `adopt` replaces that check in a forked worker.
"""

from __future__ import annotations

import os
import signal
from multiprocessing import forkserver, get_context, resource_tracker

PRELOAD_ATTRIBUTE = "FORKSERVER_PRELOAD"


def start(preload: list[str]) -> int:
    """In the zygote: start this process's forkserver, importing `preload` (in its own process, while the
    zygote goes on); its pid."""
    get_context("forkserver").set_forkserver_preload(preload)
    forkserver.ensure_running()
    return forkserver._forkserver._forkserver_pid


def stop(pid: int) -> None:
    """In the zygote, once its workers have ended: stop the server now, even amid its imports (it would
    otherwise finish them before it sees that no process holds its alive pipe), and collect it."""
    try:
        os.kill(pid, signal.SIGTERM)
        os.waitpid(pid, 0)
    except (ProcessLookupError, ChildProcessError):  # it had ended, and been collected
        pass


def adopt() -> None:
    """In a worker forked from a zygote that started a server: use that server while it runs, else start one
    of the worker's own, as multiprocessing would."""
    server = forkserver._forkserver
    inherited = server._forkserver_pid
    if inherited is None:
        return
    own_check = type(server).ensure_running

    def ensure_running() -> None:
        with server._lock:
            if server._forkserver_pid == inherited:
                if _running(inherited):
                    resource_tracker.ensure_running()
                    return
                os.close(server._forkserver_alive_fd)
                server._forkserver_address = server._forkserver_alive_fd = server._forkserver_pid = None
        own_check(server)

    server.ensure_running = ensure_running  # connect_to_new_process calls it through the instance


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)  # the zygote reaps its children at once: an ended server leaves no zombie behind
    except ProcessLookupError:
        return False
    return True
