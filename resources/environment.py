"""The environment backend as a resource: the embedded simulator by default, or Android
devices over adb (emulators, phones, or the simulator served by `mobileforge sim adb-server`).
Both twins offer `make_env()` / `apps()` / `packages()`.
"""

import dagster as dg
from pydantic import Field, PrivateAttr

from ops.adb_env import AdbEnvConfig, AdbEnvironment, DeviceApp, connected_serials
from ops.sim_env import SimEnvironment
from phonesim.apps import load_apps


class SimulatorResource(dg.ConfigurableResource):
    """Embedded phonesim phones, one per concurrent episode, sharing read-only world data."""

    screen_width: int = Field(default=1080, ge=120, le=4000, description="Screenshot width in pixels.")
    screen_height: int = Field(default=2400, ge=200, le=8000, description="Screenshot height in pixels.")
    world_seed: int = Field(default=0, ge=0, description="Seed of the apps' world data (contacts, files, ...).")

    def make_env(self) -> SimEnvironment:
        return SimEnvironment(size=(self.screen_width, self.screen_height), world_seed=self.world_seed)

    def apps(self) -> list[str]:
        return sorted(load_apps())

    def packages(self) -> dict[str, str]:
        return {name: app.package for name, app in load_apps().items()}


class AdbDeviceResource(dg.ConfigurableResource):
    """Android devices over adb, one environment per device (docs/devices.md)."""

    serials: list[str] = Field(default_factory=list,
                               description="Device serials to use; empty: every device the adb server lists.")
    adb_host: str = Field(default="127.0.0.1", description="Host of the adb server.")
    adb_port: int = Field(default=5037, ge=1, le=65535, description="Port of the adb server (adb -P).")
    simulator: bool = Field(default=False, description="The devices are the served simulator (`mobileforge sim "
                            "adb-server`): tasks start from their template state and the simulator's judge gives "
                            "ground truth. Off for real devices, where there is no ground truth.")
    world_seed: int = Field(default=0, ge=0, description="World seed of the served simulator (simulator only).")
    target_apps: dict[str, str] = Field(default_factory=dict, description="App name -> Android package of the "
                                        "target apps; empty with `simulator`: the simulator's apps.")
    command_timeout_s: float = Field(default=10.0, gt=0, description="Timeout of one adb shell command.")
    dump_timeout_s: float = Field(default=20.0, gt=0, description="Timeout of one `uiautomator dump`.")
    dump_retries: int = Field(default=3, ge=0, description="Extra attempts after a failed or stale dump.")
    settle_s: float = Field(default=0.5, ge=0, description="Wait after an action before observing (animations); "
                            "0 suits the served simulator.")
    retry_delay_s: float = Field(default=0.5, ge=0, description="Wait before retrying a failed or stale dump.")

    _handed_out: list[str] = PrivateAttr(default_factory=list)

    def _apps(self) -> tuple[DeviceApp, ...]:
        if self.target_apps or not self.simulator:
            return tuple(DeviceApp(name, package) for name, package in sorted(self.target_apps.items()))
        return tuple(DeviceApp(name, app.package, app.label) for name, app in load_apps().items())

    def device_serials(self) -> list[str]:
        return list(self.serials) or connected_serials(self.adb_host, self.adb_port, self.command_timeout_s)

    def make_env(self) -> AdbEnvironment:
        """An environment on the next device not handed out yet (one episode per device)."""
        free = [s for s in self.device_serials() if s not in self._handed_out]
        if not free:
            raise RuntimeError(f"all {len(self._handed_out)} adb devices are in use ({self._handed_out}); "
                               "run fewer episodes in parallel or add devices")
        self._handed_out.append(free[0])
        return AdbEnvironment(AdbEnvConfig(
            serial=free[0], host=self.adb_host, port=self.adb_port, apps=self._apps(), simulator=self.simulator,
            world_seed=self.world_seed, command_timeout_s=self.command_timeout_s,
            dump_timeout_s=self.dump_timeout_s, dump_retries=self.dump_retries, settle_s=self.settle_s,
            retry_delay_s=self.retry_delay_s))

    def apps(self) -> list[str]:
        return sorted(a.name for a in self._apps())

    def packages(self) -> dict[str, str]:
        return {a.name: a.package for a in self._apps()}
