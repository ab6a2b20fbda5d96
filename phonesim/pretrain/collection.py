"""The pretraining world's apps: one declarative "collection app" built from a `CollectionSpec`.

Every pretraining app keeps a collection of records (plants, albums, trails...) with a title, a
group (shelf, room, region...), a few attributes, a flag and a pin: a home list with search, the
groups and their records, a record's page, edit and create forms, a confirmation before deleting,
a long-press dialog, and the app's own preferences (switches, a choice, a version). Widgets,
dialogs and the navigation graph are phonesim's own (`phonesim.widgets`, `phonesim.effects`), so
the skills these apps exercise — moving through menus and lists, opening and operating items,
forms and toggles, reading a value — are the skills the target apps need, on content of their own.
Three layout knobs (`CollectionSpec.detail`, `.groups`, `.flag_widget`) vary where things sit, so
that no single arrangement is all the pretrained policy knows.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any, Callable

from phonesim import effects, records
from phonesim.app import BACK, App, Screen, Transition
from phonesim.context import Ctx
from phonesim.dates import counted
from phonesim.widgets import (Page, action_bar, button, checkbox, fab, field_row, header, icon_button, info, item,
                              paragraph, search_bar, switch, tabs, tap)

DETAIL_STYLES = ("bar", "buttons", "menu")  # the record page's actions: icon bar, buttons below, overflow menu
GROUP_STYLES = ("screen", "tabs")  # groups on a screen of their own, or as tabs of the home list
FLAG_WIDGETS = ("switch", "checkbox")


def check_layout(app: str, *knobs: tuple[str, tuple[str, ...]]) -> None:
    """Raises naming `app` when a layout knob's value (each knob: value, its choices) is none of its choices."""
    if any(value not in choices for value, choices in knobs):
        raise ValueError(f"app {app}: unknown layout {'/'.join(value for value, _ in knobs)}")


def check_new_titles(app: str, titles: tuple[str, ...], new_titles: tuple[str, ...]) -> None:
    """Raises naming `app` when titles repeat or a title a task creates is already in the world."""
    if len(set(titles) | set(new_titles)) != len(titles) + len(new_titles):
        raise ValueError(f"app {app}: titles repeat, or a new title is already in the world")


@dataclass(frozen=True)
class Attribute:
    """A record field shown on its page and editable in its form: text drawn from `values`, or a
    whole number in `numbers` shown with `unit`."""

    key: str
    label: str
    values: tuple[str, ...] = ()
    numbers: tuple[int, int] | None = None
    unit: str = ""

    def __post_init__(self) -> None:
        if bool(self.values) == (self.numbers is not None):
            raise ValueError(f"attribute {self.key}: give text values or a number range, not both or neither")

    @property
    def numeric(self) -> bool:
        return self.numbers is not None

    def draw(self, rng: random.Random) -> str | int:
        return rng.randint(*self.numbers) if self.numeric else rng.choice(self.values)

    def show(self, value: str | int) -> str:
        return f"{value} {self.unit}".strip() if self.numeric else str(value)


@dataclass(frozen=True)
class CollectionSpec:
    """One pretraining app: identity, the words it uses, its records and its layout."""

    name: str
    label: str
    package: str
    color: str
    glyph: str
    noun: str  # one record, as instructions name it ("plant")
    plural: str
    titles: tuple[str, ...]  # the world's records
    new_titles: tuple[str, ...]  # titles a create task asks for (never in the world)
    group: Attribute  # the choice that sorts records into groups
    groups_label: str  # what the groups are called together ("Rooms")
    attributes: tuple[Attribute, ...]
    flag: str  # the record's on/off property, as its switch reads ("Watered")
    flag_on: str  # instruction phrase setting it, with {title} ("mark \"{title}\" as watered")
    flag_off: str
    pin: str  # the verb of the pin ("Pin", "Star"); its list tab is pin + "ned"/"red" etc.
    pinned: str
    options: tuple[str, ...]  # the preferences' switches
    choice: str  # a preferences choice ...
    choices: tuple[str, ...]  # ... and its options
    version: str
    detail: str = "bar"
    groups: str = "screen"
    flag_widget: str = "switch"

    def __post_init__(self) -> None:
        check_layout(self.name, (self.detail, DETAIL_STYLES), (self.groups, GROUP_STYLES),
                     (self.flag_widget, FLAG_WIDGETS))
        check_new_titles(self.name, self.titles, self.new_titles)


# --- world ---------------------------------------------------------------------------------------

