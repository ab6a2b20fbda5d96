"""Tasks (to-do) world data: task lists with seeded tasks (due dates, priorities, done),
and the runtime overlay that edits them."""

from __future__ import annotations

import random
from typing import Any

from phonesim import records
from phonesim.dates import day

LISTS = ("My Tasks", "Work", "Groceries", "Personal")
PRIORITIES = ("High", "Medium", "Low", "None")
TITLES = {
    "My Tasks": ["Clean the garage", "Fix the bike tire", "Back up photos", "Change air filter", "Sort old clothes",
                 "Organize desk drawer"],
    "Work": ["Send quarterly report", "Review pull requests", "Book meeting room", "Prepare slides",
             "Reply to client email", "Update project roadmap", "Submit expense report", "Schedule team lunch"],
    "Groceries": ["Buy milk", "Buy eggs", "Pick up bread", "Get coffee beans", "Buy apples", "Buy olive oil",
                  "Get laundry detergent"],
    "Personal": ["Call the dentist", "Renew passport", "Pay electricity bill", "Book haircut", "Water the plants",
                 "Return library books", "Plan birthday party", "Cancel gym trial"],
}
# Titles for tasks the user creates (never in the world).
NEW_TITLES = ["Buy batteries", "Email the landlord", "Pick up dry cleaning", "Order printer ink", "Book flights",
              "Call the plumber", "Buy birthday card", "Update resume", "Wash the car", "Read chapter 4",
              "Refill prescription", "Send thank-you note"]


def make_world(seed: int) -> dict[str, Any]:
    rng = random.Random(f"todo:{seed}")
    tasks: dict[str, dict[str, Any]] = {}
    for lst in LISTS:
        for title in TITLES[lst]:
            tid = f"t{len(tasks) + 1}"
            tasks[tid] = {
                "id": tid, "title": title, "list": lst,
                "due": day(rng.randint(-4, 18)) if rng.random() < 0.8 else "",
                "priority": rng.choice(PRIORITIES), "done": rng.random() < 0.25,
                "notes": rng.choice(["", "", "", "Ask Sam first", "Needs receipt", "Before the weekend"]),
            }
    # A few tasks always fall due today so the Today filter is never empty.
    for tid in rng.sample(sorted(tasks), 3):
        tasks[tid] = dict(tasks[tid], due=day(0), done=False)
    return {"tasks": tasks}


def initial_data(world: dict[str, Any]) -> dict[str, Any]:
    return records.overlay()


def all_tasks(world: dict[str, Any], data: dict[str, Any]) -> list[dict[str, Any]]:
    return records.merged(world["tasks"], data)


def get_task(world: dict[str, Any], data: dict[str, Any], tid: str) -> dict[str, Any] | None:
    return records.get(world["tasks"], data, tid)


def view(world: dict[str, Any], data: dict[str, Any]) -> dict[str, Any]:
    """Judge view: `tasks` by id, overlay applied."""
    return {"tasks": {t["id"]: t for t in all_tasks(world, data)}}
