"""Messages (SMS) app: conversations with contacts, read, send, start a conversation, delete, search."""

from phonesim.app import App
from phonesim.apps.sms.screens import SCREENS, TRANSITIONS
from phonesim.apps.sms.tasks import TEMPLATES
from phonesim.apps.sms.world import initial_data, make_world, view

APP = App(name="sms", label="Messages", package="com.google.android.apps.messaging", color="#0b8043",
          glyph="message", home="inbox", screens=SCREENS, transitions=TRANSITIONS, make_world=make_world,
          initial_data=initial_data, view=view, entity_params=("cid",))

__all__ = ["APP", "TEMPLATES"]
