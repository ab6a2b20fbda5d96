"""Notes world data (seeded notes in folders, read-only) and the runtime overlay that edits it.

Some notes hold a small fact (a door code, a booking reference...) whose value varies with
the world seed, for look-up tasks. Runtime data is an overlay (`put` by id, `deleted` ids).
"""

from __future__ import annotations

import random
import string
from datetime import timedelta
from typing import Any

from phonesim import records
from phonesim.dates import TODAY

FOLDERS = ("Personal", "Work", "Ideas", "Travel", "Shopping")
# (folder, title, body template, fact label or ""); {v} is the seeded fact value
NOTES = [
    ("Personal", "Door code", "Front door code: {v}. Change it in spring.", "door code"),
    ("Personal", "Home Wi-Fi", "Network HomeNet, password: {v}", "password"),
    ("Personal", "Gym locker", "Locker number: {v}. Bring the blue padlock.", "locker number"),
    ("Personal", "Dentist appointment", "Check-up booked, bring the insurance card. Room: {v}", "room"),
    ("Personal", "Books to read", "Piranesi, The Overstory, Klara and the Sun, Project Hail Mary", ""),
    ("Personal", "Birthday ideas", "Pottery class, concert tickets, a nice fountain pen", ""),
    ("Work", "Standup notes", "Blocked on the API review. Demo moved to Thursday.", ""),
    ("Work", "Project Apollo", "Milestone 2 due end of month. Budget code: {v}", "budget code"),
    ("Work", "Q2 goals", "Ship onboarding v2, cut build time in half, hire two engineers", ""),
    ("Work", "Printer PIN", "Office printer PIN: {v}", "PIN"),
    ("Work", "Conference badge", "Badge ID: {v}. Pick up at hall B.", "badge ID"),
    ("Ideas", "App idea", "A plant-watering tracker with reminders and photo logs", ""),
    ("Ideas", "Blog post drafts", "Why small teams ship faster; notes on testing culture", ""),
    ("Ideas", "Garden plan", "Tomatoes by the fence, herbs near the kitchen door", ""),
    ("Ideas", "Podcast topics", "Remote work rituals, learning to cook, city cycling", ""),
    ("Travel", "Lisbon trip", "Tram 28, Belem tower, pasteis de nata at 9am", ""),
    ("Travel", "Packing list", "Passport, charger, adapters, rain jacket, sunglasses", ""),
    ("Travel", "Flight booking", "Booking reference: {v}. Seat 14C.", "booking reference"),
    ("Travel", "Hotel in Kyoto", "Confirmation number: {v}. Check-in after 3pm.", "confirmation number"),
    ("Travel", "Car rental", "Pick-up desk 4, reservation: {v}", "reservation"),
    ("Shopping", "Groceries", "Milk, eggs, spinach, rice, coffee beans", ""),
    ("Shopping", "Hardware store", "Wood screws, sandpaper, wall plugs, a spirit level", ""),
    ("Shopping", "Gift list", "Scarf for Mum, board game for Leo, candles", ""),
    ("Shopping", "Pharmacy", "Vitamin D, plasters, sunscreen SPF 50", ""),
]


def _fact(rng: random.Random, label: str) -> str:
    if label in ("door code", "PIN", "locker number", "room"):
        return str(rng.randint(100, 9999)).zfill(4 if label != "room" else 3)
    if label == "password":
        return rng.choice(["maple", "orbit", "cactus", "velvet", "harbor"]) + str(rng.randint(10, 99))
    return "".join(rng.choice(string.ascii_uppercase + string.digits) for _ in range(6))


def make_world(seed: int) -> dict[str, Any]:
    rng = random.Random(f"notes:{seed}")
    notes, facts = {}, {}
    for i, (folder, title, body, label) in enumerate(NOTES):
        nid = f"m{i + 1}"
        value = _fact(rng, label) if label else ""
        if label:
            facts[nid] = {"label": label, "value": value}
        notes[nid] = {"id": nid, "title": title, "body": body.format(v=value), "folder": folder,
                      "modified": (TODAY - timedelta(days=rng.randint(0, 90))).isoformat()}
    return {"notes": notes, "facts": facts}


def initial_data(world: dict[str, Any]) -> dict[str, Any]:
    return records.overlay()


def all_notes(world: dict[str, Any], data: dict[str, Any]) -> list[dict[str, Any]]:
    """Merged notes, most recently modified first."""
    return sorted(records.merged(world["notes"], data),
                  key=lambda n: (n["modified"], n["id"]), reverse=True)


def get_note(world: dict[str, Any], data: dict[str, Any], nid: str) -> dict[str, Any] | None:
    return records.get(world["notes"], data, nid)


def view(world: dict[str, Any], data: dict[str, Any]) -> dict[str, Any]:
    """Judge view: `notes` by id with the overlay applied."""
    return {"notes": {n["id"]: n for n in all_notes(world, data)}}
