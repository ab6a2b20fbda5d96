"""Expenses app: seeded world, totals, add form guards and pickers, delete via long-press."""

from __future__ import annotations

from datetime import date, timedelta

import pytest

from phonesim import Phone
from phonesim.actions import Action
from phonesim.apps.expenses.world import CATEGORIES, all_expenses, make_world, money, totals
from phonesim.dates import TODAY
from tests.phonesim.test_phone import find, tap


@pytest.fixture
def phone():
    p = Phone(world_seed=0)
    p.step(Action("open_app", app="Expenses"))
    return p


def texts(phone: Phone) -> list[str]:
    return [e["text"] for e in phone.observe().elements]


def test_world_is_deterministic_per_seed_and_covers_every_category():
    a, b, c = make_world(3), make_world(3), make_world(4)
    assert a == b and a != c
    assert len(a["expenses"]) >= 40
    assert {e["category"] for e in a["expenses"].values()} == set(CATEGORIES)


def test_totals_screen_matches_the_sum_of_each_category(phone):
    expected = totals(all_expenses(phone.world("expenses"), phone.data("expenses")))
    assert tap(phone, "More options").ok and tap(phone, "Totals by category").ok
    shown = texts(phone)
    for cat, (n, total) in expected.items():
        assert f"{cat}\n{n} expenses" in shown and money(total) in shown


def test_add_needs_a_category_then_saves_with_the_picked_date(phone):
    assert tap(phone, "Add expense").ok
    phone.step(Action("type", text="Ice cream", element=find(phone, "Name")))
    phone.step(Action("type", text="4.50", element=find(phone, "Amount ($)")))
    refused = tap(phone, "Save")
    assert not refused.ok and "category" in refused.reason
    tap(phone, "Category")
    tap(phone, "Food")
    tap(phone, "Date")
    tap(phone, "Earlier")  # second week of the picker
    day = next(e["text"] for e in phone.observe().elements if e["class"] == "android.widget.RadioButton")
    assert tap(phone, day).ok and tap(phone, "Save").ok
    new = [e for e in all_expenses(phone.world("expenses"), phone.data("expenses")) if e["name"] == "Ice cream"]
    assert len(new) == 1 and new[0]["amount"] == 4.5 and new[0]["category"] == "Food"
    assert date.fromisoformat(new[0]["date"]) == TODAY - timedelta(days=7)


def test_filter_shows_only_one_category_and_its_total(phone):
    assert tap(phone, "Filter by category").ok and tap(phone, "Bills").ok
    n, total = totals(all_expenses(phone.world("expenses"), phone.data("expenses")))["Bills"]
    assert f"Bills: {n} expenses · {money(total)}" in texts(phone)
    rows = [t for t in texts(phone) if "\n" in t and " · " in t]
    assert rows and all(r.split("\n")[1].startswith("Bills · ") for r in rows)


def test_long_press_delete_asks_for_confirmation(phone):
    first = all_expenses(phone.world("expenses"), phone.data("expenses"))[0]
    assert phone.step(Action("long_press", element=find(phone, first["name"]))).ok
    tap(phone, "Delete")
    assert "Delete this expense?" in texts(phone) and phone.data("expenses")["deleted"] == {}
    tap(phone, "Delete")
    assert phone.data("expenses")["deleted"] == {first["id"]: True}
