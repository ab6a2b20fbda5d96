"""Recipes task templates: typed look-ups (servings, prep time, ingredients), favourites,
add / edit / delete, ingredient editing and a hybrid "quickest recipe" task."""

from __future__ import annotations

import random

from phonesim.answers import AnswerSpec
from phonesim.apps.recipes.world import BOOK, CATEGORIES, all_recipes, get_recipe
from phonesim.records import Lookup
from phonesim.task_template import TaskTemplate

TITLES = tuple(sorted(t for book in BOOK.values() for t in book))
NEW_TITLES = {"Breakfast": ("Blueberry Muffins", "Breakfast Burrito"),
              "Main": ("Sweet Potato Curry", "Stuffed Peppers"),
              "Salad": ("Nicoise Salad", "Waldorf Salad"), "Soup": ("Carrot Ginger Soup", "French Onion Soup"),
              "Dessert": ("Lemon Drizzle Cake", "Panna Cotta")}
EXTRA_INGREDIENTS = ("black pepper", "sea salt", "fresh parsley", "chili flakes", "lemon zest", "grated ginger")


RECIPES = Lookup("recipes", all_recipes, get_recipe)
recipes, recipe, attr = RECIPES.records, RECIPES.record, RECIPES.attr


def pick(rng: random.Random, phone) -> dict:
    r = rng.choice(recipes(phone))
    return {"recipe": r["id"], "title": r["title"]}


def with_new_servings(rng, phone) -> dict:
    p = pick(rng, phone)
    p["servings"] = rng.choice([n for n in range(1, 13) if n != attr(phone, p["recipe"], "servings")])
    return p


def with_new_ingredient(rng, phone) -> dict:
    p = pick(rng, phone)
    p["ingredient"] = rng.choice([i for i in EXTRA_INGREDIENTS if i not in attr(phone, p["recipe"], "ingredients")])
    return p


def pick_unique_ingredient(rng, phone) -> dict:
    """An ingredient only one recipe mentions, even as part of another ingredient ("oats" is
    ambiguous when another recipe needs "rolled oats"), and that recipe."""
    everyone = recipes(phone)
    users = {ing: [r for r in everyone if any(ing in other for other in r["ingredients"])]
             for r in everyone for ing in r["ingredients"]}
    ing = rng.choice(sorted(i for i, rs in users.items() if len(rs) == 1))
    return {"ingredient": ing, "recipe": users[ing][0]["id"]}


def pick_hastened(rng, phone) -> dict:
    """A category and one of its recipes, whose prep time drops below the category's quickest to a
    drawn value (`hasten`), so the quickest recipe differs between instances."""
    category = rng.choice(CATEGORIES)
    mine = [r for r in recipes(phone) if r["category"] == category]
    quickest = min(r["prep"] for r in mine)
    return {"category": category, "recipe": rng.choice(mine)["id"], "prep": rng.choice(range(5, quickest, 5))}


def hasten(phone, p) -> None:
    """Setup: the recipe takes p["prep"] minutes (its directions say so too) and is not a favourite."""
    r = recipe(phone, p["recipe"])
    RECIPES.edit(phone, p["recipe"], prep=p["prep"], favorite=False,
                 directions=r["directions"].replace(f"about {r['prep']} minutes", f"about {p['prep']} minutes"))


def sample_new(rng, phone) -> dict:
    category = rng.choice(CATEGORIES)
    return {"title": rng.choice(NEW_TITLES[category]), "category": category, "servings": str(rng.randint(2, 8))}


def set_favorite(value: bool):
    return lambda phone, p: RECIPES.edit(phone, p["recipe"], favorite=value)


def created(phone, p) -> list[dict]:
    return [r for r in recipes(phone) if r["id"].startswith("n") and r["title"].casefold() == p["title"].casefold()]


def path(p) -> str:
    return f"recipes.recipes.{p['recipe']}"


def title_of(phone, p) -> str:
    return recipe(phone, p["recipe"])["title"]


