"""What a piece of work cost in CPU time: comparable across methods on a shared or loaded machine,
where wall time also counts the other processes' turns."""

from __future__ import annotations

import resource
import time
from dataclasses import dataclass, field


def _cpu_now() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)  # those waited for, e.g. a launched trainer
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


@dataclass
class CpuClock:
    """User + system CPU seconds of this process (all its threads) and its finished child
    processes, and wall seconds, since the clock was made. A process running two clocked pieces of
    work at once (threads) counts both in each."""

    cpu_start: float = field(default_factory=_cpu_now)
    wall_start: float = field(default_factory=time.perf_counter)

    def cpu_seconds(self) -> float:
        return _cpu_now() - self.cpu_start

    def wall_seconds(self) -> float:
        return time.perf_counter() - self.wall_start

    def figures(self) -> dict[str, float]:
        """{"cpu_seconds": …, "wall_seconds": …} for a materialization's metadata."""
        return {"cpu_seconds": round(self.cpu_seconds(), 1), "wall_seconds": round(self.wall_seconds(), 1)}
