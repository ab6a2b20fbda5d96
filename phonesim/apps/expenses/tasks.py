"""Expenses task templates: look-ups and totals (typed answers), add / edit / delete flows,
and a hybrid "find the largest and delete it"."""

from __future__ import annotations

import random
from datetime import timedelta

from phonesim import records
from phonesim.answers import AnswerSpec
from phonesim.apps.expenses.world import CATEGORIES, DAYS_BACK, ITEMS, all_expenses, get_expense, money, totals
from phonesim.dates import TODAY, month_day_year
from phonesim.records import Lookup
from phonesim.task_template import TaskTemplate


EXPENSES = Lookup("expenses", all_expenses, get_expense)
expenses, expense, field = EXPENSES.records, EXPENSES.record, EXPENSES.attr


def pick(rng: random.Random, phone, where=lambda e: True) -> dict:
    """An existing expense identified by name and date (the pair is unique) that satisfies `where`."""
    everyone = expenses(phone)
    keys = [(e["name"], e["date"]) for e in everyone]
    e = rng.choice([e for e in everyone if keys.count((e["name"], e["date"])) == 1 and where(e)])
    return {"eid": e["id"], "name": e["name"], "day": month_day_year(e["date"])}


def pick_with_note(rng, phone) -> dict:
    return pick(rng, phone, lambda e: bool(e["note"]))


def with_new_amount(rng, phone) -> dict:
    p = pick(rng, phone)
    old = expense(phone, p["eid"])["amount"]
    p["amount"] = f"{round(old + rng.choice([-1, 1]) * rng.uniform(1, min(old - 0.5, 20)), 2):.2f}"
    return p


def with_other_category(rng, phone) -> dict:
    p = pick(rng, phone)
    p["category"] = rng.choice([c for c in CATEGORIES if c != expense(phone, p["eid"])["category"]])
    return p


def with_new_date(rng, phone) -> dict:
    p = pick(rng, phone)
    old = expense(phone, p["eid"])["date"]
    new = rng.choice([d for d in (TODAY - timedelta(days=i) for i in range(14)) if d.isoformat() != old])
    p.update(date=new.isoformat(), new_day=month_day_year(new.isoformat()))
    return p


def sample_new(rng, phone) -> dict:
    category = rng.choice(CATEGORIES)
    name, lo, hi = rng.choice(ITEMS[category])
    return {"name": name, "amount": f"{rng.uniform(lo, hi):.2f}", "category": category, "date": TODAY.isoformat()}


def sample_category(rng, phone) -> dict:
    return {"category": rng.choice(CATEGORIES)}


def sample_largest(rng, phone) -> dict:
    category = rng.choice(CATEGORIES)
    top = max((e for e in expenses(phone) if e["category"] == category), key=lambda e: (e["amount"], e["id"]))
    return {"category": category, "eid": top["id"]}


def sample_category_size(rng, phone) -> dict:
    """A category and how many expenses it holds (1..14): drawn new ones are logged (`added`), or
    some of its own deleted, so the count differs between instances."""
    category = rng.choice(CATEGORIES)
    mine = sorted(e["id"] for e in expenses(phone) if e["category"] == category)
    target = rng.randint(1, 14)
    added = [draw_expense(rng, category) for _ in range(target - len(mine))]
    return {"category": category, "added": added, "deleted": sorted(rng.sample(mine, max(0, len(mine) - target)))}


def draw_expense(rng, category: str) -> dict:
    """A new expense of the category (no id yet; `log_and_delete` logs it), from the last DAYS_BACK days."""
    name, lo, hi = rng.choice(ITEMS[category])
    return {"name": name, "amount": round(rng.uniform(lo, hi), 2), "category": category,
            "date": (TODAY - timedelta(days=rng.randrange(DAYS_BACK))).isoformat(), "note": ""}


