"""The pretraining world's second app kind: apps whose records are *timed entries* (wake-up calls,
medication times, feeding schedules, shifts...), built from one declarative `TimedSpec`.

R7 (docs/base-ceiling.md) found that a base pretrained on collection apps picks the wrong kind of
action on the target's screens: it clicks where a screen asks it to type a time into an `HH:MM` field
or a query into a search field, to long-press a row, to answer from a page, or to stop on a screen
whose only cue is a confirmation. These apps show those layouts under names and entries of their own:

- the home list: one switch row per entry, its text the entry's time (HH:MM) and its second line the
  entry's title and schedule (or attribute); tapping the row opens the entry, its switch turns it on
  or off, a long press opens its menu (duplicate, delete — nowhere else); a header "N of M <plural>
  <on word>"; a search field that filters the list; a floating button that adds an entry;
- the entry's page: time, schedule and attribute as labelled values, the on/off switch, Edit;
- the add / edit form: the time typed as HH:MM, the date typed as YYYY-MM-DD (dated kinds) or week-day
  chips (repeating kinds), the title, the attribute (typed number or a choice dialog);
- a dialog confirming a delete, and a toast after every change, the only sign that a task is done.

Widgets, dialogs, toasts and the record overlay are phonesim's own, as in `phonesim.pretrain.collection`,
whose record reads (`all_items`, `get_item`) and `Attribute` these apps share. Four layout knobs
(`TimedSpec.schedule`, `.edit`, `.sub_line`, `.flag_widget`) vary what sits where.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

from phonesim import effects, records
from phonesim.app import BACK, App, Screen, Transition
from phonesim.context import Ctx
from phonesim.dates import hhmm, long_date, read_date, read_time, short_date
from phonesim.pretrain.collection import (FLAG_WIDGETS, Attribute, all_items, check_layout, check_new_titles,
                                         get_item, searched)
from phonesim.widgets import (Page, button, checkbox, fab, field_row, header, icon_button, info, item, paragraph,
                              switch, tabs, tap)

WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
SCHEDULES = ("days", "date")  # entries repeat on week days (chips), or fall on one date each (typed)
EDIT_STYLES = ("button", "icon")  # the entry page's Edit: a button below its values, or an app-bar icon
SUB_LINES = ("schedule", "attribute")  # what a row's second line shows after the title
# Dated entries fall on these four weeks. The target's dates all lie between November 2023 and May 2024 (its
# calendar's months, its files' and notes' last changes), and a long date it shows or asks for is one of its
# entities (`phonesim.disjoint`), so the pretraining world's dates lie later: no date is both worlds'.
DATES = tuple((date(2024, 6, 10) + timedelta(days=i)).isoformat() for i in range(28))
# Rows from this place on in the home list need two swipes to reach (64 dp search field, 40 dp header,
# 72 dp rows, a swipe scrolls 60 % of the 672 dp list), so typing into the search field is the shorter way.
SEARCH_FROM = 14
RESERVED_KEYS = ("id", "title", "time", "on", "days", "date")


@dataclass(frozen=True)
class TimedSpec:
    """One timed-entry app: identity, the words it uses, its entries and its layout."""

    name: str
    label: str
    package: str
    color: str
    glyph: str
    noun: str  # one entry, as instructions name it ("dose")
    plural: str
    titles: tuple[str, ...]  # the world's entries, one each
    new_titles: tuple[str, ...]  # titles an add task asks for (never in the world)
    attribute: Attribute  # one more value of an entry, on its page and in its form
    schedule: str = "days"
    hours: tuple[int, int] = (6, 22)  # entries fall between these whole hours ...
    step: int = 15  # ... on multiples of this many minutes
    on_word: str = "On"  # the entry page's switch, and the list header's last word
    time_label: str = "Time"  # the time's label on the entry page and in the form
    title_label: str = "Label"  # the title's field in the form
    copy_word: str = "Duplicate"  # the long-press menu's entries
    delete_word: str = "Delete"
    edit: str = "button"
    sub_line: str = "schedule"
    flag_widget: str = "switch"

    def __post_init__(self) -> None:
        check_layout(self.name, (self.schedule, SCHEDULES), (self.edit, EDIT_STYLES), (self.sub_line, SUB_LINES),
                     (self.flag_widget, FLAG_WIDGETS))
        check_new_titles(self.name, self.titles, self.new_titles)
        if len(self.titles) < SEARCH_FROM + 2:
            raise ValueError(f"app {self.name}: {len(self.titles)} entries leave none to search for "
                             f"(give at least {SEARCH_FROM + 2})")
        if len(self.slots) < len(self.titles) + 4:
            raise ValueError(f"app {self.name}: {len(self.slots)} times for {len(self.titles)} entries")
        if self.attribute.key in RESERVED_KEYS:
            raise ValueError(f"app {self.name}: attribute key {self.attribute.key!r} is an entry's own field")

    @property
    def slots(self) -> tuple[str, ...]:
        """Every time an entry may take (HH:MM)."""
        return tuple(hhmm(m) for m in range(self.hours[0] * 60, self.hours[1] * 60 + 1, self.step))

    @property
    def schedule_label(self) -> str:
        return "Repeats" if self.schedule == "days" else "Date"


def repeat_text(days: list[str]) -> str:
    """How a repeating entry's days read: 'One-off', 'Daily', 'Mon–Fri' or the days ('Tue, Sat')."""
    if not days:
        return "One-off"
    if len(days) == len(WEEKDAYS):
        return "Daily"
    return "Mon–Fri" if days == list(WEEKDAYS[:5]) else ", ".join(days)