def make_world_fn(spec: CollectionSpec):
    def make_world(seed: int) -> dict[str, Any]:
        rng = random.Random(f"{spec.name}:{seed}")
        items = {}
        for i, title in enumerate(spec.titles, start=1):
            rec = {"id": f"r{i}", "title": title, "group": spec.group.draw(rng), "flag": rng.random() < 0.4,
                   "pin": rng.random() < 0.3}
            rec.update({a.key: a.draw(rng) for a in spec.attributes})
            items[rec["id"]] = rec
        return {"items": items, "options": {o: rng.random() < 0.5 for o in spec.options},
                "choice": rng.choice(spec.choices)}
    return make_world


def initial_data(world: dict[str, Any]) -> dict[str, Any]:
    return {"items": records.overlay(), "options": dict(world["options"]), "choice": world["choice"]}


def all_items(world: dict[str, Any], data: dict[str, Any]) -> list[dict[str, Any]]:
    return records.merged(world["items"], data["items"])


def get_item(world: dict[str, Any], data: dict[str, Any], rid: str) -> dict[str, Any] | None:
    return records.get(world["items"], data["items"], rid)


def searched(ctx: Ctx, fid: str, hint: str, recs: list[dict[str, Any]], idle: str, none: str,
             match: Callable[[dict[str, Any], str], bool] = lambda r, needle: needle in r["title"].casefold()
             ) -> tuple[list[Any], list[dict[str, Any]]]:
    """A list's search field over `recs` and its header: the records `match` keeps for the field's text
    (lower case), under "N results" (or `none`), or every record under `idle` while the field is empty.
    The other app kinds' lists (`phonesim.pretrain.timed`, `phonesim.pretrain.conversations`) share it."""
    q = ctx.field(fid)
    rows = [search_bar(fid, hint, q, ctx.focused(fid))]
    if not q.strip():
        return rows + [header(idle)], recs
    recs = [r for r in recs if match(r, q.casefold().strip())]
    return rows + [header(counted(len(recs), "result") if recs else none)], recs


def view(world: dict[str, Any], data: dict[str, Any]) -> dict[str, Any]:
    """Judge view: records by id (overlay applied), the preferences."""
    return {"items": {r["id"]: r for r in all_items(world, data)}, "options": data["options"],
            "choice": data["choice"]}


# --- screens ---------------------------------------------------------------------------------------

