"""Clock world data: seeded alarms, the city catalogue for world clocks (UTC offsets), and the
runtime data: alarm overlay, chosen world clocks, timer and stopwatch (state-based, no real time)."""

from __future__ import annotations

import random
from typing import Any

from phonesim import records
from phonesim.dates import hhmm

DAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
LOCAL_OFFSET = -5.0  # the phone's own time zone (UTC-5); world clocks are shown relative to it
CITIES = {"London": 0.0, "Paris": 1.0, "Berlin": 1.0, "Cairo": 2.0, "Moscow": 3.0, "Dubai": 4.0, "Mumbai": 5.5,
          "Singapore": 8.0, "Tokyo": 9.0, "Seoul": 9.0, "Sydney": 11.0, "Auckland": 13.0, "Honolulu": -10.0,
          "Los Angeles": -8.0, "Denver": -7.0, "Chicago": -6.0, "Mexico City": -6.0, "Toronto": -5.0,
          "São Paulo": -3.0, "Reykjavik": 0.0}
LABELS = ["Wake up", "Gym", "Meds", "School run", "Standup", "Walk the dog", "Bedtime", "Lunch", "Yoga"]


def make_world(seed: int) -> dict[str, Any]:
    rng = random.Random(f"clock:{seed}")
    times = rng.sample(range(5 * 60, 23 * 60, 15), 6)
    alarms = {}
    for i, (minute, label) in enumerate(zip(sorted(times), rng.sample(LABELS, 6))):
        aid = f"a{i + 1}"
        n_days = rng.choice([0, 2, 5, 7])
        days = list(DAYS[:5]) if n_days == 5 else sorted(rng.sample(DAYS, n_days), key=DAYS.index)
        alarms[aid] = {"id": aid, "time": hhmm(minute), "label": label, "days": days, "on": rng.random() < 0.6}
    return {"alarms": alarms, "clocks": sorted(rng.sample(sorted(CITIES), 3))}


def initial_data(world: dict[str, Any]) -> dict[str, Any]:
    return {"alarms": records.overlay(), "clocks": {c: True for c in world["clocks"]},
            "timer": {"minutes": 0, "running": False}, "stopwatch": {"running": False, "laps": 0}}


def all_alarms(world: dict[str, Any], data: dict[str, Any]) -> list[dict[str, Any]]:
    return sorted(records.merged(world["alarms"], data["alarms"]), key=lambda a: (a["time"], a["id"]))


def get_alarm(world: dict[str, Any], data: dict[str, Any], aid: str) -> dict[str, Any] | None:
    return records.get(world["alarms"], data["alarms"], aid)


def city_time(clock: str, city: str) -> str:
    """Local time in `city` when the phone's clock shows `clock` ('9:37')."""
    h, m = clock.split(":")
    return hhmm(int(h) * 60 + int(m) + int((CITIES[city] - LOCAL_OFFSET) * 60))


def repeat_text(days: list[str]) -> str:
    if not days:
        return "Once"
    if len(days) == 7:
        return "Every day"
    if days == list(DAYS[:5]):
        return "Weekdays"
    return ", ".join(days)


def view(world: dict[str, Any], data: dict[str, Any]) -> dict[str, Any]:
    return {"alarms": {a["id"]: a for a in all_alarms(world, data)}, "clocks": data["clocks"],
            "timer": data["timer"], "stopwatch": data["stopwatch"]}
