"""The timed-entry apps of the pretraining world: their phones, templates the solver plays with the
action kinds R7 found missing (typing times and searches, long presses, answers), forms that keep
what is typed, the long-press menu and its confirmation, the search field, the row's switch."""

from __future__ import annotations

import pytest

from phonesim import Phone, instantiate
from phonesim.actions import Action, ActionType
from phonesim.pretrain import (HELD_OUT_APPS, PHONES, load_pretrain_apps, pretrain_specs, pretrain_templates,
                               trained_apps)
from phonesim.pretrain.timed import DATES, SEARCH_FROM, TimedSpec
from tests.phonesim.conftest import solved, solved_cleanly
from tests.phonesim.pretrain.screen_steps import act, element, family, launched


TIMED_APPS = [name for name, spec in pretrain_specs().items() if isinstance(spec, TimedSpec)]
HANDWRITTEN = [a for a in TIMED_APPS if a in PHONES["handmade"]]
FAMILIES = {"switch_on", "switch_off", "open_entry", "search_open", "add", "change_time", "delete", "duplicate",
            "query_time", "query_count", "query_then_off"}
# every template of every timed app, played along its stored solution (tests/training/base/
# test_world_solutions.py re-solves a sample)
TIMED_IDS = sorted(t for t in pretrain_templates() if t.split(".")[0] in TIMED_APPS)


def _texts(phone: Phone) -> list[str]:
    return [e["text"] for e in phone.observe().elements]


def _entries(phone: Phone, app: str) -> list[dict]:
    return list(phone.logical_state()[app]["items"].values())


def test_timed_apps_are_a_kind_on_phones_of_their_own_with_some_held_out():
    assert sorted(HANDWRITTEN) == ["pillbox", "shiftboard"] and len(TIMED_APPS) == 32
    assert {a for p in ("timed1", "timed2", "timed3") for a in PHONES[p]} == set(TIMED_APPS) - set(HANDWRITTEN)
    assert {"shiftboard", *PHONES["timed3"]} <= set(HELD_OUT_APPS) and "pillbox" in trained_apps()
    assert {s.schedule for s in pretrain_specs().values() if isinstance(s, TimedSpec)} == {"days", "date"}
    others = {s.label for s in pretrain_specs().values() if not isinstance(s, TimedSpec)}
    assert not others & {pretrain_specs()[a].label for a in TIMED_APPS}
    for app in TIMED_APPS:
        families = {family(t.id) for t in load_pretrain_apps()[app].templates}
        assert FAMILIES < families and len(families) == 14, app


def test_a_timed_app_shows_time_rows_with_switches_a_count_header_and_a_search_field():
    phone = launched("pillbox")
    rows = [e for e in phone.observe().elements if e["long_clickable"]]
    entries = sorted(_entries(phone, "pillbox"), key=lambda r: r["time"])
    assert [r["text"].split("\n")[0] for r in rows] == [r["time"] for r in entries][:len(rows)]
    assert f"{sum(r['on'] for r in entries)} of {len(entries)} doses active" in _texts(phone)
    assert element(phone, "Search doses") is not None
    assert sum(e["class"].endswith("Switch") for e in phone.observe().elements) == len(rows)


@pytest.mark.parametrize("template_id", TIMED_IDS)
def test_every_timed_template_is_solved_cleanly_with_the_action_kind_it_exercises(template_id):
    task, path = solved_cleanly(template_id, 0)
    kinds = [a.type for a in path]
    name = family(template_id)
    if name in ("search_open", "add", "add_days", "add_dated", "change_time"):
        assert ActionType.TYPE in kinds  # the search field, or the form's HH:MM / date / title fields
    if name in ("delete", "duplicate"):
        assert ActionType.LONG_PRESS in kinds  # the row's menu is the only way
    if task.answer_spec is not None:
        assert ActionType.ANSWER in kinds


def test_search_is_the_shorter_way_to_entries_far_down_the_list():
    task, path = solved("pillbox.search_open", 0)
    place = [r["id"] for r in sorted(_entries(task.make_phone(), "pillbox"), key=lambda r: r["time"])]
    assert place.index(task.params["eid"]) >= SEARCH_FROM
    assert len(path) == 3 and [a.type for a in path[1:]] == [ActionType.TYPE, ActionType.CLICK]  # open, type, tap
    assert path[1].text == task.params["title"]


