"""Tasks (to-do) app: task lists, due dates, priorities, done/undone, Today and Done filters,
search, create / edit / delete. Package `todo` (not `tasks`) so the app name never reads like
a benchmark task or the OS task stacks."""

from phonesim.app import App
from phonesim.apps.todo.screens import SCREENS, TRANSITIONS
from phonesim.apps.todo.tasks import TEMPLATES
from phonesim.apps.todo.world import initial_data, make_world, view

APP = App(name="todo", label="Tasks", package="com.google.android.apps.tasks", color="#1e8e3e", glyph="check",
          home="home", screens=SCREENS, transitions=TRANSITIONS, make_world=make_world, initial_data=initial_data,
          view=view, entity_params=("tid", "lst"))

__all__ = ["APP", "TEMPLATES"]
