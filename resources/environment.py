"""The environment backend as a resource: the embedded simulator by default, or Android
devices over adb (emulators, phones, or the simulator served by `mobileforge sim adb-server`).
Both twins offer what the assets use: `make_env()`, `group_env_factory()`, `apps()`, `packages()`,
`app_versions()`, `judge_name`, `world_seed`, `screen_width` / `screen_height`. Nothing of the simulator
is imported unless the environment is the simulator.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING

import logging
import os

import dagster as dg
from pydantic import Field, PrivateAttr, field_validator

from ops.agent.episode import SIMULATOR_JUDGE, Environment
from ops.environments.device_pool import DevicePool, LeasedEnvironment
from ops.environments.infrastructure import InfrastructureError
from ops.environments.leases import HostLeases, Leases, lock_directory
from ops.environments.safety_guard import DENY_LABELS, GuardConfig, SafetyGuard
from ops.config_bounds import MAX_ATTEMPTS, MAX_SECONDS, MAX_SEED

if TYPE_CHECKING:
    from ops.environments.adb import AdbEnvironment, DeviceApp
    from ops.environments.simulator import SimEnvironment

log = logging.getLogger(__name__)

# ops.environments.adb is imported in the methods that reach a device: it loads adbutils (and requests),
# which the asset graph and every run on the embedded simulator do not need.


class SimulatorResource(dg.ConfigurableResource):
    """Embedded phonesim phones, one per concurrent episode, sharing read-only world data."""

    screen_width: int = Field(default=1080, ge=120, le=4000, description="Screenshot width in pixels.")
    screen_height: int = Field(default=2400, ge=200, le=8000, description="Screenshot height in pixels.")
    world_seed: int = Field(default=0, ge=0, le=MAX_SEED, description="Seed of the apps' world data (contacts, files, ...).")
    target_apps: list[str] = Field(default_factory=list, description=(
        "The simulator's apps the loop targets (explored, mined into the curriculum, rolled out); empty: all "
        "of them. MOBILEFORGE_SIM_APPS=name,... in either profile."))

    @property
    def judge_name(self) -> str | None:
        """The simulator's task judges give every verdict they can."""
        return SIMULATOR_JUDGE

    def make_env(self) -> SimEnvironment:
        return self.env_factory()()

    def env_factory(self) -> Callable[[], SimEnvironment]:
        """`make_env` as a callable that pickles, for worker processes."""
        from ops.environments.simulator import SimEnvironment

        return partial(SimEnvironment, size=(self.screen_width, self.screen_height), world_seed=self.world_seed)

    def group_env_factory(self) -> Callable[[], Environment]:
        """Environments for one batch of episode groups (online RL): every episode of a task forks the
        same snapshot of its initial state (`ops.environments.simulator.ForkingSimEnvironment`)."""
        from ops.environments.simulator import ForkingSimEnvironment

        return partial(ForkingSimEnvironment, {}, (self.screen_width, self.screen_height), self.world_seed)

    def apps(self) -> list[str]:
        from phonesim.apps import load_apps

        known = sorted(load_apps())
        unknown = sorted(set(self.target_apps) - set(known))
        if unknown:
            raise ValueError(f"target_apps {unknown}: not apps of the simulator, which has {known}")
        return [app for app in known if not self.target_apps or app in self.target_apps]

    def packages(self) -> dict[str, str]:
        from phonesim.apps import load_apps

        apps = load_apps()
        return {name: apps[name].package for name in self.apps()}

    def app_versions(self) -> dict[str, str]:
        """App name -> the code version of its simulator module (a digest of its source)."""
        from phonesim.adb.commands import app_version

        return {name: app_version(name) for name in self.apps()}


