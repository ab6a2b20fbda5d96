"""The environment backend as a resource: the embedded simulator by default.

Real devices (adb) are a twin behind the same `make_env()` / `apps()` interface (later issue).
"""

import dagster as dg
from pydantic import Field

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