def _draw_schedule(spec: TimedSpec, rng: random.Random) -> dict[str, Any]:
    if spec.schedule == "date":
        return {"date": rng.choice(DATES)}
    some = sorted(rng.sample(WEEKDAYS, rng.randint(1, 3)), key=WEEKDAYS.index)
    return {"days": rng.choice(([], list(WEEKDAYS[:5]), list(WEEKDAYS), ["Sat", "Sun"], some, some))}


# --- world ---------------------------------------------------------------------------------------

def make_world_fn(spec: TimedSpec):
    def make_world(seed: int) -> dict[str, Any]:
        rng = random.Random(f"{spec.name}:{seed}")
        items = {}
        for i, (title, time) in enumerate(zip(spec.titles, rng.sample(spec.slots, len(spec.titles))), start=1):
            rec = {"id": f"e{i}", "title": title, "time": time, "on": rng.random() < 0.5,
                   spec.attribute.key: spec.attribute.draw(rng)}
            rec.update(_draw_schedule(spec, rng))
            items[rec["id"]] = rec
        return {"items": items}
    return make_world


def initial_data(world: dict[str, Any]) -> dict[str, Any]:
    return {"items": records.overlay()}


def entries(world: dict[str, Any], data: dict[str, Any]) -> list[dict[str, Any]]:
    """The entries as the home list shows them: by date (dated kinds), then time."""
    return sorted(all_items(world, data), key=lambda r: (r.get("date", ""), r["time"], r["id"]))


def view(world: dict[str, Any], data: dict[str, Any]) -> dict[str, Any]:
    """Judge view: entries by id (overlay applied)."""
    return {"items": {r["id"]: r for r in entries(world, data)}}


# --- screens ---------------------------------------------------------------------------------------

