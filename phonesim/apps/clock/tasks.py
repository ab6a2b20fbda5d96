"""Clock task templates (alarms, timer, stopwatch, world clocks) and calendar → clock."""

from __future__ import annotations

import random

from phonesim.answers import AnswerSpec
from phonesim.apps.clock.world import CITIES, DAYS, all_alarms, city_time, get_alarm
from phonesim.dates import hhmm, minutes
from phonesim.records import Lookup
from phonesim.task_template import TaskTemplate, extend
from phonesim.variety import recount, regroup


ALARMS = Lookup("clock", all_alarms, get_alarm, overlay_key="alarms")
alarms, alarm, attr = ALARMS.records, ALARMS.record, ALARMS.attr


def pick_alarm(rng: random.Random, phone) -> dict:
    a = rng.choice(alarms(phone))
    return {"aid": a["id"], "time": a["time"], "label": a["label"]}


def set_on(value: bool):
    return lambda phone, p: ALARMS.edit(phone, p["aid"], on=value)


def free_time(rng: random.Random, phone) -> str:
    taken = {a["time"] for a in alarms(phone)}
    return rng.choice([t for t in (hhmm(m) for m in range(5 * 60, 23 * 60, 5)) if t not in taken])


def sample_new_alarm(rng, phone) -> dict:
    d1, d2 = sorted(rng.sample(DAYS, 2), key=DAYS.index)
    return {"time": free_time(rng, phone), "label": rng.choice(["Call mom", "Laundry", "Pick up kids", "Pills"]),
            "day1": d1, "day2": d2}


def with_new_time(base):
    return extend(base, lambda rng, phone, p: {"new_time": free_time(rng, phone)})


def created(phone) -> list[dict]:
    return [a for a in alarms(phone) if a["id"].startswith("n")]


def sample_city_shown(rng, phone) -> dict:
    return {"city": rng.choice(sorted(phone.data("clock")["clocks"])), "clock": phone.state["data"]["system"]["clock"]}


def sample_city_new(rng, phone) -> dict:
    return {"city": rng.choice([c for c in sorted(CITIES) if c not in phone.data("clock")["clocks"]])}


def sample_alarm_before_event(rng, phone) -> dict:
    from phonesim.apps.calendar.tasks import pick_event
    p = pick_event()(rng, phone)
    start = phone.world("calendar")["events"][p["eid"]]["start"]
    p["lead"] = rng.choice([15, 30, 60])
    p["alarm"] = hhmm(minutes(start) - p["lead"])
    return p


def with_switches(base):
    """Adds which of the other alarms are switched on (`switch_alarms` applies it), so the list
    around the task's alarm differs between instances."""
    return extend(base, lambda rng, phone, p: {
        "on_ids": sorted(a["id"] for a in alarms(phone) if a["id"] != p["aid"] and rng.random() < 0.5)})


def with_moved_time(base):
    """The task's alarm rings at a drawn free time instead (`switch_alarms` moves it), so its time,
    the answer, differs between instances."""
    return extend(base, lambda rng, phone, p: {"time": free_time(rng, phone)})


def switch_alarms(target_on: bool | None = None):
    """Setup: the alarms in on_ids are on and the other alarms off; the task's alarm is `target_on`
    (left as it is for None) and, if the params moved it, rings at their time."""
    def setup(phone, p):
        for a in alarms(phone):
            if a["id"] != p["aid"] and a["on"] != (a["id"] in p["on_ids"]):
                ALARMS.edit(phone, a["id"], on=a["id"] in p["on_ids"])
        target = {"on": target_on} if target_on is not None else {}
        if p["time"] != alarm(phone, p["aid"])["time"]:
            target["time"] = p["time"]
        if target:
            ALARMS.edit(phone, p["aid"], **target)
    return setup


def sample_switched_on(rng, phone) -> dict:
    """How many alarms are on (0 to all), and which."""
    everyone = alarms(phone)
    return recount(rng, [a["id"] for a in everyone if a["on"]], [a["id"] for a in everyone if not a["on"]],
                   0, len(everyone))


def alarm_path(p, key: str = "") -> str:
    return f"clock.alarms.{p['aid']}" + (f".{key}" if key else "")