class _Screens:
    """Screen builders and effects of one spec (closures would do; a class keeps them named)."""

    def __init__(self, spec: CollectionSpec):
        self.spec = spec

    def row(self, rec: dict[str, Any]) -> Any:
        first = self.spec.attributes[0]
        sub = f"{rec['group']} · {first.show(rec[first.key])}"
        return item(rec["title"], sub, on_tap=tap("open_item", rid=rec["id"]), long_tap=tap("item_menu", rid=rec["id"]),
                    glyph="star" if rec["pin"] else None, rid=f"item_{rec['id']}")

    def home(self, ctx: Ctx) -> Page:
        s, q = self.spec, ctx.field("q")
        recs = all_items(ctx.world, ctx.data)
        rows = [search_bar("q", f"Search {s.plural}", q, ctx.focused("q"))]
        actions = [icon_button("settings", "Preferences", tap("open_prefs"))]
        if q.strip():
            hits = [r for r in recs if q.casefold().strip() in r["title"].casefold()]
            rows.append(header(counted(len(hits), "match", "matches") if hits else f"No {s.plural} found"))
            rows += [self.row(r) for r in hits]
        else:
            shown = ctx.ui("tab", "All")
            keys = ["All", s.pinned] + (list(s.group.values) if s.groups == "tabs" else [])
            rows.append(tabs([(k, tap("set_tab", tab=k), k == shown) for k in keys[:4]]))
            actions.insert(0, icon_button("menu", s.groups_label, tap("open_groups")))
            if shown == s.pinned:
                recs = [r for r in recs if r["pin"]]
            elif shown != "All":
                recs = [r for r in recs if r["group"] == shown]
            rows.append(header(counted(len(recs), s.noun, s.plural)))
            rows += [self.row(r) for r in recs]
        return Page(s.label, rows, up=False, actions=actions, fab=fab("plus", f"New {s.noun}", tap("open_create")))

    def groups(self, ctx: Ctx) -> Page:
        recs, s = all_items(ctx.world, ctx.data), self.spec
        rows = [item(g, counted(sum(r["group"] == g for r in recs), s.noun, s.plural), on_tap=tap("open_group", grp=g),
                     chevron=True, rid=f"group_{i}") for i, g in enumerate(s.group.values)]
        return Page(self.spec.groups_label, rows)

    def group(self, ctx: Ctx) -> Page:
        grp = ctx.params["grp"]
        recs = [r for r in all_items(ctx.world, ctx.data) if r["group"] == grp]
        return Page(grp, [header(counted(len(recs), self.spec.noun, self.spec.plural))] + [self.row(r) for r in recs])

    def detail(self, ctx: Ctx) -> Page:
        s = self.spec
        rec = get_item(ctx.world, ctx.data, ctx.params["rid"])
        if rec is None:
            return Page(s.noun.capitalize(), [paragraph(f"This {s.noun} was deleted.")])
        rid = rec["id"]
        pin = f"Un{s.pin.lower()}" if rec["pin"] else s.pin
        buttons = [(pin, "star", tap("toggle_pin", rid=rid)), ("Edit", "edit", tap("open_edit", rid=rid)),
                   ("Delete", "delete", tap("ask_delete", rid=rid))]
        rows, actions = [], []
        if s.detail == "bar":
            rows.append(action_bar(buttons))
        elif s.detail == "menu":
            actions.append(icon_button("more", "More options", tap("detail_menu", rid=rid)))
        rows.append(info(s.group.label, rec["group"], on_tap=tap("ask_group", rid=rid), rid="group"))
        rows += [info(a.label, a.show(rec[a.key]), rid=a.key) for a in s.attributes]
        widget = switch if s.flag_widget == "switch" else checkbox
        rows.append(widget(s.flag, rec["flag"], tap("toggle_flag", rid=rid), rid="flag"))
        if s.detail == "buttons":
            rows += [button(text, t, primary=text != "Delete") for text, _, t in buttons]
        elif s.detail == "menu":
            rows.append(button("Edit", tap("open_edit", rid=rid)))
        return Page(rec["title"], rows, actions=actions)

    def form(self, ctx: Ctx, title: str) -> Page:
        s = self.spec
        rows = [field_row("title", "Title", ctx.field("title"), ctx.focused("title"))]
        rows += [field_row(a.key, a.label, ctx.field(a.key), ctx.focused(a.key), hint=a.unit) for a in s.attributes]
        rows += [item(s.group.label, ctx.ui("group", s.group.values[0]), on_tap=tap("ask_form_group"), chevron=True,
                      rid="group_picker"), button("Save", tap("save"))]
        return Page(title, rows, actions=[icon_button("check", "Save", tap("save"))])

    def edit(self, ctx: Ctx) -> Page:
        return self.form(ctx, f"Edit {self.spec.noun}")

    def create(self, ctx: Ctx) -> Page:
        return self.form(ctx, f"New {self.spec.noun}")

    def prefs(self, ctx: Ctx) -> Page:
        s = self.spec
        rows = [switch(o, ctx.data["options"][o], tap("toggle_option", opt=o), rid=f"opt_{i}")
                for i, o in enumerate(s.options)]
        rows += [item(s.choice, ctx.data["choice"], on_tap=tap("ask_choice"), chevron=True, rid="choice"),
                 info("Version", s.version, rid="version")]
        return Page("Preferences", rows)

    # --- effects ---------------------------------------------------------------------------------

    def open_edit(self, ctx: Ctx) -> None:
        rec = get_item(ctx.world, ctx.data, ctx.params["rid"])
        ctx.set_field("title", rec["title"])
        for a in self.spec.attributes:
            ctx.set_field(a.key, str(rec[a.key]))
        ctx.set_ui("group", rec["group"])

    def toggle_pin(self, ctx: Ctx, p: dict[str, Any]) -> None:
        rec = get_item(ctx.world, ctx.data, p["rid"])
        records.edited(ctx.world["items"], ctx.data["items"], rec["id"], pin=not rec["pin"])
        ctx.toast(f"Un{self.spec.pinned.lower()}" if rec["pin"] else self.spec.pinned)

    def toggle_flag(self, ctx: Ctx, p: dict[str, Any]) -> None:
        rec = get_item(ctx.world, ctx.data, p["rid"])
        records.edited(ctx.world["items"], ctx.data["items"], rec["id"], flag=not rec["flag"])

    def item_menu(self, ctx: Ctx, p: dict[str, Any]) -> None:
        rec = get_item(ctx.world, ctx.data, p["rid"])
        pin = f"Un{self.spec.pin.lower()}" if rec["pin"] else self.spec.pin
        ctx.dialog(rec["title"], options=[(pin, tap("toggle_pin", rid=rec["id"]), False),
                                          ("Delete", tap("ask_delete", rid=rec["id"]), False)])

    def detail_menu(self, ctx: Ctx, p: dict[str, Any]) -> None:
        rec = get_item(ctx.world, ctx.data, p["rid"])
        pin = f"Un{self.spec.pin.lower()}" if rec["pin"] else self.spec.pin
        ctx.menu([(pin, tap("toggle_pin", rid=rec["id"])), ("Delete", tap("ask_delete", rid=rec["id"]))])

    def ask_group(self, ctx: Ctx, p: dict[str, Any]) -> None:
        rec = get_item(ctx.world, ctx.data, p["rid"])
        ctx.dialog(self.spec.group.label, options=[(g, tap("set_group", rid=rec["id"], grp=g), g == rec["group"])
                                                   for g in self.spec.group.values],
                   buttons=[("Cancel", tap("dismiss"))])

    def set_group(self, ctx: Ctx, p: dict[str, Any]) -> None:
        records.edited(ctx.world["items"], ctx.data["items"], p["rid"], group=p["grp"])

    def toggle_option(self, ctx: Ctx, p: dict[str, Any]) -> None:
        ctx.data["options"][p["opt"]] = not ctx.data["options"][p["opt"]]

    def ask_choice(self, ctx: Ctx, p: dict[str, Any]) -> None:
        ctx.dialog(self.spec.choice, options=[(c, tap("set_choice", value=c), c == ctx.data["choice"])
                                              for c in self.spec.choices], buttons=[("Cancel", tap("dismiss"))])

    def set_choice(self, ctx: Ctx, p: dict[str, Any]) -> None:
        ctx.data["choice"] = p["value"]

    def guard_save(self, ctx: Ctx, p: dict[str, Any]) -> str | None:
        if not ctx.field("title").strip():
            return f"a {self.spec.noun} needs a title"
        bad = [a.label for a in self.spec.attributes if a.numeric and not ctx.field(a.key).strip().isdigit()]
        return f"{bad[0]} must be a whole number" if bad else None

    def save(self, ctx: Ctx, p: dict[str, Any]) -> None:
        values: dict[str, Any] = {"title": ctx.field("title").strip(),
                                  "group": ctx.ui("group", self.spec.group.values[0])}
        for a in self.spec.attributes:
            text = ctx.field(a.key).strip()
            values[a.key] = int(text) if a.numeric else text
        if ctx.page["screen"] == "edit":
            records.edited(ctx.world["items"], ctx.data["items"], ctx.params["rid"], **values)
        else:
            records.put(ctx.data["items"], {"id": records.new_id(ctx.data["items"]), "flag": False, "pin": False,
                                            **values})
        ctx.toast(f"{self.spec.noun.capitalize()} saved")


