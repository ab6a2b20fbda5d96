"""Recipes app: cookbook with search, favourites, category filter, detail, add/edit/delete, ingredients."""

from phonesim.app import App
from phonesim.apps.recipes.screens import SCREENS, TRANSITIONS
from phonesim.apps.recipes.tasks import TEMPLATES
from phonesim.apps.recipes.world import initial_data, make_world, view

APP = App(name="recipes", label="Recipes", package="com.flauschcode.broccoli", color="#558b2f", glyph="♨",
          home="list", screens=SCREENS, transitions=TRANSITIONS, make_world=make_world, initial_data=initial_data,
          view=view, entity_params=("recipe", "category"))

__all__ = ["APP", "TEMPLATES"]
