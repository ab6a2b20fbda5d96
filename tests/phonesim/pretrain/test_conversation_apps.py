"""The conversations apps of the pretraining world: their phones, templates the solver plays with the action
kinds R7 found missing (typing lines, names and handles, long presses, answers), lines typed and sent, the
recipient picker, the long-press menus with their confirmations, the edit form's check of a handle."""

from __future__ import annotations

import pytest

from phonesim import Phone, instantiate
from phonesim.actions import Action, ActionType
from phonesim.pretrain import (HELD_OUT_APPS, PHONES, load_pretrain_apps, pretrain_specs, pretrain_templates,
                               trained_apps)
from phonesim.pretrain.conversations import SEARCH_FROM, ConvoSpec, thread_list
from tests.phonesim.conftest import solved, solved_cleanly
from tests.phonesim.pretrain.screen_steps import act, element, family, launched


CONVO_APPS = [name for name, spec in pretrain_specs().items() if isinstance(spec, ConvoSpec)]
HANDWRITTEN = [a for a in CONVO_APPS if a in PHONES["handmade"]]
FAMILIES = {"send", "send_new", "reply_topic", "count_unread", "mark_read", "delete_thread", "read_last",
            "open_person", "search_person", "query_handle", "query_group", "edit_handle", "star", "block"}
TYPING = {"send", "send_new", "reply_topic", "search_person", "edit_handle"}
LONG_PRESSING = {"mark_read", "delete_thread", "star", "block"}
# every template of every conversations app, played along its stored solution (tests/training/base/
# test_world_solutions.py re-solves a sample)
CONVO_IDS = sorted(t for t in pretrain_templates() if t.split(".")[0] in CONVO_APPS)


def _texts(phone: Phone) -> list[str]:
    return [e["text"] for e in phone.observe().elements]


def _back(phone: Phone) -> None:
    assert phone.step(Action("system_button", button="back")).ok


def _state(phone: Phone, app: str) -> dict:
    return phone.logical_state()[app]


def test_conversation_apps_are_a_kind_on_phones_of_their_own_with_some_held_out():
    assert sorted(HANDWRITTEN) == ["porchlight", "ropeline"] and len(CONVO_APPS) == 32
    assert {a for p in ("convo1", "convo2", "convo3") for a in PHONES[p]} == set(CONVO_APPS) - set(HANDWRITTEN)
    assert {"porchlight", *PHONES["convo3"]} <= set(HELD_OUT_APPS) and "ropeline" in trained_apps()
    assert not set(PHONES["convo2"]) & set(HELD_OUT_APPS)
    specs = [pretrain_specs()[a] for a in CONVO_APPS]
    for knob in ("people_at", "compose", "picker", "person_actions", "sub_line", "badge", "handle_style"):
        assert len({getattr(s, knob) for s in specs}) > 1, knob  # every layout knob takes more than one value
    others = {s.label for s in pretrain_specs().values() if not isinstance(s, ConvoSpec)}
    assert not others & {s.label for s in specs}
    for app in CONVO_APPS:
        assert {family(t.id) for t in load_pretrain_apps()[app].templates} == FAMILIES, app


def test_the_thread_list_shows_people_last_lines_unread_badges_and_an_unread_header():
    phone = launched("ropeline")
    state = _state(phone, "ropeline")
    unread = [t for t in state["threads"].values() if t["unread"]]
    assert f"{len(unread)} unread" in _texts(phone)
    rows = [e for e in phone.observe().elements if e["long_clickable"]]
    newest = thread_list(phone.world("ropeline"), phone.data("ropeline"))[0]
    assert newest["said"][-1]["day"] == min(t["said"][-1]["day"] for t in state["threads"].values())
    last = newest["said"][-1]
    assert rows[0]["text"] == (f"{state['people'][newest['id']]['title']}\n"
                               + ("You: " if last["from"] == "me" else "") + last["text"])
    badges = {e["text"] for e in phone.observe().elements if e["text"].isdigit()}
    assert badges <= {str(t["unread"]) for t in unread}


@pytest.mark.parametrize("template_id", CONVO_IDS)
def test_every_conversations_template_is_solved_cleanly_with_the_action_kind_it_exercises(template_id):
    task, path = solved_cleanly(template_id, 0)
    kinds = [a.type for a in path]
    name = family(template_id)
    if name in TYPING:
        assert ActionType.TYPE in kinds  # the compose field, the picker, the people search or the handle field
    if name in LONG_PRESSING:
        assert ActionType.LONG_PRESS in kinds  # the thread's or the person's menu is the only way
    if task.answer_spec is not None:
        assert ActionType.ANSWER in kinds


def test_a_line_typed_and_sent_reaches_the_thread_and_the_list():
    phone = launched("ropeline")
    row = next(e for e in phone.observe().elements if e["long_clickable"])
    name = row["text"].split("\n")[0]
    act(phone, "click", row["text"])
    act(phone, "type", "Reply…", "Top rope is mine")
    act(phone, "click", "Send")
    assert "Sent" in _texts(phone)  # the toast: the one sign the task is done
    assert "Top rope is mine\nYou · 08:00" in _texts(phone)  # the newest bubble, under the compose field
    _back(phone)
    assert f"{name}\nYou: Top rope is mine" in _texts(phone)
    pid = next(pid for pid, p in _state(phone, "ropeline")["people"].items() if p["title"] == name)
    said = _state(phone, "ropeline")["threads"][pid]["said"][-1]
    assert (said["from"], said["text"], said["day"]) == ("me", "Top rope is mine", 0)


