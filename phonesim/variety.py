"""Setup-side variation for held-out task families: a template whose answer is a count draws the
count itself, and which records move into or out of the counted set to reach it, so that the
answer differs from instance to instance (a constant answer that never reads the screen cannot
pass most of them) while the world stays the one world the seed fixed."""

from __future__ import annotations

import random
from typing import Any, Callable

from phonesim.records import Lookup
from phonesim.task_template import Params, PhoneView


def recount(rng: random.Random, members: list[str], others: list[str], lo: int, hi: int) -> dict[str, list[str]]:
    """A target count drawn from lo..hi (hi capped at what the records allow) and the ids that
    reach it from `members` (now counted): `join` (drawn from `others`) or `leave` (from `members`)."""
    hi = min(hi, len(members) + len(others))
    if lo > hi:
        raise ValueError(f"cannot reach a count in {lo}..{hi} with {len(members)} + {len(others)} records")
    target = rng.randint(lo, hi)
    if target >= len(members):
        return {"join": sorted(rng.sample(sorted(others), target - len(members))), "leave": []}
    return {"join": [], "leave": sorted(rng.sample(sorted(members), len(members) - target))}


def regroup(lookup: Lookup, joined: Callable[[Params], dict[str, Any]],
            left: Callable[[Params], dict[str, Any]]) -> Callable[[PhoneView, Params], None]:
    """A setup applying a `recount`: each record in `join` takes the fields `joined(params)`, each
    in `leave` those of `left(params)`."""
    def setup(phone: PhoneView, p: Params) -> None:
        for rid in p["join"]:
            lookup.edit(phone, rid, **joined(p))
        for rid in p["leave"]:
            lookup.edit(phone, rid, **left(p))
    return setup
