"""Tasks (todo) app: filters, search, create through the form, guards, done / delete flows."""

from __future__ import annotations

import pytest

from phonesim import Phone
from phonesim.actions import Action
from phonesim.dates import TODAY
from tests.phonesim.test_phone import find, tap


@pytest.fixture
def phone():
    p = Phone(world_seed=0, size=(540, 1200))
    p.step(Action("open_app", app="Tasks"))
    return p


def press(phone, resource_id: str):
    """Tap by resource id (dialog buttons share their text with the buttons under the scrim)."""
    index = next(e["index"] for e in phone.observe().elements if e["resource_id"] == resource_id)
    return phone.step(Action("click", element=index))


def tasks(phone) -> dict:
    return phone.logical_state()["todo"]["tasks"]


def texts(phone) -> list[str]:
    return [e["text"] for e in phone.observe().elements]


def test_today_tab_shows_exactly_the_open_tasks_due_today(phone):
    due = sorted(t["title"] for t in tasks(phone).values() if t["due"] == TODAY.isoformat() and not t["done"])
    tap(phone, "Today")
    assert f"{len(due)} due today" in texts(phone)
    shown = sorted(s.split("\n")[0] for s in texts(phone) if "Due " in s)
    assert shown == due and len(due) >= 3


def test_search_matches_titles_across_lists(phone):
    phone.step(Action("type", text="buy", element=find(phone, "Search tasks")))
    titles = {t["title"] for t in tasks(phone).values() if "buy" in t["title"].casefold()}
    assert f"{len(titles)} results" in texts(phone)
    assert {s.split("\n")[0] for s in texts(phone) if s.split("\n")[0] in titles} == titles


def test_create_in_a_chosen_list_with_due_date_and_priority(phone):
    tap(phone, "New task")
    phone.step(Action("type", text="Wash the car", element=find(phone, "Title")))
    phone.step(Action("type", text="March 20, 2024", element=find(phone, "Due date")))
    tap(phone, "List")
    tap(phone, "Personal")
    tap(phone, "Priority")
    tap(phone, "High")
    tap(phone, "Save")
    new = [t for t in tasks(phone).values() if t["id"].startswith("n")]
    assert new == [{"id": "n1", "title": "Wash the car", "list": "Personal", "due": "2024-03-20",
                    "priority": "High", "notes": "", "done": False}]
    assert phone.current_screen == "home"


@pytest.mark.parametrize("title, due, reason", [("", "2024-03-20", "needs a title"),
                                                 ("Wash the car", "next week", "not understood")])
def test_save_is_refused_without_title_or_with_an_unreadable_date(phone, title, due, reason):
    tap(phone, "New task")
    if title:
        phone.step(Action("type", text=title, element=find(phone, "Title")))
    phone.step(Action("type", text=due, element=find(phone, "Due date")))
    phone.step(Action("system_button", button="back"))  # hide the keyboard
    r = tap(phone, "Save")
    assert not r.ok and reason in r.reason
    assert not any(t["id"].startswith("n") for t in tasks(phone).values())


def test_mark_done_from_detail_then_delete_with_confirmation(phone):
    tap(phone, "Work")
    first = next(t for t in tasks(phone).values() if t["list"] == "Work" and not t["done"])
    tap(phone, first["title"])
    tap(phone, "Mark done")
    assert tasks(phone)[first["id"]]["done"] is True
    tap(phone, "Delete")
    tap(phone, "Cancel")
    assert first["id"] in tasks(phone)
    tap(phone, "Delete")
    press(phone, "button_delete")
    assert first["id"] not in tasks(phone) and phone.current_screen == "list"
