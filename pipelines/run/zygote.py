"""The parent of a `mobileforge run`'s run workers: a process that has imported Dagster, the code location
and the instance's storages once, and forks one run worker per run it is sent (as Android's zygote forks
apps). The worker then does what `dagster api execute_run` does (the path Dagster's container launchers
take): it reports its pid ("Started process for run") and executes the run from the run's stored origin.

A run worker spawned by Dagster's code server imports all of that afresh, about 2 CPU s and 2.5 s of wall
per run on a 2-core machine; forked from here it starts in milliseconds (pipelines.run.forked_runs).

    python -m pipelines.run.zygote COMMAND_FD REPLY_FD MODULE [MODULE ...]

Reads one JSON request per line from COMMAND_FD ({"run_id", "instance_ref", "forkserver"}), answers on REPLY_FD:
first {"ready": true} once MODULEs are imported, then {"pid": N} per request. At the end of its input it waits
for its workers, then exits.

If the last MODULE (the code location) declares `FORKSERVER_PRELOAD`, the first request with "forkserver" true
(a run whose steps start processes) also imports those modules and forks a multiprocessing forkserver from this
process, which every later worker uses (pipelines.run.shared_forkserver).
"""

from __future__ import annotations

import gc
import importlib
import json
import os
import signal
import sys
import threading
import traceback

from pipelines.run import shared_forkserver


def _reap(_signal: int | None = None, _frame: object = None) -> None:
    """Collect every finished worker, so none lingers as a zombie (run monitoring reads those as gone)."""
    while True:
        try:
            pid, _status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _execute(request: dict, inherited_fds: tuple[int, ...]) -> int:
    """In the forked worker: execute the run as `dagster api execute_run` does; its exit code."""
    for fd in inherited_fds:
        os.close(fd)
    shared_forkserver.adopt()
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # its own subprocesses are waited for by their callers
    signal.signal(signal.SIGINT, signal.default_int_handler)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    from dagster._cli.api import _execute_run_command_body
    from dagster._core.instance import DagsterInstance, InstanceRef
    from dagster._serdes import deserialize_value
    from dagster._utils.interrupts import capture_interrupts

    with capture_interrupts():  # SIGINT and SIGTERM become Dagster's interrupt: the run is marked canceled
        with DagsterInstance.from_ref(deserialize_value(request["instance_ref"], InstanceRef)) as instance:
            return _execute_run_command_body(request["run_id"], instance, lambda _event: None,
                                             set_exit_code_on_failure=False)


def _fork_worker(request: dict, inherited_fds: tuple[int, ...]) -> int:
    pid = os.fork()
    if pid:
        return pid
    code = 1
    try:
        code = _execute(request, inherited_fds)
    except BaseException:  # noqa: BLE001 - a worker must never return into the zygote's loop
        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def _imported(modules: list[str]) -> str | None:
    """Import `modules`, then freeze what they built; what stops this process from forking, if anything."""
    # what imports build lives as long as the process: automatic collections while importing would walk it in vain
    # (a sixth of the training preload's CPU)
    gc.disable()
    try:
        for module in modules:
            importlib.import_module(module)
    except Exception as error:  # noqa: BLE001 - said to the launcher, which reports it on the run it launches
        return f"importing {module}: {type(error).__name__}: {error}"
    finally:
        gc.enable()
    # fork copies only the calling thread: a lock another thread held would stay held in every worker
    if threading.active_count() != 1:
        return f"importing {modules} started threads ({[t.name for t in threading.enumerate()]}): cannot fork safely"
    # what is imported now is shared by every worker: frozen, the workers' garbage collections neither walk
    # it nor write to its pages (copy-on-write)
    gc.freeze()
    return None


def main(argv: list[str]) -> None:
    command_fd, reply_fd, *modules = argv
    command_fd, reply_fd = int(command_fd), int(reply_fd)
    # Ctrl-C reaches the whole process group: the workers stop their runs; the zygote stays to collect them
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # SIGTERM ends it and the forkserver it forks (how `shared_forkserver.stop` ends that), even where the launching
    # process ignored it (an ignored signal stays ignored across exec)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    replies = os.fdopen(reply_fd, "w", buffering=1)
    if error := _imported(modules):
        replies.write(json.dumps({"error": error}) + "\n")
        return
    signal.signal(signal.SIGCHLD, _reap)  # from now on its children are workers (and the forkserver)
    replies.write(json.dumps({"ready": True}) + "\n")
    preload = getattr(sys.modules[modules[-1]], shared_forkserver.PRELOAD_ATTRIBUTE, None)
    server, workers = None, []
    with os.fdopen(command_fd) as commands:
        for line in commands:
            request = json.loads(line)
            if request.get("forkserver") and preload and server is None:
                if error := _imported(list(preload)):
                    replies.write(json.dumps({"error": error}) + "\n")
                    break
                server = shared_forkserver.start()
            workers.append(_fork_worker(request, (command_fd, reply_fd)))
            replies.write(json.dumps({"pid": workers[-1]}) + "\n")
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    for pid in workers:
        try:
            os.waitpid(pid, 0)
        except ChildProcessError:  # reaped already
            pass
    if server is not None:
        shared_forkserver.stop(server)


if __name__ == "__main__":
    main(sys.argv[1:])
