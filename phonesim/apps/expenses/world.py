"""Expenses world data (seeded expense log, read-only) and the runtime overlay that edits it.

Like contacts, runtime data is an overlay: `put` holds created or edited expenses by id,
`deleted` marks removed ids. The device's "today" is the system date (Mon, Mar 4) of 2024.
"""

from __future__ import annotations

import random
from datetime import timedelta
from typing import Any

from phonesim import records
from phonesim.dates import TODAY

CATEGORIES = ("Food", "Transport", "Shopping", "Bills", "Entertainment", "Health")
ITEMS = {  # category -> (name, min amount, max amount)
    "Food": [("Groceries", 25, 120), ("Coffee", 3, 7), ("Lunch", 9, 22), ("Dinner out", 28, 85), ("Bakery", 4, 15),
             ("Pizza delivery", 18, 40)],
    "Transport": [("Taxi", 9, 38), ("Fuel", 35, 75), ("Parking", 3, 16), ("Train ticket", 8, 45),
                  ("Bike repair", 15, 60)],
    "Shopping": [("Running shoes", 60, 140), ("T-shirt", 12, 30), ("Headphones", 40, 180), ("Books", 10, 45),
                 ("Phone case", 12, 35), ("Kitchen towels", 6, 18)],
    "Bills": [("Electricity", 45, 130), ("Internet", 40, 70), ("Phone bill", 20, 55), ("Water", 18, 45),
              ("Home insurance", 30, 90)],
    "Entertainment": [("Cinema", 9, 28), ("Concert tickets", 45, 160), ("Streaming", 8, 18), ("Museum", 10, 25),
                      ("Bowling", 15, 40)],
    "Health": [("Pharmacy", 6, 40), ("Dentist", 60, 220), ("Gym membership", 25, 60), ("Vitamins", 9, 30),
               ("Physiotherapy", 45, 95)],
}
NOTES = ("", "", "", "with Sam", "monthly", "card payment", "split with Priya", "cash", "weekend", "work trip")
N_EXPENSES = 48
DAYS_BACK = 60


def make_world(seed: int) -> dict[str, Any]:
    rng = random.Random(f"expenses:{seed}")
    out = {}
    for i in range(N_EXPENSES):
        category = CATEGORIES[i % len(CATEGORIES)] if i < len(CATEGORIES) else rng.choice(CATEGORIES)
        name, lo, hi = rng.choice(ITEMS[category])
        out[f"e{i + 1}"] = {
            "id": f"e{i + 1}", "name": name, "amount": round(rng.uniform(lo, hi), 2), "category": category,
            "date": (TODAY - timedelta(days=rng.randint(0, DAYS_BACK - 1))).isoformat(), "note": rng.choice(NOTES),
        }
    return {"expenses": out}


def initial_data(world: dict[str, Any]) -> dict[str, Any]:
    return records.overlay()


def all_expenses(world: dict[str, Any], data: dict[str, Any]) -> list[dict[str, Any]]:
    """Merged expenses, newest first (ties by id)."""
    return sorted(records.merged(world["expenses"], data), key=lambda e: (e["date"], e["id"]), reverse=True)


def get_expense(world: dict[str, Any], data: dict[str, Any], eid: str) -> dict[str, Any] | None:
    return records.get(world["expenses"], data, eid)


def totals(expenses: list[dict[str, Any]]) -> dict[str, tuple[int, float]]:
    """category -> (count, total amount) over the given expenses."""
    out = {c: (0, 0.0) for c in CATEGORIES}
    for e in expenses:
        n, s = out[e["category"]]
        out[e["category"]] = (n + 1, s + e["amount"])
    return {c: (n, round(s, 2)) for c, (n, s) in out.items()}


def money(amount: float) -> str:
    return f"${amount:,.2f}"


def view(world: dict[str, Any], data: dict[str, Any]) -> dict[str, Any]:
    """Judge view: `expenses` by id with the overlay applied."""
    return {"expenses": {e["id"]: e for e in all_expenses(world, data)}}
