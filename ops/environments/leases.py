"""Device leases: who may run an episode on a device right now. Twins behind one interface:

- `HostLeases`: one host. An exclusive, non-blocking `flock` on a lock file per device, which the
  operating system drops when the holder exits, crashed or not. Needs nothing running.
- `PostgresLeases` (ops.environments.postgres_leases): any number of hosts. A row per device in a
  PostgreSQL table, taken atomically, kept alive by a heartbeat, expiring after its time to live
  when its holder dies or hangs; every lease is logged server-side.
"""

from __future__ import annotations

import fcntl
import os
import re
import tempfile
from pathlib import Path
from typing import Protocol


class Leases(Protocol):
    """Exclusive, revocable claims on devices, by device key."""

    def try_acquire(self, device: str) -> bool:
        """Claim `device` if nobody holds it; False at once when somebody does."""

    def release(self, device: str) -> None:
        """Let go of `device` (nothing when not held)."""

    def lost(self, device: str) -> bool:
        """True when a lease this holder took is no longer its own (expired and taken over)."""

    def close(self) -> None:
        """Let go of every device held."""


def lock_directory(host: str, port: int) -> Path:
    """Where the lock files of one adb server's devices live (one adb server per host and port)."""
    return Path(tempfile.gettempdir()) / "mobileforge-adb-devices" / f"{host}_{port}"


class HostLeases:
    """Leases that hold among the processes of one host: a `flock` per device under `directory`."""

    def __init__(self, directory: Path) -> None:
        self._directory = directory
        self._held: dict[str, int] = {}

    def try_acquire(self, device: str) -> bool:
        self._directory.mkdir(parents=True, exist_ok=True)
        fd = os.open(self._directory / f"{re.sub(r'[^A-Za-z0-9._-]', '_', device)}.lock", os.O_RDWR | os.O_CREAT)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:  # another process runs an episode on it
            os.close(fd)
            return False
        self._held[device] = fd
        return True

    def release(self, device: str) -> None:
        fd = self._held.pop(device, None)
        if fd is not None:
            os.close(fd)  # closing the descriptor drops the flock

    def lost(self, device: str) -> bool:
        return False  # a flock is never taken from a live holder

    def close(self) -> None:
        for device in list(self._held):
            self.release(device)
