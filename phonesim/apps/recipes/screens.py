"""Recipes screens and navigation graph (Broccoli-like): searchable list with favourites tab,
category filter and sort, recipe detail, add/edit form, ingredient list editor."""

from __future__ import annotations

from typing import Any

from phonesim import effects, records
from phonesim.app import BACK, Screen, Transition
from phonesim.apps.recipes.world import CATEGORIES, all_recipes, get_recipe
from phonesim.context import Ctx
from phonesim.widgets import (
    Page, button, fab, field_row, header, icon_button, info, item, paragraph, search_bar, tabs, tap,
)

FORM_FIELDS = (("title", "Title"), ("servings", "Servings"), ("prep", "Prep time (min)"))


def summary(r: dict[str, Any]) -> str:
    return f"{r['category']} · {r['prep']} min · {r['servings']} serving{'s' if r['servings'] != 1 else ''}"


def parse_count(text: str) -> int | None:
    text = text.strip()
    return int(text) if text.isdigit() and int(text) > 0 else None


def _matches(r: dict[str, Any], q: str) -> bool:
    return q in r["title"].casefold() or any(q in ing.casefold() for ing in r["ingredients"])


def build_list(ctx: Ctx) -> Page:
    q, tab, cat = ctx.field("q").strip().casefold(), ctx.ui("tab", "all"), ctx.ui("cat", "")
    shown = all_recipes(ctx.world, ctx.data)
    if tab == "fav":
        shown = [r for r in shown if r["favorite"]]
    if cat:
        shown = [r for r in shown if r["category"] == cat]
    if q:
        shown = [r for r in shown if _matches(r, q)]
    if ctx.ui("sort", "name") == "prep":
        shown = sorted(shown, key=lambda r: (r["prep"], r["title"].casefold()))
    noun = "favourites" if tab == "fav" else "recipes"
    rows = [search_bar("q", "Search recipes or ingredients", ctx.field("q"), ctx.focused("q")),
            tabs([("All", tap("set_tab", tab="all"), tab == "all"),
                  ("Favourites", tap("set_tab", tab="fav"), tab == "fav")]),
            header((f"{cat}: " if cat else "") + f"{len(shown)} {noun}" if shown else "No recipes found")]
    rows += [item(r["title"], summary(r), avatar=r["title"], trailing="★" if r["favorite"] else "",
                  on_tap=tap("open_detail", recipe=r["id"]), long_tap=tap("recipe_menu", recipe=r["id"]),
                  rid=f"recipe_{r['id']}") for r in shown]
    return Page("Recipes", rows, up=False,
                actions=[icon_button("menu", "Filter by category", tap("ask_filter")),
                         icon_button("more", "More options", tap("list_menu"))],
                fab=fab("plus", "Add recipe", tap("open_add")))


def build_detail(ctx: Ctx) -> Page:
    r = get_recipe(ctx.world, ctx.data, ctx.params["recipe"])
    if r is None:
        return Page("Recipe", [paragraph("This recipe no longer exists.")])
    key = r["id"]
    rows = [info("Category", r["category"], glyph="menu", rid="category"),
            info("Servings", str(r["servings"]), glyph="group", rid="servings"),
            info("Prep time", f"{r['prep']} min", glyph="⟲", rid="prep"),
            item(f"Ingredients ({len(r['ingredients'])})", "Tap to edit the list", chevron=True, glyph="edit",
                 on_tap=tap("open_ingredients", recipe=key), rid="ingredients"),
            *[paragraph(f"• {ing}") for ing in r["ingredients"]],
            header("Directions"), paragraph(r["directions"] or "No directions yet.")]
    star = icon_button("star_filled" if r["favorite"] else "star",
                       "Remove from favourites" if r["favorite"] else "Add to favourites",
                       tap("toggle_favorite", recipe=key), rid="favorite")
    return Page(r["title"], rows, actions=[star, icon_button("edit", "Edit", tap("open_edit", recipe=key)),
                                           icon_button("more", "More options", tap("detail_menu", recipe=key))])