def test_a_repeating_entry_typed_into_the_form_keeps_its_time_title_and_days():
    phone = launched("pillbox")
    act(phone, "click", "New dose")
    act(phone, "type", "HH:MM", "7:05")
    act(phone, "type", "Medicine", "Sleep tea", starts=True)
    act(phone, "click", "Mon")
    act(phone, "click", "Wed")
    act(phone, "click", "Save")
    [made] = [r for r in _entries(phone, "pillbox") if r["id"].startswith("n")]
    assert (made["time"], made["title"], made["days"], made["on"]) == ("07:05", "Sleep tea", ["Mon", "Wed"], True)
    assert "Dose saved for 07:05" in _texts(phone)  # the toast: the one sign the task is done
    act(phone, "type", "Search doses", "Sleep")
    assert "1 result" in _texts(phone)
    act(phone, "click", "07:05\nSleep tea · Mon, Wed")
    assert "Time\n07:05" in _texts(phone) and "Repeats\nMon, Wed" in _texts(phone)
    act(phone, "click", "Edit")
    assert {"07:05", "Sleep tea"} <= set(_texts(phone))
    chips = {e["text"]: e["checked"] for e in phone.observe().elements if e["text"] in ("Mon", "Tue", "Wed")}
    assert chips == {"Mon": True, "Tue": False, "Wed": True}


def test_a_dated_entry_takes_a_typed_date_and_refuses_a_time_it_cannot_read():
    phone = launched("shiftboard")
    act(phone, "click", "New shift")
    assert DATES[0] in _texts(phone)  # the date field starts at the schedule's first day
    act(phone, "click", "Clear Date")
    act(phone, "type", "YYYY-MM-DD", "June 20, 2024")
    act(phone, "type", "Post", "Ice rink", starts=True)
    act(phone, "type", "HH:MM", "25:99")
    assert not phone.step(Action("click", element=element(phone, "Save"))).ok  # the guard: not a time
    act(phone, "click", "Clear Starts at")
    act(phone, "type", "HH:MM", "6:30 pm")
    act(phone, "click", "Save")
    [made] = [r for r in _entries(phone, "shiftboard") if r["id"].startswith("n")]
    assert (made["date"], made["time"], made["title"]) == ("2024-06-20", "18:30", "Ice rink")
    act(phone, "type", "Search shifts", "Ice rink")
    act(phone, "click", "18:30\nIce rink", starts=True)
    assert "Date\nThursday, June 20, 2024" in _texts(phone) and "Starts at\n18:30" in _texts(phone)
    act(phone, "click", "Edit")
    assert {"2024-06-20", "18:30", "Ice rink"} <= set(_texts(phone))


def test_the_long_press_menu_duplicates_and_deletes_after_a_confirmation():
    phone = launched("pillbox")
    first = min(_entries(phone, "pillbox"), key=lambda r: r["time"])
    row = f"{first['time']}\n{first['title']} ·"
    act(phone, "long_press", row, starts=True)
    assert {"Duplicate", "Delete"} <= set(_texts(phone)) and first["title"] in _texts(phone)
    act(phone, "click", "Duplicate")
    copies = [r for r in _entries(phone, "pillbox") if r["title"] == first["title"]]
    assert len(copies) == 2 and {r["time"] for r in copies} == {first["time"]}
    act(phone, "long_press", row, starts=True)
    act(phone, "click", "Delete")
    assert "Delete this dose?" in _texts(phone)
    act(phone, "click", "Cancel")
    assert len([r for r in _entries(phone, "pillbox") if r["title"] == first["title"]]) == 2
    act(phone, "long_press", row, starts=True)
    act(phone, "click", "Delete")
    act(phone, "click", "Delete")
    assert len([r for r in _entries(phone, "pillbox") if r["title"] == first["title"]]) == 1
    assert "Dose removed" in _texts(phone)
    app = load_pretrain_apps()["pillbox"]
    assert app.transitions["ask_delete"].src == ("home",)  # nowhere but the long-press menu


def test_the_row_opens_the_entry_and_its_switch_toggles_it():
    phone = launched("pillbox")
    first = min(_entries(phone, "pillbox"), key=lambda r: r["time"])
    switch = element(phone, f"{first['time']}\n{first['title']} ·", starts=True) + 1
    assert phone.step(Action("click", element=switch)).ok
    state = "active" if not first["on"] else "off"
    assert f"Dose at {first['time']}: {state}" in _texts(phone)
    assert phone.logical_state()["pillbox"]["items"][first["id"]]["on"] is not first["on"]
    act(phone, "click", f"{first['time']}\n{first['title']} ·", starts=True)
    assert phone.top_page("pillbox")["screen"] == "entry" and f"Time\n{first['time']}" in _texts(phone)


def test_instances_of_a_timed_template_vary_with_the_seed():
    assert len({instantiate("pillbox.change_time", s).instruction for s in range(8)}) > 4
    assert len({instantiate("pillbox.query_count", s).answer_spec.gold for s in range(8)}) > 2