TEMPLATES = [
    TaskTemplate(
        id="clock.alarm_off", apps=("clock",), objective="operate", composition="atomic", difficulty=1,
        split="train", step_budget=15, instructions=("Turn off the {time} alarm.", "Disable my {time} alarm."),
        sample=pick_alarm, setup=set_on(True),
        checks=lambda phone, p: [("off", attr(phone, p["aid"], "on") is False)],
        expected=lambda p: [alarm_path(p, "on")], tags=("settings",)),
    TaskTemplate(
        id="clock.alarm_on", apps=("clock",), objective="operate", composition="atomic", difficulty=1,
        split="test", step_budget=15, instructions=("Switch on my \"{label}\" alarm.",),
        sample=with_switches(pick_alarm), setup=switch_alarms(False),
        checks=lambda phone, p: [("on", attr(phone, p["aid"], "on") is True)],
        expected=lambda p: [alarm_path(p, "on")], tags=("settings",)),
    TaskTemplate(
        id="clock.create_alarm", apps=("clock",), objective="operate", composition="sequential", difficulty=2,
        split="train", step_budget=15, instructions=("Set an alarm for {time}.", "Wake me up at {time}: add an alarm."),
        sample=sample_new_alarm,
        checks=lambda phone, p: [("alarm", any(a["time"] == p["time"] and a["on"] for a in created(phone)))],
        expected=lambda p: ["clock.alarms.n*"], hints=lambda p: [p["time"]], tags=("create",)),
    TaskTemplate(
        id="clock.create_alarm_repeat", apps=("clock",), objective="operate", composition="sequential",
        difficulty=3, split="test", step_budget=25,
        instructions=("Add an alarm at {time} labelled \"{label}\" that repeats every {day1} and {day2}.",
                      "Create a {time} alarm named \"{label}\", repeating on {day1} and {day2}."),
        sample=sample_new_alarm,
        checks=lambda phone, p: [
            ("time", any(a["time"] == p["time"] for a in created(phone))),
            ("label", any(a["time"] == p["time"] and a["label"] == p["label"] for a in created(phone))),
            ("days", any(a["time"] == p["time"] and a["days"] == [p["day1"], p["day2"]] for a in created(phone)))],
        expected=lambda p: ["clock.alarms.n*"], hints=lambda p: [p["time"], p["label"]], tags=("create",)),
    TaskTemplate(
        id="clock.edit_alarm_time", apps=("clock",), objective="operate", composition="deep_dive", difficulty=3,
        split="train", step_budget=20,
        instructions=("Change my \"{label}\" alarm to {new_time}.",
                      "Move the \"{label}\" alarm to ring at {new_time}."),
        sample=with_new_time(pick_alarm),
        checks=lambda phone, p: [("time", attr(phone, p["aid"], "time") == p["new_time"])],
        expected=lambda p: [alarm_path(p, "time"), alarm_path(p, "on")], hints=lambda p: [p["new_time"]],
        tags=("edit",)),
    TaskTemplate(
        id="clock.delete_alarm", apps=("clock",), objective="operate", composition="sequential", difficulty=2,
        split="test", step_budget=15, instructions=("Delete the {time} alarm.", "Remove my \"{label}\" alarm."),
        sample=with_switches(pick_alarm), setup=switch_alarms(),
        checks=lambda phone, p: [("deleted", alarm(phone, p["aid"]) is None)],
        expected=lambda p: [alarm_path(p)], tags=("delete",)),
    TaskTemplate(
        id="clock.query_alarm_time", apps=("clock",), objective="query", composition="atomic", difficulty=1,
        split="train", step_budget=15, instructions=("What time is my \"{label}\" alarm set for?",),
        sample=pick_alarm,
        answer=lambda phone, p: AnswerSpec("time", alarm(phone, p["aid"])["time"], hint="a time (HH:MM, 24-hour)"),
        evidence=lambda p, spec: [f"{spec.gold}\n{p['label']} ·"], tags=("extract",)),
    TaskTemplate(
        id="clock.query_alarms_on", apps=("clock",), objective="query", composition="atomic", difficulty=2,
        split="test", step_budget=15, instructions=("How many of my alarms are switched on?",),
        sample=sample_switched_on, setup=regroup(ALARMS, lambda p: {"on": True}, lambda p: {"on": False}),
        answer=lambda phone, p: AnswerSpec("number", float(sum(a["on"] for a in alarms(phone))), hint="a number"),
        evidence=lambda p, spec: [f"{spec.gold:g} of "], tags=("extract",)),
    TaskTemplate(
        id="clock.start_timer", apps=("clock",), objective="operate", composition="sequential", difficulty=2,
        split="train", step_budget=15,
        instructions=("Start a {minutes}-minute timer.", "Set a timer for {minutes} minutes."),
        sample=lambda rng, phone: {"minutes": rng.choice([3, 5, 10, 12, 15, 20, 25, 45])},
        checks=lambda phone, p: [("running", phone.data("clock")["timer"]["running"]),
                                 ("length", phone.data("clock")["timer"]["minutes"] == p["minutes"])],
        expected=lambda p: ["clock.timer"], hints=lambda p: [str(p["minutes"])], tags=("create",)),
    TaskTemplate(
        id="clock.stopwatch_lap", apps=("clock",), objective="operate", composition="sequential", difficulty=1,
        split="train", step_budget=15, instructions=("Start the stopwatch and record one lap.",),
        sample=lambda rng, phone: {},
        checks=lambda phone, p: [("running", phone.data("clock")["stopwatch"]["running"]),
                                 ("lap", phone.data("clock")["stopwatch"]["laps"] == 1)],
        expected=lambda p: ["clock.stopwatch"], tags=("nav",)),
    TaskTemplate(
        id="clock.add_city", apps=("clock",), objective="operate", composition="sequential", difficulty=2,
        split="test", step_budget=15,
        instructions=("Add {city} to my world clocks.", "Show the time in {city} in Clock."),
        sample=sample_city_new, checks=lambda phone, p: [("added", p["city"] in phone.data("clock")["clocks"])],
        expected=lambda p: [f"clock.clocks.{p['city']}"], hints=lambda p: [p["city"]], tags=("create", "search")),
    TaskTemplate(
        id="clock.query_city_time", apps=("clock",), objective="query", composition="deep_dive", difficulty=3,
        split="train", step_budget=15, instructions=("What time is it in {city} right now?",),
        sample=sample_city_shown,
        answer=lambda phone, p: AnswerSpec("time", city_time(p["clock"], p["city"]), hint="a time (HH:MM, 24-hour)"),
        evidence=lambda p, spec: [f"{p['city']}\n{spec.gold}"], tags=("extract", "nav")),
    TaskTemplate(
        id="clock.hybrid_alarm_off", apps=("clock",), objective="hybrid", composition="sequential", difficulty=2,
        split="test", step_budget=15,
        instructions=("Tell me what time my \"{label}\" alarm rings, then switch it off.",),
        sample=with_moved_time(with_switches(pick_alarm)), setup=switch_alarms(True),
        checks=lambda phone, p: [("off", attr(phone, p["aid"], "on") is False)],
        answer=lambda phone, p: AnswerSpec("time", alarm(phone, p["aid"])["time"], hint="a time (HH:MM, 24-hour)"),
        evidence=lambda p, spec: [f"{spec.gold}\n{p['label']} ·"],
        expected=lambda p: [alarm_path(p, "on")], tags=("extract", "settings")),
    # --- cross-app -----------------------------------------------------------------------------
    TaskTemplate(
        id="clock.multi_alarm_before_event", apps=("calendar", "clock"), objective="operate",
        composition="transfer", difficulty=3, split="ood", step_budget=30,
        instructions=("Set an alarm {lead} minutes before \"{title}\" starts.",
                      "Look up when \"{title}\" begins and add an alarm {lead} minutes earlier."),
        sample=sample_alarm_before_event,
        checks=lambda phone, p: [("alarm", any(a["time"] == p["alarm"] and a["on"] for a in created(phone)))],
        expected=lambda p: ["clock.alarms.n*"], hints=lambda p: [p["alarm"]], tags=("handoff", "create")),
]