class _Screens:
    """Screen builders and effects of one spec."""

    def __init__(self, spec: TimedSpec):
        self.spec = spec

    def schedule_text(self, rec: dict[str, Any], long: bool = False) -> str:
        if self.spec.schedule == "days":
            return repeat_text(rec["days"])
        return long_date(rec["date"]) if long else short_date(rec["date"])

    def row(self, rec: dict[str, Any]) -> Any:
        a = self.spec.attribute
        second = self.schedule_text(rec) if self.spec.sub_line == "schedule" else a.show(rec[a.key])
        row = switch(rec["time"], rec["on"], tap("toggle", eid=rec["id"]), sub=f"{rec['title']} · {second}",
                     rid=f"entry_{rec['id']}")
        row.tap = tap("open_entry", eid=rec["id"])  # the row opens the entry; its switch toggles it
        row.long_tap = tap("entry_menu", eid=rec["id"])
        return row

    def home(self, ctx: Ctx) -> Page:
        s, recs = self.spec, entries(ctx.world, ctx.data)
        rows, recs = searched(ctx, "q", f"Search {s.plural}", recs, none=f"No {s.plural} found",
                              idle=f"{sum(r['on'] for r in recs)} of {len(recs)} {s.plural} {s.on_word.lower()}")
        rows += [self.row(r) for r in recs]
        return Page(s.label, rows, up=False, fab=fab("plus", f"New {s.noun}", tap("open_create")))

    def entry(self, ctx: Ctx) -> Page:
        s, a = self.spec, self.spec.attribute
        rec = get_item(ctx.world, ctx.data, ctx.params["eid"])
        if rec is None:
            return Page(s.noun.capitalize(), [paragraph(f"This {s.noun} was deleted.")])
        eid = rec["id"]
        widget = switch if s.flag_widget == "switch" else checkbox
        rows = [info(s.time_label, rec["time"], rid="time"),
                info(s.schedule_label, self.schedule_text(rec, long=True), rid="schedule"),
                info(a.label, a.show(rec[a.key]), rid=a.key),
                widget(s.on_word, rec["on"], tap("toggle", eid=eid), rid="on")]
        actions = []
        if s.edit == "button":
            rows.append(button("Edit", tap("open_edit", eid=eid)))
        else:
            actions.append(icon_button("edit", "Edit", tap("open_edit", eid=eid)))
        return Page(rec["title"], rows, actions=actions)

    def form(self, ctx: Ctx, title: str) -> Page:
        s, a = self.spec, self.spec.attribute
        rows = [field_row("time", s.time_label, ctx.field("time"), ctx.focused("time"), hint="HH:MM")]
        if s.schedule == "date":
            rows.append(field_row("date", "Date", ctx.field("date"), ctx.focused("date"), hint="YYYY-MM-DD"))
        rows.append(field_row("title", s.title_label, ctx.field("title"), ctx.focused("title")))
        if a.numeric:
            rows.append(field_row(a.key, a.label, ctx.field(a.key), ctx.focused(a.key), hint=a.unit))
        else:
            rows.append(item(a.label, ctx.ui(a.key, a.values[0]), on_tap=tap("ask_attribute"), chevron=True,
                             rid="attribute_picker"))
        if s.schedule == "days":
            chosen = ctx.ui("days", [])
            rows += [header("Repeat on"), tabs([(d, tap("toggle_day", day=d), d in chosen) for d in WEEKDAYS])]
        rows.append(button("Save", tap("save")))
        return Page(title, rows, actions=[icon_button("check", "Save", tap("save"))])

    def edit(self, ctx: Ctx) -> Page:
        return self.form(ctx, f"Edit {self.spec.noun}")

    def create(self, ctx: Ctx) -> Page:
        return self.form(ctx, f"New {self.spec.noun}")

    # --- effects ---------------------------------------------------------------------------------

    def _attribute_into_form(self, ctx: Ctx, value: str | int) -> None:
        a = self.spec.attribute
        if a.numeric:
            ctx.set_field(a.key, str(value))
        else:
            ctx.set_ui(a.key, value)

    def open_edit(self, ctx: Ctx) -> None:
        rec = get_item(ctx.world, ctx.data, ctx.params["eid"])
        ctx.set_field("time", rec["time"])
        ctx.set_field("title", rec["title"])
        if self.spec.schedule == "date":
            ctx.set_field("date", rec["date"])
        else:
            ctx.set_ui("days", list(rec["days"]))
        self._attribute_into_form(ctx, rec[self.spec.attribute.key])

    def open_create(self, ctx: Ctx) -> None:
        a = self.spec.attribute
        if self.spec.schedule == "date":
            ctx.set_field("date", DATES[0])  # a new entry is for the schedule's first day unless changed
        self._attribute_into_form(ctx, a.numbers[0] if a.numeric else a.values[0])

    def toggle(self, ctx: Ctx, p: dict[str, Any]) -> None:
        rec = get_item(ctx.world, ctx.data, p["eid"])
        records.edited(ctx.world["items"], ctx.data["items"], rec["id"], on=not rec["on"])
        state = "off" if rec["on"] else self.spec.on_word.lower()
        ctx.toast(f"{self.spec.noun.capitalize()} at {rec['time']}: {state}")

    def toggle_day(self, ctx: Ctx, p: dict[str, Any]) -> None:
        days = ctx.ui("days", [])
        chosen = [d for d in days if d != p["day"]] if p["day"] in days else days + [p["day"]]
        ctx.set_ui("days", sorted(chosen, key=WEEKDAYS.index))

    def entry_menu(self, ctx: Ctx, p: dict[str, Any]) -> None:
        rec = get_item(ctx.world, ctx.data, p["eid"])
        ctx.dialog(rec["title"], options=[(self.spec.copy_word, tap("duplicate", eid=rec["id"]), False),
                                          (self.spec.delete_word, tap("ask_delete", eid=rec["id"]), False)])

    def duplicate(self, ctx: Ctx, p: dict[str, Any]) -> None:
        rec = get_item(ctx.world, ctx.data, p["eid"])
        records.put(ctx.data["items"], {**rec, "id": records.new_id(ctx.data["items"])})
        ctx.toast(f"{self.spec.noun.capitalize()} duplicated")

    def guard_save(self, ctx: Ctx, p: dict[str, Any]) -> str | None:
        s, a = self.spec, self.spec.attribute
        if read_time(ctx.field("time")) is None:
            return f"{s.time_label.lower()} not understood (use HH:MM)"
        if s.schedule == "date" and read_date(ctx.field("date")) is None:
            return "date not understood (use YYYY-MM-DD)"
        if not ctx.field("title").strip():
            return f"a {s.noun} needs a {s.title_label.lower()}"
        if a.numeric and not ctx.field(a.key).strip().isdigit():
            return f"{a.label} must be a whole number"
        return None

    def save(self, ctx: Ctx, p: dict[str, Any]) -> None:
        s, a = self.spec, self.spec.attribute
        values: dict[str, Any] = {"time": read_time(ctx.field("time")), "title": ctx.field("title").strip(),
                                  a.key: int(ctx.field(a.key)) if a.numeric else ctx.ui(a.key, a.values[0])}
        if s.schedule == "date":
            values["date"] = read_date(ctx.field("date"))
        else:
            values["days"] = ctx.ui("days", [])
        if ctx.page["screen"] == "edit":
            records.edited(ctx.world["items"], ctx.data["items"], ctx.params["eid"], **values)
        else:
            records.put(ctx.data["items"], {"id": records.new_id(ctx.data["items"]), "on": True, **values})
        ctx.toast(f"{s.noun.capitalize()} saved for {values['time']}")