def log_and_delete(phone, p) -> None:
    """Setup: log the expenses in `added`, delete those in `deleted`."""
    data = phone.data("expenses")
    for e in p["added"]:
        records.put(data, {"id": records.new_id(data), **e})
    for eid in p["deleted"]:
        records.delete(data, eid)


def sample_raised_largest(rng, phone) -> dict:
    """A category and one of its expenses, raised to a drawn amount above the category's largest
    (`raise_amount`), so the largest expense and its amount differ between instances."""
    category = rng.choice(CATEGORIES)
    mine = [e for e in expenses(phone) if e["category"] == category]
    e = rng.choice(mine)
    return {"category": category, "eid": e["id"],
            "amount": round(max(x["amount"] for x in mine) * rng.uniform(1.05, 1.6), 2)}


def raise_amount(phone, p) -> None:
    EXPENSES.edit(phone, p["eid"], amount=p["amount"])


def created(phone, p) -> list[dict]:
    return [e for e in expenses(phone) if e["id"].startswith("n") and e["name"].casefold() == p["name"].casefold()]


def add_checks(phone, p) -> list[tuple[str, bool]]:
    new = created(phone, p)
    return [("created", bool(new)),
            ("amount", any(abs(e["amount"] - float(p["amount"])) < 0.005 for e in new)),
            ("category", any(e["category"] == p["category"] for e in new)),
            ("date", any(e["date"] == p["date"] for e in new))]


def path(p) -> str:
    return f"expenses.expenses.{p['eid']}"


def category_total(phone, category: str) -> tuple[int, float]:
    return totals(expenses(phone))[category]


