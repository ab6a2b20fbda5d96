"""Notes app: folder counts, create inside a folder, move via the menu, rename guard, search."""

from __future__ import annotations

import pytest

from phonesim import Phone
from phonesim.actions import Action
from phonesim.apps.notes.world import FOLDERS, all_notes, get_note, make_world
from tests.phonesim.test_phone import find, tap


@pytest.fixture
def phone():
    p = Phone(world_seed=0)
    p.step(Action("open_app", app="Notes"))
    return p


def texts(phone: Phone) -> list[str]:
    return [e["text"] for e in phone.observe().elements]


def row(phone: Phone, title: str) -> int:
    """Index of the list row titled `title` (not the search box that may hold the same text)."""
    return next(e["index"] for e in phone.observe().elements
                if e["text"].split("\n")[0] == title and e["class"] != "android.widget.EditText")


def notes(phone: Phone) -> list[dict]:
    return all_notes(phone.world("notes"), phone.data("notes"))


def test_world_facts_are_written_in_their_notes():
    w = make_world(5)
    assert w == make_world(5) and w["facts"] != make_world(6)["facts"]
    for nid, fact in w["facts"].items():
        assert fact["value"] and fact["value"] in w["notes"][nid]["body"]


def test_folder_rows_show_note_counts(phone):
    for f in FOLDERS:
        assert f"{f}\n{sum(n['folder'] == f for n in notes(phone))} notes" in texts(phone)


def test_new_note_from_a_folder_lands_in_that_folder(phone):
    tap(phone, "Travel")
    tap(phone, "New note")
    phone.step(Action("type", text="Rome", element=find(phone, "Title")))
    phone.step(Action("type", text="Colosseum at 9", element=find(phone, "Text")))
    assert tap(phone, "Save").ok
    [new] = [n for n in notes(phone) if n["title"] == "Rome"]
    assert new["folder"] == "Travel" and new["body"] == "Colosseum at 9"
    assert phone.current_screen == "folder"


def test_move_through_the_note_menu(phone):
    n = notes(phone)[0]
    target = next(f for f in FOLDERS if f != n["folder"])
    phone.step(Action("type", text=n["title"], element=find(phone, "Search all notes")))
    phone.step(Action("click", element=row(phone, n["title"])))
    tap(phone, "More options")
    tap(phone, "Move to…")
    assert tap(phone, target).ok
    assert get_note(phone.world("notes"), phone.data("notes"), n["id"])["folder"] == target


def test_rename_refuses_an_empty_title(phone):
    n = notes(phone)[0]
    tap(phone, "All notes")
    phone.step(Action("long_press", element=find(phone, n["title"])))
    tap(phone, "Rename")
    tap(phone, "Clear New title")
    refused = tap(phone, "Rename")
    assert not refused.ok and "empty" in refused.reason
    assert phone.data("notes")["put"] == {}
