"""Calendar task templates (queries on events, create / reschedule / delete)."""

from __future__ import annotations

import random

from phonesim.answers import AnswerSpec
from phonesim.apps.calendar.world import NEW_TITLES, all_events, get_event
from phonesim.dates import TODAY, counted, day, hhmm, long_date, short_date
from phonesim.records import Lookup
from phonesim.task_template import TaskTemplate, extend
from phonesim.variety import recount, regroup

THIS_MONTH = TODAY.isoformat()[:7]


EVENTS = Lookup("calendar", all_events, get_event)
events, event, attr = EVENTS.records, EVENTS.record, EVENTS.attr


def in_this_month(e: dict) -> bool:
    return e["date"][:7] == THIS_MONTH


def pick_event(where=lambda e: True):
    """Sampler choosing one event: its id, title, ISO date and long date."""
    def sample(rng: random.Random, phone) -> dict:
        e = rng.choice([e for e in events(phone) if where(e)])
        return {"eid": e["id"], "title": e["title"], "date": e["date"], "date_long": long_date(e["date"])}
    return sample


def sample_busy_day(rng, phone) -> dict:
    days = sorted({e["date"] for e in events(phone) if in_this_month(e)})
    iso = rng.choice(days)
    return {"day": iso, "date_long": long_date(iso)}


def sample_day_load(rng, phone) -> dict:
    """A busy day this month and how many events it has (1..7): other events move onto it, or some
    of its own move to another day this month (`elsewhere`), so the count differs between instances."""
    p = sample_busy_day(rng, phone)
    everyone = events(phone)
    p["elsewhere"] = rng.choice(sorted({e["date"] for e in everyone if in_this_month(e)} - {p["day"]}))
    return p | recount(rng, [e["id"] for e in everyone if e["date"] == p["day"]],
                       [e["id"] for e in everyone if e["date"] != p["day"]], 1, 7)


def sample_new(rng, phone) -> dict:
    iso = day(rng.randint(1, 25))
    while iso[:7] != THIS_MONTH:
        iso = day(rng.randint(1, 25))
    return {"title": rng.choice(NEW_TITLES), "date": iso, "date_long": long_date(iso),
            "time": hhmm(rng.randrange(8 * 60, 20 * 60, 30)), "location": rng.choice(["Cafe Luna", "Office", "Home"])}


def with_new_time(base):
    def add(rng, phone, p):
        current = event(phone, p["eid"])["start"]
        return {"time": rng.choice([t for t in (hhmm(m) for m in range(8 * 60, 20 * 60, 30)) if t != current])}
    return extend(base, add)


def with_guests(base):
    """Adds the guest line as shown on the event screen (the evidence for counting them)."""
    return extend(base, lambda rng, phone, p: {"guests": ", ".join(event(phone, p["eid"])["guests"])})


def sample_meet_event(rng, phone) -> dict:
    """A conversation in which the contact proposed a time, and a day this month to meet."""
    p = sample_new(rng, phone)
    thread = rng.choice([t for t in phone.world("sms")["threads"].values() if "time" in t["facts"]])
    p.update(cid=thread["cid"], name=thread["name"], time=thread["facts"]["time"],
             title=f"Meet {thread['name'].split()[0]}")
    return p


def created(phone, title: str) -> list[dict]:
    return [e for e in events(phone) if e["id"].startswith("n") and e["title"].casefold() == title.casefold()]


def path(p, key: str = "") -> str:
    return f"calendar.events.{p['eid']}" + (f".{key}" if key else "")