TEMPLATES = [
    TaskTemplate(
        id="recipes.query_servings", apps=("recipes",), objective="query", composition="deep_dive", difficulty=1,
        split="train", step_budget=15,
        instructions=("How many servings does the {title} recipe make?", "{title} serves how many people?"),
        sample=pick, answer=lambda phone, p: AnswerSpec("number", float(attr(phone, p["recipe"], "servings")),
                                                        hint="a number"),
        evidence=lambda p, spec: [f"Servings\n{spec.gold:g}"], hints=lambda p: [p["title"]], tags=("extract",)),
    TaskTemplate(
        id="recipes.query_prep_time", apps=("recipes",), objective="query", composition="deep_dive", difficulty=2,
        split="test", step_budget=15,
        instructions=("How long does {title} take to prepare?", "What is the prep time of {title}?"),
        sample=pick, answer=lambda phone, p: AnswerSpec("number", float(attr(phone, p["recipe"], "prep")),
                                                        hint="a number of minutes"),
        evidence=lambda p, spec: [f"Prep time\n{spec.gold:g} min"], hints=lambda p: [p["title"]],
        tags=("extract",)),
    TaskTemplate(
        id="recipes.query_ingredient_count", apps=("recipes",), objective="query", composition="deep_dive",
        difficulty=2, split="train", step_budget=15,
        instructions=("How many ingredients does {title} need?", "Count the ingredients in the {title} recipe."),
        sample=pick, answer=lambda phone, p: AnswerSpec("number", float(len(attr(phone, p["recipe"], "ingredients"))),
                                                        hint="a number"),
        evidence=lambda p, spec: [f"Ingredients ({spec.gold:g})"], hints=lambda p: [p["title"]],
        tags=("extract", "reasoning")),
    TaskTemplate(
        id="recipes.query_uses_ingredient", apps=("recipes",), objective="query", composition="deep_dive",
        difficulty=3, split="test", step_budget=15,
        instructions=("Which recipe in my cookbook uses {ingredient}?", "Find the recipe that calls for {ingredient}."),
        sample=pick_unique_ingredient,
        answer=lambda phone, p: AnswerSpec("choice", title_of(phone, p), choices=TITLES, hint="the recipe title"),
        hints=lambda p: [p["ingredient"]], tags=("extract", "search")),
    TaskTemplate(
        id="recipes.query_favorites_count", apps=("recipes",), objective="query", composition="atomic",
        difficulty=2, split="train", step_budget=15,
        instructions=("How many recipes are marked as favourites?", "Count my favourite recipes."),
        sample=lambda rng, phone: {},
        answer=lambda phone, p: AnswerSpec("number", float(sum(r["favorite"] for r in recipes(phone))),
                                           hint="a number"),
        evidence=lambda p, spec: [f"{spec.gold:g} favourites"], tags=("extract",)),
    TaskTemplate(
        id="recipes.favorite", apps=("recipes",), objective="operate", composition="sequential", difficulty=2,
        split="train", step_budget=15,
        instructions=("Add {title} to my favourite recipes.", "Star the {title} recipe."),
        sample=pick, setup=set_favorite(False),
        checks=lambda phone, p: [("favourite", bool(attr(phone, p["recipe"], "favorite")))],
        expected=lambda p: [path(p) + ".favorite"], hints=lambda p: [p["title"]], tags=("edit",)),
    TaskTemplate(
        id="recipes.delete", apps=("recipes",), objective="operate", composition="sequential", difficulty=2,
        split="test", step_budget=15,
        instructions=("Delete the {title} recipe.", "Remove {title} from my cookbook."),
        sample=pick, checks=lambda phone, p: [("deleted", recipe(phone, p["recipe"]) is None)],
        expected=lambda p: [path(p)], hints=lambda p: [p["title"]], tags=("delete",)),
    TaskTemplate(
        id="recipes.add", apps=("recipes",), objective="operate", composition="sequential", difficulty=3,
        split="train", step_budget=20,
        instructions=("Add a new {category} recipe called {title} that serves {servings}.",
                      "Create a recipe named {title} ({category}, {servings} servings)."),
        sample=sample_new,
        checks=lambda phone, p: [("created", bool(created(phone, p))),
                                 ("servings", any(r["servings"] == int(p["servings"]) for r in created(phone, p))),
                                 ("category", any(r["category"] == p["category"] for r in created(phone, p)))],
        expected=lambda p: ["recipes.recipes.n*"], hints=lambda p: [p["title"], p["servings"]], tags=("create",)),
    TaskTemplate(
        id="recipes.edit_servings", apps=("recipes",), objective="operate", composition="deep_dive", difficulty=3,
        split="test", step_budget=20,
        instructions=("Change {title} to make {servings} servings.", "Update the servings of {title} to {servings}."),
        sample=with_new_servings,
        checks=lambda phone, p: [("servings", attr(phone, p["recipe"], "servings") == p["servings"])],
        expected=lambda p: [path(p) + ".servings"], hints=lambda p: [p["title"], str(p["servings"])],
        tags=("edit",)),
    TaskTemplate(
        id="recipes.add_ingredient", apps=("recipes",), objective="operate", composition="deep_dive", difficulty=3,
        split="train", step_budget=20,
        instructions=("Add {ingredient} to the ingredients of {title}.",
                      "The {title} recipe also needs {ingredient}; add it to the ingredient list."),
        sample=with_new_ingredient,
        checks=lambda phone, p: [("ingredient", p["ingredient"] in [i.casefold() for i in
                                                                    attr(phone, p["recipe"], "ingredients") or []])],
        expected=lambda p: [path(p) + ".ingredients"], hints=lambda p: [p["title"], p["ingredient"]],
        tags=("edit", "search")),
    TaskTemplate(
        id="recipes.hybrid_quickest_favorite", apps=("recipes",), objective="hybrid", composition="sequential",
        difficulty=4, split="test", step_budget=20,
        instructions=("Which {category} recipe is the quickest to prepare? Tell me its title and add it to "
                      "favourites.",),
        sample=pick_hastened, setup=hasten,
        checks=lambda phone, p: [("favourite", bool(attr(phone, p["recipe"], "favorite")))],
        answer=lambda phone, p: AnswerSpec("choice", title_of(phone, p), choices=TITLES, hint="the recipe title"),
        expected=lambda p: [path(p) + ".favorite"], tags=("extract", "reasoning", "edit")),
]
