"""Calendar world data: events from February to May 2024 (title, date, start, end, location,
guests drawn from the contacts world) and the runtime overlay that edits them."""

from __future__ import annotations

import random
from datetime import date
from typing import Any

from phonesim import records
from phonesim.apps.contacts.world import make_world as contacts_world
from phonesim.dates import hhmm

MONTHS = ((2024, 2), (2024, 3), (2024, 4), (2024, 5))  # navigable months; March holds "today"
EVENTS_PER_MONTH = (8, 16, 10, 8)
TITLES = ["Team standup", "Dentist appointment", "Project review", "Yoga class", "Car service", "Book club",
          "Quarterly planning", "Doctor checkup", "Piano lesson", "Haircut", "Budget meeting", "Movie night",
          "Soccer practice", "Design workshop", "Parent-teacher meeting", "Farmers market", "Flight to Denver",
          "Board game night", "Sprint retro", "Volunteer shift", "Guitar lesson", "Tax appointment",
          "Product launch", "Wine tasting", "Hiking trip", "Vet appointment", "Concert", "Job interview",
          "Marathon training", "Pottery class", "Client call", "Team offsite", "Open house", "Cooking class",
          "Museum visit", "Plumber visit", "Chess club", "Swim lesson", "Salsa night", "Photo walk", "Climbing gym",
          "Charity run", "Career fair", "Trivia night"]
PEOPLE_TITLES = ["Lunch with {first}", "Coffee with {first}", "Dinner with {first}", "Call with {first}",
                 "Birthday party for {first}"]
LOCATIONS = ["Room 4B", "Main St Clinic", "Cafe Luna", "Google Meet", "City Gym", "Home", "Office", "Central Library",
             "Riverside Park", "Harbor Hall", "Union Station", "Blue Door Bistro"]
# Titles for events the user creates (never in the world).
NEW_TITLES = ["Team dinner", "Passport renewal", "Gym session", "Call grandma", "Study group", "Bike repair",
              "Apartment viewing", "Photography class", "Kids' recital", "Language exchange"]


def make_world(seed: int) -> dict[str, Any]:
    rng = random.Random(f"calendar:{seed}")
    people = list(contacts_world(seed)["contacts"].values())
    titles = TITLES[:]
    rng.shuffle(titles)
    events: dict[str, dict[str, Any]] = {}
    used: set[str] = set()
    for (year, month), n in zip(MONTHS, EVENTS_PER_MONTH):
        for _ in range(n):
            if rng.random() < 0.3 or not titles:
                title = rng.choice(PEOPLE_TITLES).format(first=rng.choice(people)["first"])
            else:
                title = titles.pop()
            if title in used:
                continue
            used.add(title)
            start = rng.randrange(7 * 60, 20 * 60, 15)
            eid = f"e{len(events) + 1}"
            events[eid] = {
                "id": eid, "title": title, "date": date(year, month, rng.randint(1, 28)).isoformat(),
                "start": hhmm(start), "end": hhmm(start + rng.choice([30, 45, 60, 90, 120])),
                "location": rng.choice(LOCATIONS),
                "guests": sorted(f"{c['first']} {c['last']}" for c in rng.sample(people, rng.randint(0, 3))),
            }
    return {"events": events}


def initial_data(world: dict[str, Any]) -> dict[str, Any]:
    return records.overlay()


def all_events(world: dict[str, Any], data: dict[str, Any]) -> list[dict[str, Any]]:
    """Events sorted by date and start time."""
    return sorted(records.merged(world["events"], data), key=lambda e: (e["date"], e["start"], e["id"]))


def get_event(world: dict[str, Any], data: dict[str, Any], eid: str) -> dict[str, Any] | None:
    return records.get(world["events"], data, eid)


def view(world: dict[str, Any], data: dict[str, Any]) -> dict[str, Any]:
    return {"events": {e["id"]: e for e in all_events(world, data)}}
