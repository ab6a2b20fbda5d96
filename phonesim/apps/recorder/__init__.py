"""Recorder (audio recorder) app: recordings list, record (state-based), play, rename, trash,
restore, delete forever."""

from phonesim.app import App
from phonesim.apps.recorder.screens import SCREENS, TRANSITIONS
from phonesim.apps.recorder.tasks import TEMPLATES
from phonesim.apps.recorder.world import initial_data, make_world, view

APP = App(name="recorder", label="Recorder", package="com.google.android.apps.recorder", color="#d93025",
          glyph="sound", home="list", screens=SCREENS, transitions=TRANSITIONS, make_world=make_world,
          initial_data=initial_data, view=view, entity_params=("rec",))

__all__ = ["APP", "TEMPLATES"]
