"""A pool of adb devices: one episode per device at a time, a health check before each use.

Dagster runs are processes (two at a time under `mobileforge run`, one per app partition), so a
device is claimed with an exclusive, non-blocking `flock` on a lock file per serial, which the
operating system releases when the holder exits, crashed or not. Within a process an environment
keeps its device while it lives; a device whose environment was dropped (the rollout engine lets
go of its environments when it returns) is handed out again. Before every hand-out the device
must answer `getprop sys.boot_completed` with 1 and report its screen on; an unhealthy device is
skipped with a log line.
"""

from __future__ import annotations

import fcntl
import gc
import logging
import os
import re
import tempfile
import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Generic, TypeVar

from ops.environments.infrastructure import InfrastructureError, NoDeviceFree

log = logging.getLogger(__name__)

Env = TypeVar("Env")
_SCREEN_ON = re.compile(r"mWakefulness=Awake|Display Power: state=ON|mScreenOn=true|mInteractive=true")


def lock_directory(host: str, port: int) -> Path:
    """Where the lock files of one adb server's devices live (one adb server per host and port)."""
    return Path(tempfile.gettempdir()) / "mobileforge-adb-devices" / f"{host}_{port}"


def health_problem(shell: Callable[[str], str]) -> str | None:
    """Why a device should not take an episode, or None: booted (`sys.boot_completed` 1) and its
    screen on (`dumpsys power`). `shell` runs one command and returns its output."""
    booted = shell("getprop sys.boot_completed").strip()
    if booted != "1":
        return f"not booted (sys.boot_completed={booted!r})"
    power = shell("dumpsys power | grep -E 'mWakefulness=|Display Power: state='")
    if not _SCREEN_ON.search(power):
        return f"screen off ({power.strip()[:80] or 'dumpsys power printed nothing'})"
    return None


@dataclass
class _Claim:
    fd: int
    holder: weakref.ref | None = None  # the environment using the device, while it lives


class DevicePool(Generic[Env]):
    """Hands out one environment per free, healthy device.

    `serials()` lists the candidates (configured or discovered), `check(serial)` returns a
    health problem or None, `build(serial)` makes the environment; all three may raise
    `InfrastructureError` (a device that vanished in between is skipped like an unhealthy one).
    """

    def __init__(self, serials: Callable[[], list[str]], check: Callable[[str], str | None],
                 build: Callable[[str], Env], lock_dir: Path) -> None:
        self._serials, self._check, self._build = serials, check, build
        self._lock_dir = lock_dir
        self._claims: dict[str, _Claim] = {}

    def acquire(self) -> Env:
        """An environment on a free, healthy device; `NoDeviceFree` when there is none."""
        found = self._try_acquire()
        if found is None:
            gc.collect()  # environments in a reference cycle hold their devices until collected
            found = self._try_acquire()
        if found is None:
            raise NoDeviceFree(f"no free, healthy adb device among {self._serials()} "
                               f"({len(self._busy())} in use by this process: {self._busy()})")
        return found

    def in_use(self) -> list[str]:
        """Serials this process holds for a live environment."""
        return self._busy()

    def _busy(self) -> list[str]:
        return [s for s, c in self._claims.items() if c.holder is not None and c.holder() is not None]

    def _try_acquire(self) -> Env | None:
        busy = set(self._busy())
        for serial in self._serials():
            if serial in busy or (serial not in self._claims and not self._lock(serial)):
                continue
            try:
                problem = self._check(serial)
                env = None if problem else self._build(serial)
            except InfrastructureError as exc:
                problem = str(exc)
            if problem:
                log.warning("adb device %s skipped: %s", serial, problem)
                self._release(serial)
                continue
            self._claims[serial].holder = weakref.ref(env)
            return env
        return None

    def _lock(self, serial: str) -> bool:
        self._lock_dir.mkdir(parents=True, exist_ok=True)
        fd = os.open(self._lock_dir / f"{re.sub(r'[^A-Za-z0-9._-]', '_', serial)}.lock", os.O_RDWR | os.O_CREAT)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:  # another process runs an episode on it
            os.close(fd)
            return False
        self._claims[serial] = _Claim(fd)
        return True

    def _release(self, serial: str) -> None:
        claim = self._claims.pop(serial, None)
        if claim is not None:
            os.close(claim.fd)  # closing the descriptor drops the flock

    def close(self) -> None:
        """Let go of every device this pool holds."""
        for serial in list(self._claims):
            self._release(serial)
