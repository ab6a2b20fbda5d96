"""Recorder app: record / save flow, rename, trash, restore, delete forever, empty trash."""

from __future__ import annotations

import pytest

from phonesim import Phone
from phonesim.actions import Action
from tests.phonesim.test_app_todo import press
from tests.phonesim.test_phone import find, tap


@pytest.fixture
def phone():
    p = Phone(world_seed=0, size=(540, 1200))
    p.step(Action("open_app", app="Recorder"))
    return p


def recordings(phone) -> dict:
    return phone.logical_state()["recorder"]["recordings"]


def test_record_stop_save_creates_a_named_recording_dated_today(phone):
    tap(phone, "Record")
    tap(phone, "Start recording")
    assert phone.logical_state()["recorder"] == Phone(0).logical_state()["recorder"]  # recording is page state
    tap(phone, "Stop")
    phone.step(Action("type", text="Parking spot", element=find(phone, "Name")))
    phone.step(Action("system_button", button="back"))
    tap(phone, "Save")
    new = recordings(phone)["n1"]
    assert (new["name"], new["date"], new["trashed"]) == ("Parking spot", "2024-03-04", False)
    assert phone.current_screen == "list"


def test_saving_without_a_name_uses_the_suggested_one_and_discard_keeps_nothing(phone):
    tap(phone, "Record")
    tap(phone, "Start recording")
    tap(phone, "Stop")
    tap(phone, "Discard")
    assert "n1" not in recordings(phone)
    tap(phone, "Record")
    tap(phone, "Start recording")
    tap(phone, "Stop")
    tap(phone, "Save")
    assert recordings(phone)["n1"]["name"] == f"Recording {len(Phone(0).world('recorder')['recordings']) + 1}"


def test_rename_from_the_long_press_menu(phone):
    r = next(r for r in recordings(phone).values() if not r["trashed"])
    phone.step(Action("long_press", element=find(phone, r["name"])))
    tap(phone, "Rename")
    phone.step(Action("click", element=find(phone, "Clear Name")))
    phone.step(Action("type", text="Lecture 7", element=find(phone, "Name")))
    phone.step(Action("system_button", button="back"))
    tap(phone, "Save")
    assert recordings(phone)[r["id"]]["name"] == "Lecture 7"


def test_delete_goes_to_trash_then_restore_and_purge(phone):
    r = next(r for r in recordings(phone).values() if not r["trashed"])
    press(phone, f"recording_{r['id']}")
    tap(phone, "Delete")
    assert recordings(phone)[r["id"]]["trashed"] is True and phone.current_screen == "list"
    tap(phone, "Trash")
    in_trash = [x for x in recordings(phone).values() if x["trashed"]]
    assert f"{len(in_trash)} recordings in trash" in [e["text"] for e in phone.observe().elements]
    press(phone, f"recording_{r['id']}")
    tap(phone, "Restore")
    assert recordings(phone)[r["id"]]["trashed"] is False
    other = next(x for x in recordings(phone).values() if x["trashed"])
    press(phone, f"recording_{other['id']}")
    tap(phone, "Delete forever")
    assert other["id"] not in recordings(phone)


def test_empty_trash_purges_only_trashed_recordings(phone):
    kept = {r["id"] for r in recordings(phone).values() if not r["trashed"]}
    tap(phone, "Trash")
    tap(phone, "Empty trash")
    press(phone, "button_empty")
    assert set(recordings(phone)) == kept
    assert "Trash is empty" in [e["text"] for e in phone.observe().elements]