def _form(ctx: Ctx, title: str) -> Page:
    rows = [field_row(fid, label, ctx.field(fid), ctx.focused(fid)) for fid, label in FORM_FIELDS]
    rows.append(item("Category", ctx.ui("category") or "Choose a category", on_tap=tap("ask_category"), chevron=True,
                     glyph="menu", rid="category_picker"))
    rows.append(button("Save", tap("save")))
    return Page(title, rows, actions=[icon_button("check", "Save", tap("save"))])


def open_edit(ctx: Ctx) -> None:
    r = get_recipe(ctx.world, ctx.data, ctx.params["recipe"])
    ctx.set_field("title", r["title"])
    ctx.set_field("servings", str(r["servings"]))
    ctx.set_field("prep", str(r["prep"]))
    ctx.set_ui("category", r["category"])


def build_ingredients(ctx: Ctx) -> Page:
    r = get_recipe(ctx.world, ctx.data, ctx.params["recipe"])
    if r is None:
        return Page("Ingredients", [paragraph("This recipe no longer exists.")])
    rows = [field_row("new", "New ingredient", ctx.field("new"), ctx.focused("new")),
            button("Add ingredient", tap("add_ingredient"), enabled=bool(ctx.field("new").strip())),
            header(f"{len(r['ingredients'])} ingredients · tap one to remove it")]
    rows += [item(ing, on_tap=tap("ask_remove", i=i), glyph="close", rid=f"ingredient_{i}")
             for i, ing in enumerate(r["ingredients"])]
    return Page(f"Ingredients: {r['title']}", rows)


# --- effects ----------------------------------------------------------------------------------

def _edited(ctx: Ctx, key: str) -> dict[str, Any]:
    r = dict(get_recipe(ctx.world, ctx.data, key))
    r["ingredients"] = list(r["ingredients"])
    return r


set_tab = effects.set_ui_from_tap("tab", rescroll=True)


ask_filter = effects.choice_dialog("Filter by category", "cat", ("",) + CATEGORIES, "set_filter", default="",
                                    param="category", label=lambda c: c or "All categories")


set_filter = effects.set_ui_from_tap("cat", "category", rescroll=True)


def list_menu(ctx: Ctx, p: dict[str, Any]) -> None:
    by_prep = ctx.ui("sort", "name") == "prep"
    label, key = ("Sort by name", "name") if by_prep else ("Sort by prep time", "prep")
    ctx.menu([(label, tap("set_sort", sort=key))])


set_sort = effects.set_ui_from_tap("sort", rescroll=True)


def toggle_favorite(ctx: Ctx, p: dict[str, Any]) -> None:
    r = _edited(ctx, p["recipe"])
    r["favorite"] = not r["favorite"]
    records.put(ctx.data, r)
    ctx.toast("Added to favourites" if r["favorite"] else "Removed from favourites")


detail_menu = effects.delete_menu("recipe")


def recipe_menu(ctx: Ctx, p: dict[str, Any]) -> None:
    r = get_recipe(ctx.world, ctx.data, p["recipe"])
    ctx.dialog(r["title"], options=[
        ("Remove from favourites" if r["favorite"] else "Add to favourites", tap("toggle_favorite", recipe=r["id"]),
         False),
        ("Delete", tap("ask_delete", recipe=r["id"]), False)])


ask_delete = effects.ask_delete(get_recipe, "recipe", "Delete this recipe?",
                                lambda r: f"{r['title']} will be removed from your cookbook.", detail="detail")


delete = effects.delete("recipe", "Recipe deleted")


ask_category = effects.choice_dialog("Category", "category", CATEGORIES, "pick_category")


pick_category = effects.set_ui_from_tap("category")


