"""Recipes app: seeded cookbook, ingredient search, favourites tab, ingredient editor, form guards."""

from __future__ import annotations

import pytest

from phonesim import Phone
from phonesim.actions import Action
from phonesim.apps.recipes.world import all_recipes, get_recipe, make_world
from tests.phonesim.test_phone import find, tap


@pytest.fixture
def phone():
    p = Phone(world_seed=0)
    p.step(Action("open_app", app="Recipes"))
    return p


def texts(phone: Phone) -> list[str]:
    return [e["text"].split("\n")[0] for e in phone.observe().elements]


def test_world_is_deterministic_and_titles_are_unique():
    a, b = make_world(1), make_world(1)
    assert a == b and a != make_world(2)
    titles = [r["title"] for r in a["recipes"].values()]
    assert len(titles) >= 25 and len(set(titles)) == len(titles)


def test_search_matches_ingredients(phone):
    phone.step(Action("type", text="mascarpone", element=find(phone, "Search recipes or ingredients")))
    assert "Tiramisu" in texts(phone) and "1 recipes" in texts(phone)


def test_favourites_tab_lists_exactly_the_favourites(phone):
    favs = {r["title"] for r in all_recipes(phone.world("recipes"), phone.data("recipes")) if r["favorite"]}
    assert tap(phone, "Favourites").ok
    assert f"{len(favs)} favourites" in texts(phone)
    shown = {t for t in texts(phone) if t in favs}
    assert shown and shown <= favs


def test_ingredient_editor_adds_and_removes(phone):
    r = all_recipes(phone.world("recipes"), phone.data("recipes"))[0]
    tap(phone, r["title"])
    tap(phone, f"Ingredients ({len(r['ingredients'])})")
    phone.step(Action("type", text="sea salt", element=find(phone, "New ingredient")))
    assert tap(phone, "Add ingredient").ok
    assert get_recipe(phone.world("recipes"), phone.data("recipes"), r["id"])["ingredients"][-1] == "sea salt"
    tap(phone, r["ingredients"][0])
    tap(phone, "Remove")
    after = get_recipe(phone.world("recipes"), phone.data("recipes"), r["id"])["ingredients"]
    assert after == r["ingredients"][1:] + ["sea salt"]


def test_new_recipe_needs_whole_number_servings(phone):
    tap(phone, "Add recipe")
    phone.step(Action("type", text="Panna Cotta", element=find(phone, "Title")))
    phone.step(Action("type", text="two", element=find(phone, "Servings")))
    tap(phone, "Category")
    tap(phone, "Dessert")
    refused = tap(phone, "Save")
    assert not refused.ok and "whole number" in refused.reason
    assert phone.data("recipes")["put"] == {}
