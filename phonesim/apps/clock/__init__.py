"""Clock app: alarms (time, label, repeat days, on/off), world clocks, timer, stopwatch."""

from phonesim.app import App
from phonesim.apps.clock.screens import SCREENS, TRANSITIONS
from phonesim.apps.clock.tasks import TEMPLATES
from phonesim.apps.clock.world import initial_data, make_world, view

APP = App(name="clock", label="Clock", package="com.google.android.deskclock", color="#3949ab", glyph="bell",
          home="main", screens=SCREENS, transitions=TRANSITIONS, make_world=make_world, initial_data=initial_data,
          view=view, entity_params=("aid", "city", "day"))

__all__ = ["APP", "TEMPLATES"]
