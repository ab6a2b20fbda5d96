"""Calendar screens: month grid (day cells are tab rows) with the month's agenda, day view,
event detail, create / edit form (date and time typed in keyboard-input mode), search."""

from __future__ import annotations

import calendar as cal
from typing import Any

from phonesim import effects, records
from phonesim.app import BACK, Screen, Transition
from phonesim.apps.calendar.world import MONTHS, all_events, get_event
from phonesim.context import Ctx
from phonesim.dates import TODAY, counted, hhmm, long_date, minutes, read_date, read_time, short_date
from phonesim.widgets import (
    Page, action_bar, button, fab, field_row, header, icon_button, info, item, paragraph, search_bar, tabs, tap,
)

HOME_MONTH = MONTHS.index((TODAY.year, TODAY.month))


def event_row(e: dict[str, Any], with_date: bool = False) -> Any:
    when = f"{short_date(e['date'])} · {e['start']}" if with_date else f"{e['start']} – {e['end']}"
    return item(e["title"], f"{when} · {e['location']}", on_tap=tap("open_event", eid=e["id"]),
                rid=f"event_{e['id']}")


def build_month(ctx: Ctx) -> Page:
    year, month = MONTHS[ctx.ui("month", HOME_MONTH)]
    events = all_events(ctx.world, ctx.data)
    busy = {e["date"] for e in events}
    rows = [header("Mo   Tu   We   Th   Fr   Sa   Su")]
    for week in cal.Calendar().monthdatescalendar(year, month):
        rows.append(tabs([(f"{d.day}•" if d.isoformat() in busy else str(d.day), tap("open_day", day=d.isoformat()),
                           d == TODAY) for d in week]))
    mine = [e for e in events if e["date"][:7] == f"{year}-{month:02d}"]
    rows.append(header(f"{counted(len(mine), 'event')} in {cal.month_name[month]}"))
    rows += [event_row(e, with_date=True) for e in mine]
    return Page(f"{cal.month_name[month]} {year}", rows, up=False,
                actions=[icon_button("back", "Previous month", tap("prev_month")),
                         icon_button("chevron", "Next month", tap("next_month")),
                         icon_button("search", "Search", tap("open_search"))],
                fab=fab("plus", "New event", tap("open_create", on=TODAY.isoformat())))


def build_day(ctx: Ctx) -> Page:
    iso = ctx.params["day"]
    events = [e for e in all_events(ctx.world, ctx.data) if e["date"] == iso]
    rows = [header(f"{counted(len(events), 'event')} on {short_date(iso)}" if events else "No events")]
    rows += [event_row(e) for e in events]
    return Page(f"{short_date(iso)}, {iso[:4]}", rows, fab=fab("plus", "New event", tap("open_create", on=iso)))


def build_event(ctx: Ctx) -> Page:
    e = get_event(ctx.world, ctx.data, ctx.params["eid"])
    if e is None:
        return Page("Event", [paragraph("This event was deleted.")])
    eid = e["id"]
    return Page(e["title"], [
        action_bar([("Edit", "edit", tap("open_edit", eid=eid)), ("Delete", "delete", tap("ask_delete", eid=eid))]),
        info("Date", long_date(e["date"]), rid="date"),
        info("Starts", e["start"], rid="start"),
        info("Ends", e["end"], rid="end"),
        info("Location", e["location"] or "No location", rid="location"),
        info("Guests", ", ".join(e["guests"]) or "No guests", rid="guests"),
    ])


def _form(ctx: Ctx, title: str) -> Page:
    rows = [field_row("title", "Title", ctx.field("title"), ctx.focused("title")),
            field_row("date", "Date", ctx.field("date"), ctx.focused("date"), hint="YYYY-MM-DD"),
            field_row("time", "Start time", ctx.field("time"), ctx.focused("time"), hint="HH:MM"),
            field_row("location", "Location", ctx.field("location"), ctx.focused("location")),
            button("Save", tap("save"))]
    return Page(title, rows, actions=[icon_button("check", "Save", tap("save"))])


