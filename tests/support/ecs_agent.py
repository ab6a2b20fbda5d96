"""A local stand-in for ECS's container agent, for tests against moto's ECS server: it watches a
cluster for tasks moto has accepted, runs each task's container command (with the task's
environment overrides) as a subprocess on this machine, and stops the task in moto when the
command exits, recording its exit code in the stop reason. Moto keeps the ECS API's state; this
agent is what actually runs the containers' work."""

from __future__ import annotations

import os
import subprocess
import threading
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class RanTask:
    arn: str
    command: list[str]
    environment: dict[str, str]
    returncode: int | None = None
    output: str = ""


@dataclass
class LocalEcsAgent:
    """Runs the tasks of `cluster` (a boto3 ECS client `ecs` on moto) as subprocesses with `base_env`."""

    ecs: object
    cluster: str
    base_env: dict[str, str]
    cwd: Path
    poll_s: float = 0.3
    tasks: list[RanTask] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None
    _workers: list[threading.Thread] = field(default_factory=list)

    def __enter__(self) -> LocalEcsAgent:
        self._thread = threading.Thread(target=self._loop, name="local-ecs-agent", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=30)
        for worker in self._workers:  # a run is finished a moment before its task's process exits
            worker.join(timeout=120)

    def _loop(self) -> None:
        seen: set[str] = set()
        while not self._stop.wait(self.poll_s):
            arns = self.ecs.list_tasks(cluster=self.cluster, desiredStatus="RUNNING")["taskArns"]
            for arn in [arn for arn in arns if arn not in seen]:
                seen.add(arn)
                (task,) = self.ecs.describe_tasks(cluster=self.cluster, tasks=[arn])["tasks"]
                worker = threading.Thread(target=self._run, args=(task,), daemon=True)
                self._workers.append(worker)
                worker.start()

    def _run(self, task: dict) -> None:
        (override, *_) = task["overrides"]["containerOverrides"]
        environment = {item["name"]: item["value"] for item in override.get("environment", [])}
        ran = RanTask(task["taskArn"], list(override["command"]), environment)
        self.tasks.append(ran)
        process = subprocess.run(ran.command, cwd=self.cwd, env={**os.environ, **self.base_env, **environment},
                                 capture_output=True, text=True, timeout=600)
        ran.returncode, ran.output = process.returncode, (process.stdout + process.stderr)[-4000:]
        self.ecs.stop_task(cluster=self.cluster, task=task["taskArn"], reason=f"exit code {process.returncode}")
