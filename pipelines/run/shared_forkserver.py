"""One multiprocessing forkserver for all the run workers of a zygote (pipelines.run.zygote).

A stage that starts processes (the training stage's multiprocess executor, the rollout and benchmark worker pools)
starts them from a forkserver that has imported the graph, torch, transformers and the trainers once. multiprocessing
starts that server per process on first use, as a new interpreter, so each run worker would start its own and import
all of it again: 7-11 CPU s per stage, on the experiment's critical path (benchmarks/step_process_start.py).

A code location opts in by declaring `FORKSERVER_PRELOAD` (the modules its step processes import). When the zygote
is sent the first run of a stage that starts processes, it imports those itself (that stage's run worker uses most
of them in-process: policies, critics) and forks the server from itself, so the server imports nothing; the workers
it forks from then on inherit the server's socket and alive pipe. multiprocessing offers no way for a process to use
a server it did not start (it checks its server with `waitpid`, which only the server's parent may call), nor to
start one by fork: `start` does what its `ensure_running` does, with a fork for the exec, and `adopt` replaces the
check in a forked worker.
"""

from __future__ import annotations

import os
import signal
import socket
from multiprocessing import connection, forkserver, resource_tracker

PRELOAD_ATTRIBUTE = "FORKSERVER_PRELOAD"


def start() -> int:
    """In the zygote, single-threaded, after importing what the server is to have: fork the server and make it
    this process's forkserver; its pid."""
    resource_tracker.ensure_running()  # each process the server starts reports to it
    with socket.socket(socket.AF_UNIX) as listener:
        address = connection.arbitrary_address("AF_UNIX")
        listener.bind(address)
        os.chmod(address, 0o600)
        listener.listen()
        alive_r, alive_w = os.pipe()
        pid = os.fork()
        if pid == 0:
            _serve(listener.fileno(), alive_r)
        os.close(alive_r)
    server = forkserver._forkserver
    server._forkserver_address, server._forkserver_alive_fd, server._forkserver_pid = address, alive_w, pid
    return pid


def _serve(listener_fd: int, alive_r: int) -> None:
    """In the forked server: what an exec'd one would have, the two descriptors and default signal handlers (its
    own; the processes it starts get these back); then multiprocessing's server loop, never returning."""
    try:
        kept = sorted({0, 1, 2, listener_fd, alive_r})
        for low, high in zip(kept, [*kept[1:], os.sysconf("SC_OPEN_MAX")]):
            os.closerange(low + 1, high)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        forkserver.main(listener_fd, alive_r, [])
    finally:
        os._exit(0)


def stop(pid: int) -> None:
    """In the zygote, once its workers have ended: stop the server and collect it (it would otherwise wait for
    the zygote's own end, which holds its alive pipe)."""
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
