"""Clock screens: Alarm / World clock / Timer / Stopwatch tabs, alarm editor (time, label,
repeat days), city picker. Timer and stopwatch are state-based: Start / Stop / Lap change
state, no time passes."""

from __future__ import annotations

from typing import Any

from phonesim import effects, records
from phonesim.app import BACK, Screen, Transition
from phonesim.apps.clock.world import CITIES, DAYS, LOCAL_OFFSET, all_alarms, city_time, get_alarm, repeat_text
from phonesim.context import Ctx
from phonesim.dates import read_time
from phonesim.widgets import (
    Page, button, fab, field_row, header, info, item, paragraph, search_bar, switch, tabs, tap,
)

TABS = (("alarm", "Alarm"), ("world", "World"), ("timer", "Timer"), ("stopwatch", "Stopwatch"))


def offset_text(city: str) -> str:
    diff = CITIES[city] - LOCAL_OFFSET
    if diff == 0:
        return "Same time"
    hours = f"{abs(diff):g} hr"
    return f"{hours} ahead" if diff > 0 else f"{hours} behind"


def _alarm_rows(ctx: Ctx) -> list:
    alarms = all_alarms(ctx.world, ctx.data)
    rows = [header(f"{sum(a['on'] for a in alarms)} of {len(alarms)} alarms on")]
    for a in alarms:
        row = switch(a["time"], a["on"], tap("toggle_alarm", aid=a["id"]),
                     sub=f"{a['label'] or 'Alarm'} · {repeat_text(a['days'])}", rid=f"alarm_{a['id']}")
        row.tap = tap("open_alarm", aid=a["id"])  # the row opens the editor; its switch toggles
        rows.append(row)
    return rows


def _world_rows(ctx: Ctx) -> list:
    clock = ctx.system["clock"]
    rows = [info("Local time", clock, rid="local_time")]
    for city in sorted(ctx.data["clocks"], key=lambda c: (CITIES[c], c)):
        rows.append(item(city, f"{city_time(clock, city)} · {offset_text(city)}",
                         long_tap=tap("ask_remove_city", city=city), rid=f"city_{city}"))
    return rows


def _timer_rows(ctx: Ctx) -> list:
    t = ctx.data["timer"]
    if t["running"]:
        return [info("Timer", f"{t['minutes']}:00 · running", rid="timer_state"),
                button("Cancel timer", tap("cancel_timer"), primary=False)]
    return [field_row("minutes", "Minutes", ctx.field("minutes"), ctx.focused("minutes"), hint="e.g. 10"),
            button("Start", tap("start_timer"))]


def _stopwatch_rows(ctx: Ctx) -> list:
    s = ctx.data["stopwatch"]
    return [info("Stopwatch", "Running" if s["running"] else "Stopped", rid="stopwatch_state"),
            info("Laps", str(s["laps"]), rid="laps"),
            button("Stop" if s["running"] else "Start", tap("toggle_stopwatch")),
            button("Lap", tap("lap"), primary=False, enabled=s["running"]),
            button("Reset", tap("reset_stopwatch"), primary=False)]


def build_main(ctx: Ctx) -> Page:
    tab = ctx.ui("tab", "alarm")
    rows = [tabs([(label, tap("set_tab", tab=key), key == tab) for key, label in TABS])]
    rows += {"alarm": _alarm_rows, "world": _world_rows, "timer": _timer_rows, "stopwatch": _stopwatch_rows}[tab](ctx)
    action = {"alarm": fab("plus", "Add alarm", tap("open_new_alarm")),
              "world": fab("plus", "Add city", tap("open_cities"))}.get(tab)
    return Page("Clock", rows, up=False, fab=action)


def _alarm_form(ctx: Ctx, title: str, extra: list) -> Page:
    chosen = ctx.ui("days", [])
    rows = [field_row("time", "Time", ctx.field("time"), ctx.focused("time"), hint="HH:MM"),
            field_row("label", "Label", ctx.field("label"), ctx.focused("label")),
            header("Repeat"),
            tabs([(d, tap("toggle_day", day=d), d in chosen) for d in DAYS]),
            button("Save", tap("save_alarm"))] + extra
    return Page(title, rows)


def build_alarm(ctx: Ctx) -> Page:
    if get_alarm(ctx.world, ctx.data, ctx.params["aid"]) is None:
        return Page("Alarm", [paragraph("This alarm was deleted.")])
    return _alarm_form(ctx, "Edit alarm", [button("Delete alarm", tap("ask_delete", aid=ctx.params["aid"]),
                                                  primary=False)])


def build_new_alarm(ctx: Ctx) -> Page:
    return _alarm_form(ctx, "Add alarm", [])


def open_alarm(ctx: Ctx) -> None:
    a = get_alarm(ctx.world, ctx.data, ctx.params["aid"])
    ctx.set_field("time", a["time"])
    ctx.set_field("label", a["label"])
    ctx.set_ui("days", list(a["days"]))


def build_cities(ctx: Ctx) -> Page:
    q = ctx.field("q")
    shown = [c for c in sorted(CITIES) if c not in ctx.data["clocks"] and q.casefold().strip() in c.casefold()]
    rows = [search_bar("q", "Search cities", q, ctx.focused("q"))]
    rows += [item(c, offset_text(c), on_tap=tap("add_city", city=c), rid=f"pick_{c}") for c in shown]
    return Page("Add city", rows)


