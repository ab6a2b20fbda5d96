"""Progress of long loops in the log: items done of a known total, with an ETA."""

from __future__ import annotations

import time
from typing import Any, Callable

REPORTS = 10  # lines per loop when no interval is given


def duration(seconds: float) -> str:
    """`95` -> `1m35s`; `3700` -> `1h01m`."""
    seconds = max(0, round(seconds))
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"


class CountdownLog:
    """Call once per finished item; every `every` items (about REPORTS times by default) and at
    the last one, `log` gets `"<what>: 40/120 (33%), ETA 1m20s"`."""

    def __init__(self, what: str, total: int, log: Callable[[str], None], every: int | None = None,
                 clock: Callable[[], float] = time.perf_counter):
        self.what, self.total, self.log, self.clock = what, total, log, clock
        self.every = every or max(1, total // REPORTS)
        self.done = 0
        self.start = clock()

    def __call__(self, *_: Any) -> None:
        self.done += 1
        if self.done % self.every and self.done != self.total:
            return
        line = f"{self.what}: {self.done}/{self.total}"
        if self.total:
            line += f" ({100 * self.done // self.total}%)"
        if 0 < self.done < self.total:
            line += f", ETA {duration((self.clock() - self.start) / self.done * (self.total - self.done))}"
        self.log(line)
