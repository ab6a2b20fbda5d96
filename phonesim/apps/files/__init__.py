"""Files app: folder tree browser with search, sort, details, rename, move/copy, delete."""

from phonesim.app import App
from phonesim.apps.files.screens import SCREENS, TRANSITIONS
from phonesim.apps.files.tasks import TEMPLATES
from phonesim.apps.files.world import initial_data, make_world, view

APP = App(name="files", label="Files", package="com.android.documentsui", color="#1565c0", glyph="❏",
          home="browse", screens=SCREENS, transitions=TRANSITIONS, make_world=make_world, initial_data=initial_data,
          view=view, entity_params=("fid", "path", "dest"))

__all__ = ["APP", "TEMPLATES"]
