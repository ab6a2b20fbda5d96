"""Contacts app: searchable list, favourites, detail, create/edit/delete, groups."""

from phonesim.app import App
from phonesim.apps.contacts.screens import SCREENS, TRANSITIONS
from phonesim.apps.contacts.tasks import TEMPLATES
from phonesim.apps.contacts.world import initial_data, make_world, view

APP = App(name="contacts", label="Contacts", package="com.android.contacts", color="#1a73e8", glyph="contacts",
          home="list", screens=SCREENS, transitions=TRANSITIONS, make_world=make_world, initial_data=initial_data,
          view=view, entity_params=("cid", "group"))

__all__ = ["APP", "TEMPLATES"]