def test_the_picker_searches_the_people_and_starts_a_thread():
    phone = launched("porchlight")  # its picker lists nobody until a name is typed
    before = set(_state(phone, "porchlight")["threads"])
    act(phone, "click", "New thread")
    assert not [e for e in phone.observe().elements if "\n" in e["text"]]
    act(phone, "type", "Find a neighbour", "ingri")
    assert "No neighbours found" in _texts(phone)
    act(phone, "click", "Clear To")
    stranger = next(p for pid, p in _state(phone, "porchlight")["people"].items() if pid not in before)
    act(phone, "type", "Find a neighbour", stranger["title"].split()[1][:4].lower())
    act(phone, "click", f"{stranger['title']}\n{stranger['handle']}")
    assert phone.top_page("porchlight")["screen"] == "thread"
    assert f"Nothing yet. Say something to {stranger['title'].split()[0]}." in _texts(phone)
    act(phone, "type", "Write…", "Leave it on my step")
    _back(phone)  # the keyboard hides the Post button under a bottom compose field
    act(phone, "click", "Post")
    assert set(_state(phone, "porchlight")["threads"]) == before | {stranger["id"]}
    task, path = solved("porchlight.send_new", 0)
    assert [a.type for a in path[1:3]] == [ActionType.CLICK, ActionType.TYPE]  # the floating button, the picker
    assert path[2].text == task.params["name"]


def test_the_thread_menu_marks_read_and_deletes_after_a_confirmation():
    phone = launched("ropeline")
    threads = _state(phone, "ropeline")["threads"]
    unread = next(t for t in threads.values() if t["unread"])
    name = _state(phone, "ropeline")["people"][unread["id"]]["title"]
    act(phone, "long_press", f"{name}\n", starts=True)
    assert {name, "Mark as read", "Delete"} <= set(_texts(phone))
    act(phone, "click", "Mark as read")
    assert _state(phone, "ropeline")["threads"][unread["id"]]["unread"] == 0
    act(phone, "long_press", f"{name}\n", starts=True)
    assert "Mark as read" not in _texts(phone)  # nothing left to mark
    act(phone, "click", "Delete")
    assert "Delete this chat?" in _texts(phone)
    act(phone, "click", "Cancel")
    assert unread["id"] in _state(phone, "ropeline")["threads"]
    act(phone, "long_press", f"{name}\n", starts=True)
    act(phone, "click", "Delete")
    act(phone, "click", "Delete")
    assert unread["id"] not in _state(phone, "ropeline")["threads"] and "Chat removed" in _texts(phone)
    app = load_pretrain_apps()["ropeline"]
    assert app.transitions["ask_drop"].src == ("home",) and app.transitions["star"].src == ("home",)


def test_the_person_menu_stars_at_once_and_blocks_after_a_confirmation_then_sending_is_refused():
    phone = launched("ropeline")
    act(phone, "click", "Pals")
    person = _state(phone, "ropeline")["people"]["p1"]
    row = f"{person['title']}\n{person['handle']}"
    act(phone, "long_press", row)
    act(phone, "click", "Unstar" if person["starred"] else "Star")
    assert _state(phone, "ropeline")["people"]["p1"]["starred"] is not person["starred"]
    act(phone, "long_press", row)
    act(phone, "click", "Block")
    assert f"Block {person['title']}?" in _texts(phone)
    act(phone, "click", "Block")
    assert _state(phone, "ropeline")["people"]["p1"]["blocked"] is True
    assert f"{row} · blocked" in _texts(phone) and f"{person['title']}: blocked" in _texts(phone)
    act(phone, "click", f"{row} · blocked")
    assert "Status\nBlocked" in _texts(phone) and f"Handle\n{person['handle']}" in _texts(phone)
    act(phone, "click", "Chat")
    act(phone, "type", "Reply…", "Be at the hut in ten")
    assert not phone.step(Action("click", element=element(phone, "Send"))).ok  # the guard: blocked


def test_the_edit_form_keeps_a_typed_handle_and_refuses_one_it_cannot_read():
    phone = launched("porchlight")
    act(phone, "click", "Neighbours")
    person = _state(phone, "porchlight")["people"]["p2"]
    act(phone, "click", person["title"], starts=True)
    act(phone, "click", "Edit")
    assert {person["title"], person["handle"]} <= set(_texts(phone))
    act(phone, "click", "Clear Key tag")
    act(phone, "type", "AB-0000", "@not.a.tag")
    assert not phone.step(Action("click", element=element(phone, "Save"))).ok
    act(phone, "click", "Clear Key tag")
    act(phone, "type", "AB-0000", "ZQ-4242")
    act(phone, "click", "Circle", starts=True)
    other = next(v for v in ("Orchard", "Millrace") if v != person["group"])
    act(phone, "click", other)
    act(phone, "click", "Save")
    assert "Neighbour saved" in _texts(phone)
    assert "Key tag\nZQ-4242" in _texts(phone) and f"Circle\n{other}" in _texts(phone)
    assert _state(phone, "porchlight")["people"]["p2"]["handle"] == "ZQ-4242"


def test_search_is_the_shorter_way_to_people_far_down_the_list():
    task, path = solved("ropeline.search_person", 0)
    people = sorted(_state(task.make_phone(), "ropeline")["people"].values(), key=lambda p: p["title"])
    assert [p["id"] for p in people].index(task.params["pid"]) >= SEARCH_FROM
    assert [a.type for a in path[1:]] == [ActionType.CLICK, ActionType.TYPE, ActionType.CLICK]  # tab, type, tap
    assert path[2].text == task.params["name"]


def test_instances_of_a_conversations_template_vary_with_the_seed():
    assert len({instantiate("ropeline.send", s).instruction for s in range(8)}) > 4
    assert len({instantiate("ropeline.count_unread", s).answer_spec.gold for s in range(8)}) > 2
