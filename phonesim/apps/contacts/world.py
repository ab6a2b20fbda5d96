"""Contacts world data (seeded people, read-only) and the runtime overlay that edits it.

Runtime data is an overlay over the world: `put` holds created or edited records by id,
`deleted` marks removed ids, `calls` logs placed calls. Views merge the two on read, so a
phone's state stays small however many contacts the world has.
"""

from __future__ import annotations

import json
import random
from typing import Any

from phonesim import records

FIRST = ["Olivia", "Liam", "Emma", "Noah", "Ava", "Elijah", "Sophia", "James", "Isabella", "Lucas", "Mia", "Mateo",
         "Amelia", "Benjamin", "Harper", "Ethan", "Evelyn", "Henry", "Aisha", "Ravi", "Chen", "Yuki", "Fatima", "Diego",
         "Ingrid", "Kwame", "Nadia", "Tomas", "Zara", "Hugo", "Leila", "Marco", "Priya", "Sven", "Ana", "Omar"]
LAST = ["Smith", "Johnson", "Garcia", "Brown", "Miller", "Davis", "Martinez", "Lopez", "Wilson", "Anderson", "Taylor",
        "Thomas", "Moore", "Lee", "Patel", "Nguyen", "Kim", "Chen", "Okafor", "Novak", "Rossi", "Schmidt", "Tanaka",
        "Silva", "Haddad", "Larsen", "Murphy", "Kowalski"]
COMPANIES = ["Acme Corp", "Globex", "Initech", "Umbrella Labs", "Stark Industries", "Wayne Enterprises", "Hooli",
             "Pied Piper", "Vandelay Imports", "Soylent Co", "Wonka Foods", "Cyberdyne"]
CITIES = ["Austin", "Boston", "Chicago", "Denver", "Seattle", "Portland", "Miami", "Atlanta", "Phoenix", "Oakland"]
GROUPS = ("Family", "Friends", "Work", "Gym")
N_CONTACTS = 36


def make_world(seed: int) -> dict[str, Any]:
    rng = random.Random(f"contacts:{seed}")
    names = set()
    people = []
    while len(people) < N_CONTACTS:
        first, last = rng.choice(FIRST), rng.choice(LAST)
        if (first, last) in names:
            continue
        names.add((first, last))
        i = len(people)
        people.append({
            "id": f"c{i + 1}", "first": first, "last": last,
            "phone": f"+1 {rng.randint(201, 989)}-555-{rng.randint(0, 9999):04d}",
            "email": f"{first.lower()}.{last.lower()}@{rng.choice(['gmail.com', 'outlook.com', 'mail.com'])}",
            "company": rng.choice(COMPANIES) if rng.random() < 0.75 else "",
            "group": rng.choice(GROUPS) if rng.random() < 0.7 else "",
            "birthday": f"{rng.randint(1960, 2004)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
            "city": rng.choice(CITIES),
            "favorite": rng.random() < 0.15,
        })
    return {"contacts": {p["id"]: p for p in people}}


def initial_data(world: dict[str, Any]) -> dict[str, Any]:
    return {**records.overlay(), "calls": []}


# --- merged views -------------------------------------------------------------------------------

def full_name(c: dict[str, Any]) -> str:
    return f"{c['first']} {c['last']}".strip()


def get_contact(world: dict[str, Any], data: dict[str, Any], cid: str) -> dict[str, Any] | None:
    return records.get(world["contacts"], data, cid)


def all_contacts(world: dict[str, Any], data: dict[str, Any]) -> list[dict[str, Any]]:
    """Merged, name-sorted contacts (treat as read-only).

    Only the sort order is cached (keyed on the world and the overlay's canonical JSON); the
    records always come from this phone's own data, so one phone's in-place edits never leak
    into another phone's list."""
    key = (id(world), json.dumps([data["put"], data["deleted"]], sort_keys=True))
    hit = _ORDER.get(key)
    if hit is None:
        order = [c["id"] for c in sorted(records.merged(world["contacts"], data),
                                         key=lambda c: (full_name(c).casefold(), c["id"]))]
        if len(_ORDER) > 2048:
            _ORDER.clear()
        hit = _ORDER[key] = (world, order)
    put, base = data["put"], world["contacts"]
    return [put[cid] if cid in put else base[cid] for cid in hit[1]]


# Each entry holds its world too, so id(world) cannot be reused by another world while cached.
_ORDER: dict[tuple[int, str], tuple[dict[str, Any], list[str]]] = {}


def find_by_name(world: dict[str, Any], data: dict[str, Any], name: str) -> list[dict[str, Any]]:
    return [c for c in all_contacts(world, data) if full_name(c).casefold() == name.casefold()]


def view(world: dict[str, Any], data: dict[str, Any]) -> dict[str, Any]:
    """Judge view: `people` by id (overlay applied) and the call log."""
    return {"people": {c["id"]: c for c in all_contacts(world, data)}, "calls": data["calls"]}
