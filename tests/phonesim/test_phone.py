"""OS layer and actions: no-ops, back priority, recents, keyboard, scrolling, observations."""

from __future__ import annotations

import pytest

from phonesim import Phone, parse_short
from phonesim.actions import Action, ParseFailure
from phonesim.state import canonical_json


def find(phone: Phone, text: str) -> int:
    """Index of the first element whose text (first line) or description equals `text`."""
    for e in phone.observe().elements:
        if e["text"].split("\n")[0] == text or e["desc"] == text:
            return e["index"]
    raise AssertionError(f"no element {text!r} on {phone.current_screen}")


def tap(phone: Phone, text: str):
    return phone.step(Action("click", element=find(phone, text)))


@pytest.fixture
def phone():
    return Phone(world_seed=0, size=(540, 1200))


@pytest.mark.parametrize("action, reason", [
    (Action("click", point=(500, 130)), "tap on nothing"),  # the launcher clock: no tap target
    (Action("click", element=999), "out of range"),
    (Action("open_app", app="Snapchat"), "unknown app"),
    (Action("type", text="hello"), "no focused text field"),
    (Action("swipe", direction="up"), "nothing to scroll"),
    (Action("system_button", button="back"), "home screen"),
    (Action("key", key="F13"), "no focused text field"),
    (Action("long_press", point=(500, 130)), "tap on nothing"),
])
def test_pointless_actions_are_recorded_noops(phone, action, reason):
    before = canonical_json(phone.state)
    r = phone.step(action)
    assert not r.ok and reason in r.reason
    assert canonical_json(phone.state) == before


@pytest.mark.parametrize("raw", [{"type": "fly"}, {"type": "click", "args": {"point": [5000, 1]}},
                                 {"type": "click", "args": {"pointer": [1, 1]}}, "not json", 42,
                                 ParseFailure("no tool call", raw="blah")])
def test_malformed_actions_are_recorded_noops(phone, raw):
    r = phone.step(raw)
    assert not r.ok and r.reason


def test_launcher_tap_and_open_app_by_label_or_name(phone):
    assert tap(phone, "Settings").ok and phone.current_app == "settings"
    phone.step(Action("system_button", button="home"))
    assert phone.step(Action("open_app", app="contacts")).ok and phone.current_screen == "list"


def test_back_priority_dialog_then_keyboard_then_page_then_home(phone):
    phone.step(Action("open_app", app="Contacts"))
    tap(phone, "Create contact")
    phone.step(Action("type", text="Zed", element=find(phone, "First name")))
    tap(phone, "Group")
    assert phone.top_page()["dialog"] and phone.top_page()["focus"] == "first"
    back = Action("system_button", button="back")
    assert phone.step(back).event == "back: dismiss overlay"
    assert phone.step(back).event == "back: hide keyboard"
    assert phone.step(back).event == "back: page" and phone.current_screen == "list"
    assert phone.step(back).event == "back: home" and phone.current_app == "launcher"


def test_recents_switch_keeps_each_apps_ui_state(phone):
    phone.step(Action("open_app", app="Contacts"))
    tap(phone, "Create contact")
    phone.step(Action("type", text="Draft", element=find(phone, "First name")))
    phone.step(Action("open_app", app="Settings"))
    tap(phone, "Display")
    phone.step(Action("system_button", button="recent"))
    assert phone.current_app == "recents"
    tap(phone, "Contacts")
    assert phone.current_screen == "create" and phone.top_page()["fields"]["first"] == "Draft"
    phone.step(Action("system_button", button="recent"))
    tap(phone, "Settings")
    assert phone.current_screen == "display"


def test_keyboard_keys_type_and_enter_hides(phone):
    phone.step(Action("open_app", app="Contacts"))
    tap(phone, "Search contacts")
    frame = phone.frame()
    assert frame.keyboard
    key_o = next(k for k in frame.nodes if k.kind == "keyboard").children
    for ch in "ol":
        node = next(k for k in key_o if k.text == ch)
        cx, cy = (node.x + node.w / 2) * 1000 / 360, (node.y + node.h / 2) * 1000 / 800
        assert phone.step(Action("click", point=(cx, cy))).ok
    assert phone.top_page()["fields"]["q"] == "ol"
    assert phone.step(Action("key", key="backspace")).ok and phone.top_page()["fields"]["q"] == "o"
    assert phone.step(Action("system_button", button="enter")).ok and not phone.frame().keyboard


def test_search_filters_and_swipe_scrolls(phone):
    phone.step(Action("open_app", app="Contacts"))
    first = [e["text"] for e in phone.observe().elements]
    assert phone.step(Action("swipe", direction="up")).ok
    after = [e["text"] for e in phone.observe().elements]
    assert first != after
    assert phone.step(Action("swipe", point=(500, 300), end_point=(500, 700))).ok  # drag content down
    assert phone.top_page()["scroll"] < phone.frame().scroll_max


def test_element_and_point_targets_agree(phone):
    e = phone.observe().elements[find(phone, "Contacts")]
    x1, y1, x2, y2 = e["grid"]
    a, b = phone.fork(), phone.fork()
    a.step(Action("click", element=e["index"]))
    b.step(Action("click", point=((x1 + x2) // 2, (y1 + y2) // 2)))
    assert a.state == b.state and a.current_app == "contacts"


def test_observation_shapes(phone):
    phone.step(Action("open_app", app="Settings"))
    obs = phone.observe()
    assert obs.app == "settings" and obs.screen == "main"
    e = obs.elements[find(phone, "Display")]
    assert set(e) >= {"index", "text", "desc", "class", "resource_id", "bounds", "grid", "clickable", "focused",
                      "scrollable", "checked"}
    assert 0 <= e["grid"][0] < e["grid"][2] <= 1000
    assert e["bounds"][2] <= 540 and e["bounds"][3] <= 1200  # pixels of the configured size
    assert obs.a11y["package"] == "com.android.settings"
    assert obs.screenshot.size == (540, 1200)
    assert obs.png[:8] == b"\x89PNG\r\n\x1a\n"


def test_toast_shows_for_one_observation(phone):
    phone.step(Action("open_app", app="Contacts"))
    phone.step(Action("click", element=find(phone, "Create contact")))
    phone.step(Action("type", text="Ann", element=find(phone, "First name")))
    tap(phone, "Save")
    assert any(e["text"] == "Contact saved" for e in phone.observe().elements)
    phone.step(Action("wait"))
    assert not any(e["text"] == "Contact saved" for e in phone.observe().elements)


def test_guard_rejects_saving_a_nameless_contact(phone):
    phone.step(Action("open_app", app="Contacts"))
    tap(phone, "Create contact")
    r = tap(phone, "Save")
    assert not r.ok and "needs a name" in r.reason and phone.current_screen == "create"


def test_airplane_mode_cascades(phone):
    phone.step(Action("open_app", app="Settings"))
    tap(phone, "Network & internet")
    tap(phone, "Airplane mode")
    s = phone.state["data"]["system"]
    assert s["airplane"] and not s["wifi"] and not s["bluetooth"] and not s["mobile_data"]
    assert not tap(phone, "Mobile data").ok


def test_short_syntax():
    assert parse_short("tap 3") == Action("click", element=3)
    assert parse_short("tap 500 420") == Action("click", point=(500, 420))
    assert parse_short("open Contacts") == Action("open_app", app="Contacts")
    assert parse_short('{"type": "wait", "args": {}}') == Action("wait")
    assert isinstance(parse_short("swipe sideways"), str)
    assert isinstance(parse_short("jump"), str)
