"""What `run_experiment` tells its caller while it works, and the plain-line reporter."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Protocol

from dagster._core.storage.dagster_run import DagsterRun

class Observer(Protocol):
    """What `run_experiment` tells its caller while it works."""

    def stage_started(self, stage: str, runs: int) -> None: ...
    def run_message(self, stage: str, message: str) -> None: ...
    def run_finished(self, stage: str, run: DagsterRun, failed_checks: list[str]) -> None: ...
    def stage_finished(self, stage: str, seconds: float) -> None: ...
    def notice(self, message: str) -> None: ...


@dataclass
class LineObserver:
    """Reports as plain lines: one per stage start, failed check and stage end; a stage's latest
    run message at most every `status_every_s` seconds (None: messages dropped)."""

    log: Any = print
    status_every_s: float | None = None
    _last_status: dict[str, float] = field(default_factory=dict)

    def stage_started(self, stage: str, runs: int) -> None:
        self._last_status[stage] = time.monotonic()
        self.log(f"{stage}: {runs} run{'s' if runs != 1 else ''}")

    def run_message(self, stage: str, message: str) -> None:
        now = time.monotonic()
        if self.status_every_s is None or not message or now - self._last_status.get(stage, 0.0) < self.status_every_s:
            return
        self._last_status[stage] = now
        self.log(f"  {stage}: {message.splitlines()[0]}")

    def run_finished(self, stage: str, run: DagsterRun, failed_checks: list[str]) -> None:
        for check in failed_checks:
            self.log(f"  check failed: {check}")

    def stage_finished(self, stage: str, seconds: float) -> None:
        self.log(f"  {stage} done in {seconds:.1f}s")

    def notice(self, message: str) -> None:
        self.log(message)
