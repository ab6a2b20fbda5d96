"""Expenses app: dated expense log with search, category filter, sort, totals, add/edit/delete."""

from phonesim.app import App
from phonesim.apps.expenses.screens import SCREENS, TRANSITIONS
from phonesim.apps.expenses.tasks import TEMPLATES
from phonesim.apps.expenses.world import initial_data, make_world, view

APP = App(name="expenses", label="Expenses", package="com.proexpense.app", color="#2e7d32", glyph="$",
          home="list", screens=SCREENS, transitions=TRANSITIONS, make_world=make_world, initial_data=initial_data,
          view=view, entity_params=("eid", "category", "date"))

__all__ = ["APP", "TEMPLATES"]
