"""Messages world data: conversations with people from the contacts world (same seed, so names
and numbers agree across apps), each carrying a few checkable facts (meeting place, time, door
code), and the runtime data: sent messages and deleted conversations."""

from __future__ import annotations

import random
from typing import Any

from phonesim.apps.contacts.world import full_name, make_world as contacts_world
from phonesim.dates import TODAY, day, hhmm

N_THREADS = 12
PLACES = ("Cafe Luna", "Central Library", "Blue Door Bistro", "Union Station", "Riverside Park", "Harbor Hall",
          "Pizza Palace", "City Gym")
OPENERS = ["Hey! Are we still on for this week?", "Hi, quick question about the weekend", "Long time no see!",
           "Did you get my email?", "Are you free on Friday?", "Happy Monday!"]
REPLIES = ["Yes, sounds good", "Sure, let me check", "Absolutely!", "I think so", "Works for me"]
CLOSERS = ["Thanks!", "Perfect, talk soon", "Great, see you", "Got it!", "Cool"]


def make_world(seed: int) -> dict[str, Any]:
    rng = random.Random(f"sms:{seed}")
    people = sorted(contacts_world(seed)["contacts"].values(), key=lambda c: c["id"])
    threads: dict[str, dict[str, Any]] = {}
    for c in rng.sample(people, N_THREADS):
        facts = {"place": rng.choice(PLACES), "time": hhmm(rng.randrange(9 * 60, 21 * 60, 15)),
                 "code": str(rng.randint(1000, 9999))}
        kept = rng.sample(sorted(facts), rng.randint(1, 3))
        msgs = [("them", rng.choice(OPENERS)), ("me", rng.choice(REPLIES))]
        if "place" in kept:
            msgs.append(("them", f"Let's meet at {facts['place']}."))
        if "time" in kept:
            msgs.append(("them", f"See you at {facts['time']}!"))
        if "code" in kept:
            msgs.append(("them", f"The door code is {facts['code']}."))
        msgs.append(("me", rng.choice(CLOSERS)))
        start = rng.randint(-40, -1)
        at = [f"{day(start + i // 2)} {hhmm(rng.randrange(8 * 60, 22 * 60, 1))}" for i in range(len(msgs))]
        threads[c["id"]] = {"cid": c["id"], "name": full_name(c), "phone": c["phone"],
                            "facts": {k: facts[k] for k in kept},
                            "messages": [{"from": who, "text": text, "at": when}
                                         for (who, text), when in zip(msgs, sorted(at))]}
    return {"threads": threads, "people": {c["id"]: {"name": full_name(c), "phone": c["phone"]} for c in people}}


def initial_data(world: dict[str, Any]) -> dict[str, Any]:
    return {"sent": {}, "deleted": {}}


def messages(world: dict[str, Any], data: dict[str, Any], cid: str) -> list[dict[str, Any]]:
    """A conversation's messages, oldest first (empty once deleted and nothing sent since)."""
    thread = world["threads"].get(cid)
    old = thread["messages"] if thread and cid not in data["deleted"] else []
    return old + data["sent"].get(cid, [])


def conversations(world: dict[str, Any], data: dict[str, Any]) -> list[str]:
    """Contact ids with a non-empty conversation, most recent first."""
    cids = [cid for cid in list(world["threads"]) + list(data["sent"]) if messages(world, data, cid)]
    return sorted(dict.fromkeys(cids), key=lambda cid: messages(world, data, cid)[-1]["at"], reverse=True)


def now(system: dict[str, Any]) -> str:
    h, m = system["clock"].split(":")
    return f"{TODAY.isoformat()} {int(h):02d}:{m}"


def view(world: dict[str, Any], data: dict[str, Any]) -> dict[str, Any]:
    return {"threads": {cid: messages(world, data, cid) for cid in conversations(world, data)}}
