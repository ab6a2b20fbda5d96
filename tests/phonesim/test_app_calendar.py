"""Calendar app: month navigation, day view, create / edit / delete events, search, shared dates."""

from __future__ import annotations

import pytest

from phonesim import Phone
from phonesim.actions import Action
from phonesim.apps.contacts.world import full_name, make_world as contacts_world
from phonesim.dates import counted, minutes, read_date
from tests.phonesim.test_app_todo import press
from tests.phonesim.test_phone import find, tap


@pytest.fixture
def phone():
    p = Phone(world_seed=0, size=(540, 1200))
    p.step(Action("open_app", app="Calendar"))
    return p


def events(phone) -> dict:
    return phone.logical_state()["calendar"]["events"]


def title(phone) -> str:
    return next(e["text"] for e in phone.observe().elements if e["resource_id"] == "title")


def test_month_arrows_walk_the_seeded_months_and_stop_at_the_ends(phone):
    assert title(phone) == "March 2024"
    assert tap(phone, "Next month").ok and title(phone) == "April 2024"
    for _ in range(2):
        tap(phone, "Previous month")
    assert title(phone) == "February 2024"
    r = tap(phone, "Previous month")
    assert not r.ok and "no events" in r.reason


def test_day_view_lists_that_days_events_and_new_event_prefills_the_date(phone):
    march = sorted((e for e in events(phone).values() if e["date"].startswith("2024-03")), key=lambda e: e["date"])
    iso = march[0]["date"]
    same_day = [e for e in march if e["date"] == iso]
    tap(phone, f"{int(iso[8:])}•")
    texts = [e["text"] for e in phone.observe().elements]
    assert any(t.startswith(counted(len(same_day), "event")) for t in texts)
    tap(phone, "New event")
    assert phone.top_page()["fields"]["date"] == iso


def test_create_event_reads_typed_date_and_time_formats(phone):
    tap(phone, "New event")
    phone.step(Action("type", text="Team dinner", element=find(phone, "Title")))
    phone.step(Action("click", element=find(phone, "Clear Date")))
    phone.step(Action("type", text="3/21/2024", element=find(phone, "Date")))
    phone.step(Action("type", text="7:30 pm", element=find(phone, "Start time")))
    phone.step(Action("system_button", button="back"))
    assert tap(phone, "Save").ok
    new = events(phone)["n1"]
    assert (new["title"], new["date"], new["start"], new["end"]) == ("Team dinner", "2024-03-21", "19:30", "20:30")


def test_unreadable_time_is_refused(phone):
    tap(phone, "New event")
    phone.step(Action("type", text="Team dinner", element=find(phone, "Title")))
    phone.step(Action("type", text="after lunch", element=find(phone, "Start time")))
    phone.step(Action("system_button", button="back"))
    r = tap(phone, "Save")
    assert not r.ok and "start time" in r.reason and "n1" not in events(phone)


def test_rescheduling_keeps_the_length_and_delete_asks_first(phone):
    e = next(e for e in events(phone).values() if e["date"].startswith("2024-03"))
    tap(phone, "Search")
    phone.step(Action("type", text=e["title"], element=find(phone, "Search events")))
    press(phone, f"event_{e['id']}")
    tap(phone, "Edit")
    phone.step(Action("click", element=find(phone, "Clear Start time")))
    phone.step(Action("type", text="06:15", element=find(phone, "Start time")))
    phone.step(Action("system_button", button="back"))
    tap(phone, "Save")
    moved = events(phone)[e["id"]]
    assert moved["start"] == "06:15" and moved["date"] == e["date"]
    assert minutes(moved["end"]) - minutes(moved["start"]) == minutes(e["end"]) - minutes(e["start"])
    tap(phone, "Delete")
    press(phone, "button_delete")
    assert e["id"] not in events(phone) and phone.current_screen == "search"


def test_search_matches_locations_too(phone):
    tap(phone, "Search")
    phone.step(Action("type", text="Cafe Luna", element=find(phone, "Search events")))
    hits = [e for e in events(phone).values() if e["location"] == "Cafe Luna"]
    assert counted(len(hits), "result") in [e["text"] for e in phone.observe().elements]


def test_guests_come_from_the_contacts_world_of_the_same_seed():
    people = {full_name(c) for c in contacts_world(0)["contacts"].values()}
    guests = {g for e in Phone(0).world("calendar")["events"].values() for g in e["guests"]}
    assert guests and guests <= people


@pytest.mark.parametrize("text, iso", [("2024-03-05", "2024-03-05"), ("March 5, 2024", "2024-03-05"),
                                       ("tomorrow", None), ("2024-03-05 or 2024-03-06", None)])
def test_read_date_accepts_one_concrete_date(text, iso):
    assert read_date(text) == iso


def test_a_count_says_its_noun_in_the_singular_or_plural():
    assert counted(1, "event") == "1 event" and counted(3, "event") == "3 events"
    assert counted(2, "match", "matches") == "2 matches"
