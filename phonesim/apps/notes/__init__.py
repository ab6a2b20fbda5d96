"""Notes app: notes in folders with search, create/edit/rename, move to folder, delete."""

from phonesim.app import App
from phonesim.apps.notes.screens import SCREENS, TRANSITIONS
from phonesim.apps.notes.tasks import TEMPLATES
from phonesim.apps.notes.world import initial_data, make_world, view

APP = App(name="notes", label="Notes", package="net.gsantner.markor", color="#f9a825", glyph="edit",
          home="folders", screens=SCREENS, transitions=TRANSITIONS, make_world=make_world, initial_data=initial_data,
          view=view, entity_params=("nid", "folder"))

__all__ = ["APP", "TEMPLATES"]
