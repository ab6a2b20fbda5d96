"""What one client may cost the served simulator: the server's limits and the per-command
budget. A hostile or careless request fails alone, with a message, instead of freezing the
server or growing its memory (a phone has the same limits as hardware: storage fills, a command
is killed)."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

MIB = 1024 * 1024


@dataclass(frozen=True)
class ServerLimits:
    """The served simulator's bounds. The defaults leave every ordinary client far inside them."""

    command_budget_s: float = 30.0
    """Wall time one shell command line may take; past it the line is stopped with status 124."""
    max_output_bytes: int = 32 * MIB
    """Output one command line may produce (a screencap of a 1080x2400 screen is 10 MiB raw)."""
    storage_bytes: int = 64 * MIB
    """Bytes of files one device holds (its storage: a full device answers `No space left on device`)."""
    max_entries: int = 4096
    """Files and directories one device holds."""
    max_connections: int = 128
    """Client connections open at once; one more is answered FAIL and closed."""
    idle_timeout_s: float = 120.0
    """How long the server waits for a client's next request or transfer bytes before closing."""
    max_pattern_states: int = 100_000
    """Upper bound of a regular expression's expanded size (repeats multiplied out) grep compiles."""
    max_control_bytes: int = 16 * MIB
    """Largest body of a `phonesim:` control request (a phone state is a few hundred KiB)."""
    max_inflight_bytes: int = 256 * MIB
    """Bytes all connections together may hold in flight (command output, files being pushed).
    With the files (devices x storage_bytes) this bounds the server's memory."""

    def __post_init__(self) -> None:
        for name, value in vars(self).items():
            if not value > 0:
                raise ValueError(f"ServerLimits.{name} must be positive, got {value!r}")


class BudgetExceeded(RuntimeError):
    """A command line used up its budget (time or output)."""


class MemoryPool:
    """The server-wide allowance of in-flight bytes, reserved and released by connections."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.used = 0
        self._lock = threading.Lock()

    def reserve(self, size: int) -> bool:
        with self._lock:
            if self.used + size > self.limit:
                return False
            self.used += size
            return True

    def release(self, size: int) -> None:
        with self._lock:
            self.used -= size


class Budget:
    """The time left to one command line, and the output it may still produce. Output is
    reserved in the server's memory pool; `release()` gives it back once the reply is sent."""

    def __init__(self, limits: ServerLimits, pool: MemoryPool | None = None) -> None:
        self.limits = limits
        self.pool = pool or MemoryPool(limits.max_inflight_bytes)
        self.deadline = time.monotonic() + limits.command_budget_s
        self.reserved = 0

    def remaining(self) -> float:
        return self.deadline - time.monotonic()

    def check(self) -> None:
        if self.remaining() <= 0:
            raise BudgetExceeded(f"exceeded the served device's {self.limits.command_budget_s:g} s command budget")

    def check_output(self, size: int) -> None:
        """Account for the line's output having grown to `size` bytes."""
        if size > self.limits.max_output_bytes:
            raise BudgetExceeded(f"output exceeds the served device's {self.limits.max_output_bytes} byte limit")
        if size > self.reserved:
            if not self.pool.reserve(size - self.reserved):
                raise BudgetExceeded("the server holds its limit of in-flight output; try again")
            self.reserved = size

    def release(self) -> None:
        self.pool.release(self.reserved)
        self.reserved = 0