def build_app(spec: CollectionSpec) -> App:
    """The App of one collection spec (its templates are attached by the pretraining registry)."""
    s = _Screens(spec)
    lists = ("home", "group")
    ask_delete = effects.ask_delete(get_item, "rid", f"Delete this {spec.noun}?",
                                    lambda r: f"“{r['title']}” will be removed.", detail="item")
    delete = effects.delete("rid", f"{spec.noun.capitalize()} deleted", overlay=lambda ctx: ctx.data["items"])
    screens = [Screen("home", s.home, doc=spec.label), Screen("groups", s.groups, doc=spec.groups_label),
               Screen("group", s.group, params=("grp",), doc=spec.group.label),
               Screen("item", s.detail, params=("rid",), doc=spec.noun.capitalize()),
               Screen("edit", s.edit, params=("rid",), doc=f"Edit {spec.noun}", on_open=s.open_edit),
               Screen("create", s.create, doc=f"New {spec.noun}"),
               Screen("prefs", s.prefs, doc="Preferences")]
    transitions = [
        Transition("set_tab", ("home",), None, effects.set_ui_from_tap("tab", rescroll=True)),
        Transition("open_groups", ("home",), "groups"),
        Transition("open_group", ("groups",), "group"),
        Transition("open_item", lists, "item"),
        Transition("open_edit", ("item",), "edit"),
        Transition("open_create", ("home",), "create"),
        Transition("open_prefs", ("home",), "prefs"),
        Transition("toggle_pin", lists + ("item",), None, s.toggle_pin),
        Transition("toggle_flag", ("item",), None, s.toggle_flag),
        Transition("item_menu", lists, None, s.item_menu),
        Transition("detail_menu", ("item",), None, s.detail_menu),
        *effects.delete_transitions(lists, "item", ask_delete, delete),
        Transition("ask_group", ("item",), None, s.ask_group),
        Transition("set_group", ("item",), None, s.set_group),
        Transition("ask_form_group", ("edit", "create"), None,
                   effects.choice_dialog(spec.group.label, "group", spec.group.values, "choose_group",
                                         default=spec.group.values[0], param="grp")),
        Transition("choose_group", ("edit", "create"), None, effects.set_ui_from_tap("group", "grp")),
        Transition("save", ("edit", "create"), BACK, s.save, s.guard_save),
        Transition("toggle_option", ("prefs",), None, s.toggle_option),
        Transition("ask_choice", ("prefs",), None, s.ask_choice),
        Transition("set_choice", ("prefs",), None, s.set_choice),
        Transition("dismiss", ("*",), None, None),
    ]
    return App(name=spec.name, label=spec.label, package=spec.package, color=spec.color, glyph=spec.glyph,
               home="home", screens={x.id: x for x in screens}, transitions={t.id: t for t in transitions},
               make_world=make_world_fn(spec), initial_data=initial_data, view=view, entity_params=("rid", "grp"))