# --- effects ----------------------------------------------------------------------------------

def set_tab(ctx: Ctx, p: dict[str, Any]) -> None:
    ctx.set_ui("tab", p["tab"])
    ctx.page["scroll"] = 0
    ctx.page["focus"] = None


def toggle_alarm(ctx: Ctx, p: dict[str, Any]) -> None:
    a = get_alarm(ctx.world, ctx.data, p["aid"])
    records.edited(ctx.world["alarms"], ctx.data["alarms"], a["id"], on=not a["on"])
    ctx.toast(f"Alarm set for {a['time']}" if not a["on"] else "Alarm off")


def toggle_day(ctx: Ctx, p: dict[str, Any]) -> None:
    days = ctx.ui("days", [])
    chosen = [d for d in days if d != p["day"]] if p["day"] in days else days + [p["day"]]
    ctx.set_ui("days", sorted(chosen, key=DAYS.index))


def guard_alarm(ctx: Ctx, p: dict[str, Any]) -> str | None:
    return None if read_time(ctx.field("time")) else "alarm time not understood (use HH:MM)"


def save_alarm(ctx: Ctx, p: dict[str, Any]) -> None:
    values = {"time": read_time(ctx.field("time")), "label": ctx.field("label").strip(), "days": ctx.ui("days", []),
              "on": True}
    ov = ctx.data["alarms"]
    if ctx.page["screen"] == "alarm":
        records.edited(ctx.world["alarms"], ov, ctx.params["aid"], **values)
    else:
        records.put(ov, {"id": records.new_id(ov), **values})
    ctx.toast(f"Alarm set for {values['time']}")


def ask_delete(ctx: Ctx, p: dict[str, Any]) -> None:
    ctx.dialog("Delete alarm?", buttons=[("Cancel", tap("dismiss")), ("Delete", tap("delete_alarm", aid=p["aid"]))])


delete_alarm = effects.delete("aid", "Alarm deleted", overlay=lambda ctx: ctx.data["alarms"])


def add_city(ctx: Ctx, p: dict[str, Any]) -> None:
    ctx.data["clocks"][p["city"]] = True


def ask_remove_city(ctx: Ctx, p: dict[str, Any]) -> None:
    ctx.dialog(p["city"], options=[("Remove", tap("remove_city", city=p["city"]), False)])


def remove_city(ctx: Ctx, p: dict[str, Any]) -> None:
    ctx.data["clocks"].pop(p["city"], None)


def guard_timer(ctx: Ctx, p: dict[str, Any]) -> str | None:
    text = ctx.field("minutes").strip()
    return None if text.isdigit() and 0 < int(text) <= 600 else "enter the timer length in minutes (1–600)"


def start_timer(ctx: Ctx, p: dict[str, Any]) -> None:
    ctx.data["timer"] = {"minutes": int(ctx.field("minutes")), "running": True}
    ctx.set_field("minutes", "")
    ctx.page["focus"] = None


def cancel_timer(ctx: Ctx, p: dict[str, Any]) -> None:
    ctx.data["timer"] = {"minutes": 0, "running": False}


def toggle_stopwatch(ctx: Ctx, p: dict[str, Any]) -> None:
    ctx.data["stopwatch"]["running"] = not ctx.data["stopwatch"]["running"]


def lap(ctx: Ctx, p: dict[str, Any]) -> None:
    ctx.data["stopwatch"]["laps"] += 1


def reset_stopwatch(ctx: Ctx, p: dict[str, Any]) -> None:
    ctx.data["stopwatch"] = {"running": False, "laps": 0}


SCREENS = {s.id: s for s in [
    Screen("main", build_main, doc="Clock"),
    Screen("alarm", build_alarm, params=("aid",), doc="Edit alarm", on_open=open_alarm),
    Screen("new_alarm", build_new_alarm, doc="Add alarm"),
    Screen("cities", build_cities, doc="Add city"),
]}

TRANSITIONS = {t.id: t for t in [
    Transition("set_tab", ("main",), None, set_tab),
    Transition("toggle_alarm", ("main",), None, toggle_alarm),
    Transition("open_alarm", ("main",), "alarm"),
    Transition("open_new_alarm", ("main",), "new_alarm"),
    Transition("toggle_day", ("alarm", "new_alarm"), None, toggle_day),
    Transition("save_alarm", ("alarm", "new_alarm"), BACK, save_alarm, guard_alarm),
    Transition("ask_delete", ("alarm",), None, ask_delete),
    Transition("delete_alarm", ("alarm",), BACK, delete_alarm),
    Transition("open_cities", ("main",), "cities"),
    Transition("add_city", ("cities",), BACK, add_city),
    Transition("ask_remove_city", ("main",), None, ask_remove_city),
    Transition("remove_city", ("main",), None, remove_city),
    Transition("start_timer", ("main",), None, start_timer, guard_timer),
    Transition("cancel_timer", ("main",), None, cancel_timer),
    Transition("toggle_stopwatch", ("main",), None, toggle_stopwatch),
    Transition("lap", ("main",), None, lap),
    Transition("reset_stopwatch", ("main",), None, reset_stopwatch),
    Transition("dismiss", ("*",), None, None),
]}