def build_timed_app(spec: TimedSpec) -> App:
    """The App of one timed-entry spec (its templates are attached by the pretraining registry)."""
    s, a = _Screens(spec), spec.attribute
    ask_delete = effects.ask_delete(get_item, "eid", f"{spec.delete_word} this {spec.noun}?",
                                    lambda r: f"“{r['title']}” at {r['time']} will be removed.")
    delete = effects.delete("eid", f"{spec.noun.capitalize()} removed", overlay=lambda ctx: ctx.data["items"])
    forms = ("edit", "create")
    screens = [Screen("home", s.home, doc=spec.label),
               Screen("entry", s.entry, params=("eid",), doc=spec.noun.capitalize()),
               Screen("edit", s.edit, params=("eid",), doc=f"Edit {spec.noun}", on_open=s.open_edit),
               Screen("create", s.create, doc=f"New {spec.noun}", on_open=s.open_create)]
    transitions = [
        Transition("open_entry", ("home",), "entry"),
        Transition("toggle", ("home", "entry"), None, s.toggle),
        Transition("entry_menu", ("home",), None, s.entry_menu),
        Transition("duplicate", ("home",), None, s.duplicate),
        Transition("ask_delete", ("home",), None, ask_delete),
        Transition("delete", ("home",), None, delete),
        Transition("open_edit", ("entry",), "edit"),
        Transition("open_create", ("home",), "create"),
        Transition("save", forms, BACK, s.save, s.guard_save),
        Transition("dismiss", ("*",), None, None),
    ]
    if spec.schedule == "days":
        transitions.append(Transition("toggle_day", forms, None, s.toggle_day))
    if not a.numeric:
        transitions += [
            Transition("ask_attribute", forms, None,
                       effects.choice_dialog(a.label, a.key, a.values, "choose_attribute", default=a.values[0],
                                             param="value")),
            Transition("choose_attribute", forms, None, effects.set_ui_from_tap(a.key, "value"))]
    return App(name=spec.name, label=spec.label, package=spec.package, color=spec.color, glyph=spec.glyph,
               home="home", screens={x.id: x for x in screens}, transitions={t.id: t for t in transitions},
               make_world=make_world_fn(spec), initial_data=initial_data, view=view, entity_params=("eid",))