TEMPLATES = [
    TaskTemplate(
        id="calendar.query_date", apps=("calendar",), objective="query", composition="deep_dive", difficulty=2,
        split="train", step_budget=15,
        instructions=("On which date is \"{title}\"?", "When is my \"{title}\" event?"),
        sample=pick_event(),
        answer=lambda phone, p: AnswerSpec("date", p["date"], hint="a date (YYYY-MM-DD)"),
        evidence=lambda p, spec: [long_date(spec.gold)], hints=lambda p: [p["title"]], tags=("extract", "search")),
    TaskTemplate(
        id="calendar.query_start", apps=("calendar",), objective="query", composition="deep_dive", difficulty=2,
        split="test", step_budget=15,
        instructions=("What time does \"{title}\" start?", "At what time is \"{title}\"?"),
        sample=pick_event(),
        answer=lambda phone, p: AnswerSpec("time", event(phone, p["eid"])["start"], hint="a time (HH:MM, 24-hour)"),
        evidence=lambda p, spec: [f"Starts\n{spec.gold}"], hints=lambda p: [p["title"]], tags=("extract", "search")),
    TaskTemplate(
        id="calendar.query_location", apps=("calendar",), objective="query", composition="deep_dive", difficulty=2,
        split="train", step_budget=15, instructions=("Where does \"{title}\" take place?",),
        sample=pick_event(),
        answer=lambda phone, p: AnswerSpec("text", event(phone, p["eid"])["location"], hint="the location"),
        evidence=lambda p, spec: [f"Location\n{spec.gold}"], hints=lambda p: [p["title"]], tags=("extract",)),
    TaskTemplate(
        id="calendar.query_guest_count", apps=("calendar",), objective="query", composition="deep_dive",
        difficulty=3, split="train", step_budget=15,
        instructions=("How many guests are invited to \"{title}\"?",),
        sample=with_guests(pick_event(lambda e: bool(e["guests"]))),
        answer=lambda phone, p: AnswerSpec("number", float(len(event(phone, p["eid"])["guests"])), hint="a number"),
        evidence=lambda p, spec: [f"Guests\n{p['guests']}"],
        hints=lambda p: [p["title"]], tags=("extract", "reasoning")),
    TaskTemplate(
        id="calendar.query_day_count", apps=("calendar",), objective="query", composition="deep_dive",
        difficulty=3, split="test", step_budget=15, instructions=("How many events do I have on {date_long}?",),
        sample=sample_day_load,
        setup=regroup(EVENTS, lambda p: {"date": p["day"]}, lambda p: {"date": p["elsewhere"]}),
        answer=lambda phone, p: AnswerSpec("number", float(sum(e["date"] == p["day"] for e in events(phone))),
                                           hint="a number"),
        evidence=lambda p, spec: [f"{counted(int(spec.gold), 'event')} on {short_date(p['day'])}"],
        tags=("extract", "nav")),
    TaskTemplate(
        id="calendar.create", apps=("calendar",), objective="operate", composition="sequential", difficulty=3,
        split="train", step_budget=25,
        instructions=("Add an event \"{title}\" on {date_long} at {time}.",
                      "Schedule \"{title}\" for {date_long}, starting at {time}."),
        sample=sample_new,
        checks=lambda phone, p: [("created", bool(created(phone, p["title"]))),
                                 ("date", any(e["date"] == p["date"] for e in created(phone, p["title"]))),
                                 ("time", any(e["start"] == p["time"] for e in created(phone, p["title"])))],
        expected=lambda p: ["calendar.events.n*"], hints=lambda p: [p["title"], p["time"]], tags=("create",)),
    TaskTemplate(
        id="calendar.reschedule", apps=("calendar",), objective="operate", composition="deep_dive", difficulty=3,
        split="test", step_budget=25,
        instructions=("Move \"{title}\" to start at {time} (same day).", "Reschedule \"{title}\" to {time}."),
        sample=with_new_time(pick_event(in_this_month)),
        checks=lambda phone, p: [("start", attr(phone, p["eid"], "start") == p["time"]),
                                 ("same day", attr(phone, p["eid"], "date") == p["date"])],
        expected=lambda p: [path(p, "start"), path(p, "end")], hints=lambda p: [p["time"]], tags=("edit",)),
    TaskTemplate(
        id="calendar.delete", apps=("calendar",), objective="operate", composition="sequential", difficulty=2,
        split="train", step_budget=20,
        instructions=("Delete the event \"{title}\" on {date_long}.", "Remove \"{title}\" from my calendar."),
        sample=pick_event(in_this_month), checks=lambda phone, p: [("deleted", event(phone, p["eid"]) is None)],
        expected=lambda p: [path(p)], hints=lambda p: [p["title"]], tags=("delete",)),
    TaskTemplate(
        id="calendar.hybrid_location_delete", apps=("calendar",), objective="hybrid", composition="sequential",
        difficulty=3, split="test", step_budget=20,
        instructions=("Tell me where \"{title}\" was going to be held, then delete the event.",),
        sample=pick_event(in_this_month), checks=lambda phone, p: [("deleted", event(phone, p["eid"]) is None)],
        answer=lambda phone, p: AnswerSpec("text", event(phone, p["eid"])["location"], hint="the location"),
        evidence=lambda p, spec: [f"Location\n{spec.gold}"],
        expected=lambda p: [path(p)], hints=lambda p: [p["title"]], tags=("extract", "delete")),
    # --- cross-app -----------------------------------------------------------------------------
    TaskTemplate(
        id="calendar.multi_meet_from_sms", apps=("sms", "calendar"), objective="operate", composition="transfer",
        difficulty=4, split="ood", step_budget=30,
        instructions=("{name} texted me the time we'd see each other. Add an event \"{title}\" on {date_long} "
                      "at that time.",
                      "Check Messages for the time {name} suggested and schedule \"{title}\" on {date_long} then."),
        sample=sample_meet_event,
        checks=lambda phone, p: [("created", bool(created(phone, p["title"]))),
                                 ("date", any(e["date"] == p["date"] for e in created(phone, p["title"]))),
                                 ("time", any(e["start"] == p["time"] for e in created(phone, p["title"])))],
        expected=lambda p: ["calendar.events.n*"], hints=lambda p: [p["title"], p["time"]],
        tags=("handoff", "create")),
]
