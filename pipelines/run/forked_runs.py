"""Run workers forked from a preloaded process (pipelines.run.zygote) while a `mobileforge run` launches the
runs of its code location; everywhere else (the UI, the daemon, another launcher configured in
dagster.yaml) runs start as Dagster starts them.

`code_location_runner` opens `forked_runs` beside the code server: the zygote imports what the code server
imports, from the same executable, working directory and environment, so a forked worker runs the code a
spawned one would. The instance's launcher (pipelines.run.monitored_launcher) forks through the open one.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import dagster as dg
from dagster._core.remote_origin import ManagedGrpcPythonEnvCodeLocationOrigin
from dagster._core.storage.dagster_run import DagsterRun
from dagster._serdes import serialize_value

# What every worker imports before it runs: the run command, then the instance's storages and launcher.
_RUN_COMMAND = "dagster._cli.api"
CLOSE_SECONDS = 30  # a closed zygote exits once its workers have; this long it is waited for


class ZygoteFailed(RuntimeError):
    """The zygote could not start or answer: the run it was to fork has not started."""


class RunForker:
    """Client of one zygote: forks a worker per run of the code location it preloaded."""

    def __init__(self, module: str, executable: str, working_directory: str, instance: dg.DagsterInstance):
        self.module, self.executable = module, executable
        ref = instance.get_ref()
        self._instance_ref = serialize_value(ref)
        storages = [field.module_name for field in ref if hasattr(field, "module_name")]
        command_read, command_write = os.pipe()
        reply_read, reply_write = os.pipe()
        self._process = subprocess.Popen(
            [executable, "-m", "pipelines.run.zygote", str(command_read), str(reply_write),
             _RUN_COMMAND, *dict.fromkeys(storages), module],
            cwd=working_directory, pass_fds=(command_read, reply_write))
        os.close(command_read)
        os.close(reply_write)
        self._commands = os.fdopen(command_write, "w", buffering=1)
        self._replies = os.fdopen(reply_read)
        self._ready = False
        self._lock = threading.Lock()

    def runs(self, run: DagsterRun) -> bool:
        """Whether `run` is of the code location this zygote preloaded (same module and executable)."""
        origin = run.job_code_origin
        if origin is None:
            return False
        repository = origin.repository_origin
        return (getattr(repository.code_pointer, "module", None) == self.module
                and repository.executable_path == self.executable)

    def fork(self, run_id: str, shares_forkserver: bool = False) -> int:
        """Fork the worker of run `run_id` (a run of the instance this forker was opened for); its pid.
        `shares_forkserver`: its steps start processes, from the zygote's forkserver (made for the first such run)."""
        request = json.dumps({"run_id": run_id, "instance_ref": self._instance_ref, "forkserver": shares_forkserver})
        with self._lock:
            if not self._ready:
                self._ready = bool(self._reply("ready"))
            try:
                self._commands.write(request + "\n")
            except BrokenPipeError:
                self._reply("pid")  # says how it ended
            return int(self._reply("pid"))

    def _reply(self, key: str) -> object:
        line = self._replies.readline()
        reply = json.loads(line) if line else {"error": f"it exited (code {self._process.wait()})"}
        if key not in reply:
            raise ZygoteFailed(f"the run-worker zygote (pid {self._process.pid}) failed: {reply.get('error', reply)}")
        return reply[key]

    def close(self) -> None:
        """End the zygote's input: it exits once its workers have finished."""
        for pipe in (self._commands, self._replies):
            try:
                pipe.close()
            except BrokenPipeError:  # it had exited already
                pass
        try:
            self._process.wait(timeout=CLOSE_SECONDS)
        except subprocess.TimeoutExpired:
            pass  # workers still run (e.g. interrupted runs winding down); it exits after them


_OPEN: list[tuple[dg.DagsterInstance, RunForker]] = []


def open_forker(instance: dg.DagsterInstance) -> RunForker | None:
    """The forker of the innermost `forked_runs` block of `instance` this process is in, if any."""
    return next((forker for opened, forker in reversed(_OPEN) if opened is instance), None)


@contextmanager
def forked_runs(origin: object, instance: dg.DagsterInstance) -> Iterator[RunForker | None]:
    """While open, the launcher of `instance` forks the runs of the code location `origin` (a Python module
    loaded by a code server Dagster manages) from a zygote; for any other kind of location, nothing."""
    if not isinstance(origin, ManagedGrpcPythonEnvCodeLocationOrigin) or not origin.loadable_target_origin.module_name:
        yield None
        return
    target = origin.loadable_target_origin
    forker = RunForker(target.module_name, target.executable_path or sys.executable,
                       target.working_directory or os.getcwd(), instance)
    _OPEN.append((instance, forker))
    try:
        yield forker
    finally:
        _OPEN.remove((instance, forker))
        forker.close()