def build_edit(ctx: Ctx) -> Page:
    return _form(ctx, "Edit event")


def build_create(ctx: Ctx) -> Page:
    return _form(ctx, "New event")


def open_edit(ctx: Ctx) -> None:
    e = get_event(ctx.world, ctx.data, ctx.params["eid"])
    for fid, key in (("title", "title"), ("date", "date"), ("time", "start"), ("location", "location")):
        ctx.set_field(fid, e[key])


def open_create(ctx: Ctx) -> None:
    ctx.set_field("date", ctx.params["on"])


def build_search(ctx: Ctx) -> Page:
    q = ctx.field("q")
    rows = [search_bar("q", "Search events", q, ctx.focused("q"))]
    if q.strip():
        needle = q.casefold().strip()
        hits = [e for e in all_events(ctx.world, ctx.data)
                if needle in e["title"].casefold() or needle in e["location"].casefold()]
        rows.append(header(counted(len(hits), "result") if hits else "No events found"))
        rows += [event_row(e, with_date=True) for e in hits]
    return Page("Search", rows)


# --- effects ----------------------------------------------------------------------------------

def month_guard(step: int):
    def guard(ctx: Ctx, p: dict[str, Any]) -> str | None:
        return None if 0 <= ctx.ui("month", HOME_MONTH) + step < len(MONTHS) else "no events beyond this month"
    return guard


def month_step(step: int):
    def effect(ctx: Ctx, p: dict[str, Any]) -> None:
        ctx.set_ui("month", ctx.ui("month", HOME_MONTH) + step)
        ctx.page["scroll"] = 0
    return effect


ask_delete = effects.ask_delete(get_event, "eid", "Delete this event?",
                                lambda e: f"“{e['title']}” on {short_date(e['date'])} will be removed.")


delete = effects.delete("eid", "Event deleted")


def guard_save(ctx: Ctx, p: dict[str, Any]) -> str | None:
    if not ctx.field("title").strip():
        return "an event needs a title"
    if read_date(ctx.field("date")) is None:
        return "date not understood (use YYYY-MM-DD)"
    if read_time(ctx.field("time")) is None:
        return "start time not understood (use HH:MM)"
    return None


def save(ctx: Ctx, p: dict[str, Any]) -> None:
    start = read_time(ctx.field("time"))
    values = {"title": ctx.field("title").strip(), "date": read_date(ctx.field("date")), "start": start,
              "location": ctx.field("location").strip()}
    if ctx.page["screen"] == "edit":
        old = get_event(ctx.world, ctx.data, ctx.params["eid"])
        length = minutes(old["end"]) - minutes(old["start"])
        records.edited(ctx.world["events"], ctx.data, old["id"], end=hhmm(minutes(start) + length), **values)
    else:
        records.put(ctx.data, {"id": records.new_id(ctx.data), "end": hhmm(minutes(start) + 60), "guests": [],
                               **values})
    ctx.toast("Event saved")


SCREENS = {s.id: s for s in [
    Screen("month", build_month, doc="Calendar"),
    Screen("day", build_day, params=("day",), doc="Day"),
    Screen("event", build_event, params=("eid",), doc="Event details"),
    Screen("edit", build_edit, params=("eid",), doc="Edit event", on_open=open_edit),
    Screen("create", build_create, params=("on",), doc="New event", on_open=open_create),
    Screen("search", build_search, doc="Search events"),
]}

TRANSITIONS = {t.id: t for t in [
    Transition("prev_month", ("month",), None, month_step(-1), month_guard(-1)),
    Transition("next_month", ("month",), None, month_step(1), month_guard(1)),
    Transition("open_day", ("month",), "day"),
    Transition("open_event", ("month", "day", "search"), "event"),
    Transition("open_search", ("month",), "search"),
    Transition("open_create", ("month", "day"), "create"),
    Transition("open_edit", ("event",), "edit"),
    Transition("ask_delete", ("event",), None, ask_delete),
    Transition("delete", ("event",), BACK, delete),
    Transition("save", ("edit", "create"), BACK, save, guard_save),
    Transition("dismiss", ("*",), None, None),
]}
