"""A pool of adb devices: one episode per device at a time, a health check before each use.

Dagster runs are processes (several at a time, on one host or many), so a device is claimed with a
lease (`ops.environments.leases`: a `flock` on one host, a PostgreSQL row across hosts). Within a
process an environment keeps its device while it lives; a device whose environment was dropped (the
rollout engine lets go of its environments when it returns) is handed out again. Before every
hand-out the device must answer `getprop sys.boot_completed` with 1 and report its screen on; an
unhealthy device is skipped with a log line. A pool holding no device waits up to `wait_s` for one
(runs on other hosts may hold them all); a pool already holding some answers at once, so its
episodes go on with those. An environment whose lease was taken over (its holder hung past the
lease's time to live) refuses to step: an infrastructure failure, rerun elsewhere.
"""

from __future__ import annotations

import gc
import logging
import re
import time
import weakref
from typing import Any, Callable, Generic, TypeVar

from ops.environments.infrastructure import DeviceLost, InfrastructureError, NoDeviceFree
from ops.environments.leases import Leases

log = logging.getLogger(__name__)

Env = TypeVar("Env")
_SCREEN_ON = re.compile(r"mWakefulness=Awake|Display Power: state=ON|mScreenOn=true|mInteractive=true")


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


class LeasedEnvironment:
    """An environment on a leased device: itself in every respect, except that it will not reset or
    step once its lease is lost (`DeviceLost`, an infrastructure failure the rollout engine reruns)."""

    def __init__(self, env: Any, leases: Leases, device: str) -> None:
        self._env, self._leases, self._device = env, leases, device

    def _check_lease(self) -> None:
        if self._leases.lost(self._device):
            raise DeviceLost(self._device, "its lease expired and another holder took the device")

    def reset(self, task):
        self._check_lease()
        return self._env.reset(task)

    def step(self, action):
        self._check_lease()
        return self._env.step(action)

    def __getattr__(self, name: str) -> Any:
        if name == "_env":  # not set yet: no recursion through __getattr__
            raise AttributeError(name)
        return getattr(self._env, name)


class DevicePool(Generic[Env]):
    """Hands out one environment per free, healthy device.

    `serials()` lists the candidates (configured or discovered), `check(serial)` returns a
    health problem or None, `build(serial)` makes the environment; all three may raise
    `InfrastructureError` (a device that vanished in between is skipped like an unhealthy one).
    `key(serial)` names the device among every adb server the leases cover.
    """

    def __init__(self, serials: Callable[[], list[str]], check: Callable[[str], str | None],
                 build: Callable[[str], Env], leases: Leases, key: Callable[[str], str] = str,
                 wait_s: float = 0.0, poll_s: float = 0.5) -> None:
        self._serials, self._check, self._build = serials, check, build
        self._leases, self._key, self._wait_s, self._poll_s = leases, key, wait_s, poll_s
        self._claims: dict[str, weakref.ref | None] = {}  # serial -> the environment using it, while it lives

    def acquire(self) -> Env:
        """An environment on a free, healthy device; `NoDeviceFree` when there is none (after waiting
        up to `wait_s` when this pool holds none)."""
        deadline = time.monotonic() + (0.0 if self._busy() else self._wait_s)
        while True:
            found = self._try_acquire()
            if found is None:
                gc.collect()  # environments in a reference cycle hold their devices until collected
                found = self._try_acquire()
            if found is not None:
                return found
            if time.monotonic() >= deadline:
                raise NoDeviceFree(f"no free, healthy adb device among {self._serials()} "
                                   f"({len(self._busy())} in use by this process: {self._busy()})")
            time.sleep(self._poll_s)

    def in_use(self) -> list[str]:
        """Serials this process holds for a live environment."""
        return self._busy()

    def _busy(self) -> list[str]:
        return [s for s, holder in self._claims.items() if holder is not None and holder() is not None]

    def _try_acquire(self) -> Env | None:
        busy = set(self._busy())
        for serial in self._serials():
            key = self._key(serial)
            if serial in busy:
                continue
            if serial in self._claims and self._leases.lost(key):
                del self._claims[serial]  # its lease was taken over while it idled: claim it afresh
            if serial not in self._claims and not self._leases.try_acquire(key):
                continue
            self._claims.setdefault(serial, None)
            try:
                problem = self._check(serial)
                env = None if problem else LeasedEnvironment(self._build(serial), self._leases, key)
            except InfrastructureError as exc:
                problem = str(exc)
            if problem:
                log.warning("adb device %s skipped: %s", serial, problem)
                self._release(serial)
                continue
            self._claims[serial] = weakref.ref(env)
            return env
        return None

    def _release(self, serial: str) -> None:
        if self._claims.pop(serial, False) is not False:
            self._leases.release(self._key(serial))

    def close(self) -> None:
        """Let go of every device this pool holds."""
        for serial in list(self._claims):
            self._release(serial)
        self._leases.close()