def guard_save(ctx: Ctx, p: dict[str, Any]) -> str | None:
    if not ctx.field("title").strip():
        return "a recipe needs a title"
    if parse_count(ctx.field("servings")) is None:
        return "servings must be a whole number"
    if ctx.field("prep").strip() and parse_count(ctx.field("prep")) is None:
        return "prep time must be a whole number of minutes"
    if not ctx.ui("category"):
        return "choose a category"
    return None


def save(ctx: Ctx, p: dict[str, Any]) -> None:
    if ctx.page["screen"] == "edit":
        record = _edited(ctx, ctx.params["recipe"])
    else:
        record = {"id": records.new_id(ctx.data), "ingredients": [], "directions": "", "favorite": False}
    record.update(title=ctx.field("title").strip(), servings=parse_count(ctx.field("servings")),
                  prep=parse_count(ctx.field("prep")) or 0, category=ctx.ui("category"))
    records.put(ctx.data, record)
    ctx.toast("Recipe saved")


def guard_ingredient(ctx: Ctx, p: dict[str, Any]) -> str | None:
    return None if ctx.field("new").strip() else "type an ingredient first"


def add_ingredient(ctx: Ctx, p: dict[str, Any]) -> None:
    r = _edited(ctx, ctx.params["recipe"])
    r["ingredients"].append(ctx.field("new").strip())
    records.put(ctx.data, r)
    ctx.set_field("new", "")
    ctx.page["focus"] = None


def ask_remove(ctx: Ctx, p: dict[str, Any]) -> None:
    r = get_recipe(ctx.world, ctx.data, ctx.params["recipe"])
    ctx.dialog(f"Remove {r['ingredients'][p['i']]}?", buttons=[("Cancel", tap("dismiss")),
                                                             ("Remove", tap("remove_ingredient", i=p["i"]))])


def remove_ingredient(ctx: Ctx, p: dict[str, Any]) -> None:
    r = _edited(ctx, ctx.params["recipe"])
    del r["ingredients"][p["i"]]
    records.put(ctx.data, r)


SCREENS = {s.id: s for s in [
    Screen("list", build_list, doc="Recipes"),
    Screen("detail", build_detail, params=("recipe",), doc="Recipe"),
    Screen("add", lambda ctx: _form(ctx, "New recipe"), doc="New recipe"),
    Screen("edit", lambda ctx: _form(ctx, "Edit recipe"), params=("recipe",), doc="Edit recipe", on_open=open_edit),
    Screen("ingredients", build_ingredients, params=("recipe",), doc="Ingredients"),
]}

TRANSITIONS = {t.id: t for t in [
    Transition("open_detail", ("list",), "detail"),
    Transition("open_add", ("list",), "add"),
    Transition("open_edit", ("detail",), "edit"),
    Transition("open_ingredients", ("detail",), "ingredients"),
    Transition("set_tab", ("list",), None, set_tab),
    Transition("ask_filter", ("list",), None, ask_filter),
    Transition("set_filter", ("list",), None, set_filter),
    Transition("list_menu", ("list",), None, list_menu),
    Transition("set_sort", ("list",), None, set_sort),
    Transition("toggle_favorite", ("list", "detail"), None, toggle_favorite),
    Transition("recipe_menu", ("list",), None, recipe_menu),
    Transition("detail_menu", ("detail",), None, detail_menu),
    *effects.delete_transitions(("list",), "detail", ask_delete, delete),
    Transition("ask_category", ("add", "edit"), None, ask_category),
    Transition("pick_category", ("add", "edit"), None, pick_category),
    Transition("save", ("add", "edit"), BACK, save, guard_save),
    Transition("add_ingredient", ("ingredients",), None, add_ingredient, guard_ingredient),
    Transition("ask_remove", ("ingredients",), None, ask_remove),
    Transition("remove_ingredient", ("ingredients",), None, remove_ingredient),
    Transition("dismiss", ("*",), None, None),
]}