class AdbDeviceResource(dg.ConfigurableResource):
    """Android devices over adb, one episode per device at a time across processes (and across hosts with
    `lease_database_env`), each checked for health before use (`ops.environments.device_pool`); a safety
    guard on every action unless switched off (docs/devices.md)."""

    serials: list[str] = Field(default_factory=list, description=(
        "Devices to use: serials on the first adb server, host:port/serial on the others; empty: every device "
        "the adb servers list."))
    adb_host: str = Field(default="127.0.0.1", description="Host of the adb server.")
    adb_port: int = Field(default=5037, ge=1, le=65535, description="Port of the adb server (adb -P).")
    adb_servers: list[str] = Field(default_factory=list, description=(
        "A device farm: further adb servers, 'host:port' each (one per host), whose devices join those of "
        "adb_host:adb_port; a server that does not answer is skipped with a log line, and a device it drops is "
        "an infrastructure failure whose attempt reruns on another device."))
    simulator: bool = Field(default=False, description="The devices are the served simulator (`mobileforge sim "
                            "adb-server`): tasks start from their template state and the simulator's judge gives "
                            "ground truth. Off for real devices, where there is no ground truth.")
    world_seed: int = Field(default=0, ge=0, le=MAX_SEED, description="World seed of the served simulator (simulator only).")
    target_apps: dict[str, str] = Field(default_factory=dict, description="App name -> Android package of the "
                                        "target apps; empty with `simulator`: the simulator's apps.")
    apps_file: str | None = Field(default=None, description="The target apps as a YAML file (name, package, "
                                  "optional description and launch_activity; ops.environments.apps_file); "
                                  "wins over target_apps.")
    package_patterns: list[str] = Field(default_factory=list, description="Without apps_file or target_apps on "
                                        "devices: the third-party packages the first device lists (`pm list "
                                        "packages -3`) that match one of these globs, e.g. ['com.example.*'].")
    command_timeout_s: float = Field(default=10.0, gt=0, le=MAX_SECONDS, description="Timeout of one adb shell command.")
    dump_timeout_s: float = Field(default=20.0, gt=0, le=MAX_SECONDS, description="Timeout of one `uiautomator dump`.")
    dump_retries: int = Field(default=3, ge=0, le=MAX_ATTEMPTS, description="Extra attempts after a failed or stale dump.")
    settle_s: float = Field(default=0.5, ge=0, le=MAX_SECONDS, description="Wait after an action before observing (animations); "
                            "0 suits the served simulator.")
    retry_delay_s: float = Field(default=0.5, ge=0, le=MAX_SECONDS, description="Wait before retrying a failed or stale dump.")
    guard: bool = Field(default=True, description="Safety guard (ops.environments.safety_guard): actions on its deny list "
                        "(pay, buy, delete account, factory reset, uninstall, send in messaging apps, leaving the "
                        "target apps, ...) are not executed and are recorded as blocked_by_guard.")
    guard_end_episode: bool = Field(default=False, description="A blocked action ends the episode "
                                    "(end_reason blocked_by_guard); false: the episode goes on.")
    guard_deny_labels: list[str] = Field(default_factory=lambda: list(DENY_LABELS), description=(
        "Element labels (text or content-desc, whole words) the guard blocks."))
    guard_deny_action_types: list[str] = Field(default_factory=list, description=(
        "Canonical action types the guard blocks outright, e.g. ['long_press']."))

    lease_database_env: str | None = Field(default=None, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$", description=(
        "Environment variable holding a PostgreSQL URL (never the URL itself: it may carry a password): device "
        "leases are then rows there and hold across hosts (ops.environments.postgres_leases); unset: a file lock "
        "per device, which holds among the processes of one host. With several hosts, adb_host must name the adb "
        "server as every host reaches it, since the lease is keyed by host:port/serial."))
    lease_ttl_s: float = Field(default=30.0, gt=0, description=(
        "Database leases: seconds a lease lives without a heartbeat (renewed every third of it); a killed "
        "holder's devices are free again after at most this long."))
    lease_host: str | None = Field(default=None, description=(
        "Database leases: the host name recorded with each lease; default: this machine's."))
    device_wait_s: float = Field(default=0.0, ge=0, description=(
        "How long a step that holds no device waits for one to free up before failing with NoDeviceFree (other "
        "runs or hosts may hold them all); 0 fails at once, as a single-host run wants."))

    _pool: DevicePool | None = PrivateAttr(default=None)
    _size: tuple[int, int] | None = PrivateAttr(default=None)
    _target: tuple[DeviceApp, ...] | None = PrivateAttr(default=None)

    @property
    def judge_name(self) -> str | None:
        """The served simulator's judges; None on devices, where the critic judges."""
        return SIMULATOR_JUDGE if self.simulator else None

    @field_validator("adb_servers")
    @classmethod
    def _host_ports(cls, servers: list[str]) -> list[str]:
        for server in servers:
            host, sep, port = server.rpartition(":")
            if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
                raise ValueError(f"{server!r}: expected host:port, e.g. 10.0.0.7:5037")
        return servers

    def servers(self) -> list[tuple[str, int]]:
        """The adb servers of the farm, the first one first."""
        return [(self.adb_host, self.adb_port),
                *((host, int(port)) for host, _, port in (s.rpartition(":") for s in self.adb_servers))]

    def _locate(self, device: str) -> tuple[str, int, str]:
        """(host, port, serial) of a device id: a serial on the first server, host:port/serial elsewhere."""
        where, sep, serial = device.rpartition("/")
        if not sep:
            return self.adb_host, self.adb_port, device
        host, _, port = where.rpartition(":")
        return host, int(port), serial

    def _key(self, device: str) -> str:
        host, port, serial = self._locate(device)
        return f"{host}:{port}/{serial}"

    def _apps(self) -> tuple[DeviceApp, ...]:
        """The target apps, read once: the apps file, else target_apps, else (the served simulator as the
        simulator's twin) its apps, else the devices' third-party packages matching package_patterns."""
        if self._target is None:
            self._target = self._read_apps()
        return self._target

    def _read_apps(self) -> tuple[DeviceApp, ...]:
        from ops.environments.adb import DeviceApp
        from ops.environments.apps_file import apps_from_packages, load_apps_file

        if self.apps_file:
            return tuple(DeviceApp(a.name, a.package, launch_activity=a.launch_activity)
                         for a in load_apps_file(self.apps_file))
        if self.target_apps:
            return tuple(DeviceApp(name, package) for name, package in sorted(self.target_apps.items()))
        if self.simulator:
            from phonesim.apps import load_apps

            return tuple(DeviceApp(name, app.package, app.label) for name, app in load_apps().items())
        listed = self._env_bare(self._first_serial()).third_party_packages()
        return tuple(DeviceApp(a.name, a.package) for a in apps_from_packages(listed, self.package_patterns))

    def device_serials(self) -> list[str]:
        """The devices to hand out, by id (`_locate`): the configured ones, else every server's ready ones."""
        from ops.environments.adb_client import connected_serials

        if self.serials:
            return list(self.serials)
        devices, down = [], []
        for index, (host, port) in enumerate(self.servers()):
            try:
                listed = connected_serials(host, port, self.command_timeout_s)
            except InfrastructureError as error:
                down.append(error)
                log.warning("adb server %s:%s skipped: %s", host, port, error)
                continue
            devices += listed if index == 0 else [f"{host}:{port}/{serial}" for serial in listed]
        if len(down) == len(self.servers()):
            raise down[-1]
        return devices

    def _env(self, device: str) -> AdbEnvironment:
        from ops.environments.adb import AdbEnvConfig, AdbEnvironment

        host, port, serial = self._locate(device)
        guard = SafetyGuard(GuardConfig(
            deny_labels=tuple(self.guard_deny_labels), deny_action_types=tuple(self.guard_deny_action_types),
            target_packages=tuple(a.package for a in self._apps()), end_episode=self.guard_end_episode)) \
            if self.guard else None
        return AdbEnvironment(AdbEnvConfig(
            serial=serial, host=host, port=port, apps=self._apps(), simulator=self.simulator,
            world_seed=self.world_seed, command_timeout_s=self.command_timeout_s,
            dump_timeout_s=self.dump_timeout_s, dump_retries=self.dump_retries, settle_s=self.settle_s,
            retry_delay_s=self.retry_delay_s, guard=guard))

    def leases(self) -> Leases:
        """The device leases: PostgreSQL rows when `lease_database_env` is set, else file locks on this host."""
        if self.lease_database_env is None:
            return HostLeases(lock_directory(self.adb_host, self.adb_port))
        dsn = os.environ.get(self.lease_database_env)
        if not dsn:
            raise ValueError(f"lease_database_env: the environment variable {self.lease_database_env} is not set "
                             "(it should hold the lease database's PostgreSQL URL)")
        from ops.environments.postgres_leases import PostgresLeases  # psycopg2 only when configured

        return PostgresLeases(dsn, ttl_s=self.lease_ttl_s, host=self.lease_host)

    def pool(self) -> DevicePool:
        """The device pool of this process (built on first use)."""
        if self._pool is None:
            self._pool = DevicePool(self.device_serials, lambda serial: self._env(serial).health(), self._env,
                                    self.leases(), key=self._key, wait_s=self.device_wait_s)
        return self._pool

    def make_env(self) -> LeasedEnvironment:
        """An environment on a free, healthy device; `NoDeviceFree` when every device is busy
        (another episode, here or in another run), unhealthy or gone."""
        return self.pool().acquire()

    def group_env_factory(self) -> Callable[[], Environment]:
        """Devices for online RL's episode groups: each episode starts from its app cleared (a device's
        state is not data, so a group shares the cleared start, not a snapshot)."""
        return self.make_env

    def _first_serial(self) -> str:
        serials = self.device_serials()
        if not serials:
            raise RuntimeError(f"no adb device listed by the server at {self.adb_host}:{self.adb_port}")
        return serials[0]

    def _env_bare(self, serial: str) -> AdbEnvironment:
        """An environment on `serial` that knows no apps (to ask the device which it has)."""
        from ops.environments.adb import AdbEnvConfig, AdbEnvironment

        return AdbEnvironment(AdbEnvConfig(serial=serial, host=self.adb_host, port=self.adb_port,
                                           command_timeout_s=self.command_timeout_s))

    def _probe(self) -> AdbEnvironment:
        """An environment on the first listed device for read-only questions (size, versions)."""
        return self._env(self._first_serial())

    @property
    def screen_width(self) -> int:
        """Screen width of the devices in pixels (`wm size` of the first one)."""
        return self._screen()[0]

    @property
    def screen_height(self) -> int:
        return self._screen()[1]

    def _screen(self) -> tuple[int, int]:
        if self._size is None:
            self._size = self._probe().size
        return self._size

    def app_versions(self) -> dict[str, str]:
        """App name -> the versionName installed on the first device (`dumpsys package`);
        'not installed' when it is not."""
        probe = self._probe()
        return {a.name: probe.package_version(a.package) or "not installed" for a in self._apps()}

    def apps(self) -> list[str]:
        return sorted(a.name for a in self._apps())

    def packages(self) -> dict[str, str]:
        return {a.name: a.package for a in self._apps()}
