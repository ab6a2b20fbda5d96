"""Calendar app: month grid and agenda, day view, event detail, create / edit / delete, search.
Also home of the date helpers (`dates`) and the overlay-collection helpers (`records`) that the
other productivity apps share."""

from phonesim.app import App
from phonesim.apps.calendar.screens import SCREENS, TRANSITIONS
from phonesim.apps.calendar.tasks import TEMPLATES
from phonesim.apps.calendar.world import initial_data, make_world, view

APP = App(name="calendar", label="Calendar", package="com.google.android.calendar", color="#4285f4",
          glyph="calendar", home="month", screens=SCREENS, transitions=TRANSITIONS, make_world=make_world,
          initial_data=initial_data, view=view, entity_params=("eid", "day"))

__all__ = ["APP", "TEMPLATES"]