TEMPLATES = [
    TaskTemplate(
        id="expenses.query_category_total", apps=("expenses",), objective="query", composition="deep_dive",
        difficulty=2, split="train", step_budget=15,
        instructions=("How much have I spent on {category} in total?", "What is the total of my {category} expenses?",
                      "Check the Expenses app: what do all {category} expenses add up to?"),
        sample=sample_category,
        answer=lambda phone, p: AnswerSpec("number", category_total(phone, p["category"])[1], tolerance=0.01,
                                           hint="a number in dollars"),
        evidence=lambda p, spec: [money(spec.gold)], tags=("extract", "finance")),
    TaskTemplate(
        id="expenses.query_category_count", apps=("expenses",), objective="query", composition="deep_dive",
        difficulty=2, split="test", step_budget=15,
        instructions=("How many {category} expenses have I logged?", "Count my expenses in the {category} category."),
        sample=sample_category_size, setup=log_and_delete,
        answer=lambda phone, p: AnswerSpec("number", float(category_total(phone, p["category"])[0]), hint="a number"),
        evidence=lambda p, spec: [f"{p['category']}\n{spec.gold:g} expenses"], tags=("extract", "finance")),
    TaskTemplate(
        id="expenses.query_amount", apps=("expenses",), objective="query", composition="deep_dive", difficulty=2,
        split="train", step_budget=15,
        instructions=("How much did the {name} expense on {day} cost?", "What did I pay for {name} on {day}?"),
        sample=pick,
        answer=lambda phone, p: AnswerSpec("number", expense(phone, p["eid"])["amount"], tolerance=0.01,
                                           hint="a number in dollars"),
        evidence=lambda p, spec: [money(spec.gold)], hints=lambda p: [p["name"]], tags=("extract", "search")),
    TaskTemplate(
        id="expenses.query_note", apps=("expenses",), objective="query", composition="deep_dive", difficulty=3,
        split="test", step_budget=15,
        instructions=("What note is attached to the {name} expense from {day}?",),
        sample=pick_with_note,
        answer=lambda phone, p: AnswerSpec("text", expense(phone, p["eid"])["note"], hint="the note text"),
        evidence=lambda p, spec: [f"Note\n{spec.gold}"], hints=lambda p: [p["name"]], tags=("extract", "search")),
    TaskTemplate(
        id="expenses.add", apps=("expenses",), objective="operate", composition="sequential", difficulty=3,
        split="train", step_budget=20,
        instructions=("Log an expense for today: {name}, ${amount}, category {category}.",
                      "Add a {category} expense called {name} for ${amount}, dated today.",
                      "Record that I spent ${amount} on {name} ({category}) today."),
        sample=sample_new, checks=add_checks, expected=lambda p: ["expenses.expenses.n*"],
        hints=lambda p: [p["name"], p["amount"]], tags=("create", "finance")),
    TaskTemplate(
        id="expenses.delete", apps=("expenses",), objective="operate", composition="sequential", difficulty=2,
        split="test", step_budget=15,
        instructions=("Delete the {name} expense from {day}.", "Remove the expense {name} dated {day}."),
        sample=pick, checks=lambda phone, p: [("deleted", expense(phone, p["eid"]) is None)],
        expected=lambda p: [path(p)], hints=lambda p: [p["name"]], tags=("delete", "search")),
    TaskTemplate(
        id="expenses.edit_amount", apps=("expenses",), objective="operate", composition="deep_dive", difficulty=3,
        split="train", step_budget=20,
        instructions=("Change the amount of the {name} expense on {day} to ${amount}.",
                      "The {name} expense from {day} was actually ${amount}; fix it."),
        sample=with_new_amount,
        checks=lambda phone, p: [("amount", abs((field(phone, p["eid"], "amount") or 0) - float(p["amount"])) < 0.005)],
        expected=lambda p: [path(p) + ".amount"], hints=lambda p: [p["name"], p["amount"]], tags=("edit", "finance")),
    TaskTemplate(
        id="expenses.set_category", apps=("expenses",), objective="operate", composition="deep_dive", difficulty=3,
        split="test", step_budget=20,
        instructions=("Move the {name} expense from {day} to the {category} category.",
                      "Recategorise {name} ({day}) as {category}."),
        sample=with_other_category,
        checks=lambda phone, p: [("category", field(phone, p["eid"], "category") == p["category"])],
        expected=lambda p: [path(p) + ".category"], hints=lambda p: [p["name"]], tags=("edit",)),
    TaskTemplate(
        id="expenses.edit_date", apps=("expenses",), objective="operate", composition="deep_dive", difficulty=4,
        split="train", step_budget=20,
        instructions=("The {name} expense from {day} actually happened on {new_day}; change its date.",
                      "Set the date of the {name} expense ({day}) to {new_day}."),
        sample=with_new_date,
        checks=lambda phone, p: [("date", field(phone, p["eid"], "date") == p["date"])],
        expected=lambda p: [path(p) + ".date"], hints=lambda p: [p["name"]], tags=("edit", "search")),
    TaskTemplate(
        id="expenses.hybrid_largest_delete", apps=("expenses",), objective="hybrid", composition="sequential",
        difficulty=4, split="test", step_budget=20,
        instructions=("Find my most expensive {category} expense, tell me its amount, then delete it.",),
        sample=sample_raised_largest, setup=raise_amount,
        checks=lambda phone, p: [("deleted", expense(phone, p["eid"]) is None)],
        answer=lambda phone, p: AnswerSpec("number", expense(phone, p["eid"])["amount"], tolerance=0.01,
                                           hint="a number in dollars"),
        evidence=lambda p, spec: [money(spec.gold)], expected=lambda p: [path(p)],
        tags=("extract", "reasoning", "delete")),
    TaskTemplate(
        id="expenses.query_largest_name", apps=("expenses",), objective="query", composition="deep_dive",
        difficulty=3, split="train", step_budget=15,
        instructions=("What was my single most expensive {category} purchase? Give its name.",),
        sample=sample_largest,
        answer=lambda phone, p: AnswerSpec("choice", expense(phone, p["eid"])["name"],
                                           choices=tuple(n for n, _, _ in ITEMS[p["category"]]),
                                           hint="the expense name"),
        tags=("extract", "reasoning")),
]
