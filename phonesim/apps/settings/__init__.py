"""Settings app: network, Bluetooth, display, sound, battery, location, about phone."""

from phonesim.app import App
from phonesim.apps.settings.screens import SCREENS, TRANSITIONS
from phonesim.apps.settings.tasks import TEMPLATES
from phonesim.apps.settings.world import initial_data, make_world

APP = App(name="settings", label="Settings", package="com.android.settings", color="#5f6368", glyph="settings",
          home="main", screens=SCREENS, transitions=TRANSITIONS, make_world=make_world, initial_data=initial_data,
          entity_params=("network", "device"))

__all__ = ["APP", "TEMPLATES"]
