"""Messages app: threads agree with the contacts world, send, new conversation, delete, search."""

from __future__ import annotations

import pytest

from phonesim import Phone
from phonesim.actions import Action
from phonesim.apps.contacts.world import full_name, make_world as contacts_world
from tests.phonesim.test_app_todo import press
from tests.phonesim.test_phone import find, tap


@pytest.fixture
def phone():
    p = Phone(world_seed=0, size=(540, 1200))
    p.step(Action("open_app", app="Messages"))
    return p


def threads(phone) -> dict:
    return phone.logical_state()["sms"]["threads"]


def test_threads_use_names_and_numbers_of_the_contacts_world():
    contacts = contacts_world(0)["contacts"]
    world = Phone(0).world("sms")
    for cid, t in world["threads"].items():
        assert (t["name"], t["phone"]) == (full_name(contacts[cid]), contacts[cid]["phone"])
        assert [m["at"] for m in t["messages"]] == sorted(m["at"] for m in t["messages"])


def test_inbox_is_newest_first_and_sending_moves_a_thread_to_the_top(phone):
    order = list(threads(phone))
    rows = [e["resource_id"] for e in phone.observe().elements if e["resource_id"].startswith("thread_")]
    assert rows == [f"thread_{cid}" for cid in order[:len(rows)]]
    last = order[-1]
    phone.step(Action("type", text=phone.world("sms")["people"][last]["name"], element=find(phone, "Search messages")))
    press(phone, f"thread_{last}")
    assert not tap(phone, "Send").ok  # disabled while the box is empty
    phone.step(Action("type", text="On my way!", element=find(phone, "Text message")))
    tap(phone, "Send")
    sent = threads(phone)[last][-1]
    assert sent["from"] == "me" and sent["text"] == "On my way!" and sent["at"].startswith("2024-03-04 ")
    assert phone.top_page()["fields"]["msg"] == ""
    assert list(threads(phone))[0] == last


def test_new_conversation_with_a_contact_without_thread(phone):
    people = phone.world("sms")["people"]
    cid = next(c for c in sorted(people) if c not in threads(phone))
    tap(phone, "Start chat")
    phone.step(Action("type", text=people[cid]["name"], element=find(phone, "To")))
    press(phone, f"to_{cid}")
    phone.step(Action("type", text="Hi!", element=find(phone, "Text message")))
    tap(phone, "Send")
    assert [m["text"] for m in threads(phone)[cid]] == ["Hi!"]


def test_delete_thread_by_long_press_asks_first(phone):
    cid = list(threads(phone))[0]
    phone.step(Action("long_press", element=find(phone, phone.world("sms")["people"][cid]["name"])))
    press(phone, "button_cancel")
    assert cid in threads(phone)
    phone.step(Action("long_press", element=find(phone, phone.world("sms")["people"][cid]["name"])))
    press(phone, "button_delete")
    assert cid not in threads(phone)


def test_search_finds_message_text(phone):
    t = next(t for t in phone.world("sms")["threads"].values() if "code" in t["facts"])
    phone.step(Action("type", text=t["facts"]["code"], element=find(phone, "Search messages")))
    shown = [e["resource_id"] for e in phone.observe().elements if e["resource_id"].startswith("thread_")]
    assert f"thread_{t['cid']}" in shown
