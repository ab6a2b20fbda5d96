"""Clock app: alarm switch vs. row, alarm editor with repeat days, timer / stopwatch state,
world clocks with their offsets."""

from __future__ import annotations

import pytest

from phonesim import Phone
from phonesim.actions import Action
from phonesim.apps.clock.world import city_time, repeat_text
from tests.phonesim.test_app_todo import press
from tests.phonesim.test_phone import find, tap


@pytest.fixture
def phone():
    p = Phone(world_seed=0, size=(540, 1200))
    p.step(Action("open_app", app="Clock"))
    return p


def clock(phone) -> dict:
    return phone.logical_state()["clock"]


def test_switch_toggles_the_alarm_and_the_row_opens_its_editor(phone):
    a = next(iter(clock(phone)["alarms"].values()))
    press(phone, f"alarm_{a['id']}_switch")
    assert clock(phone)["alarms"][a["id"]]["on"] is (not a["on"])
    press(phone, f"alarm_{a['id']}")
    assert phone.current_screen == "alarm" and phone.top_page()["fields"]["time"] == a["time"]


def test_new_alarm_with_label_and_repeat_days(phone):
    tap(phone, "Add alarm")
    phone.step(Action("type", text="6:45 am", element=find(phone, "Time")))
    phone.step(Action("type", text="Pills", element=find(phone, "Label")))
    phone.step(Action("system_button", button="back"))
    for d in ("Sat", "Tue", "Sat", "Thu"):
        tap(phone, d)
    tap(phone, "Save")
    assert clock(phone)["alarms"]["n1"] == {"id": "n1", "time": "06:45", "label": "Pills", "days": ["Tue", "Thu"],
                                            "on": True}
    assert "06:45\nPills · Tue, Thu" in [e["text"] for e in phone.observe().elements]


def test_delete_alarm_from_its_editor(phone):
    a = next(iter(clock(phone)["alarms"].values()))
    press(phone, f"alarm_{a['id']}")
    tap(phone, "Delete alarm")
    press(phone, "button_delete")
    assert a["id"] not in clock(phone)["alarms"] and phone.current_screen == "main"


def test_timer_needs_whole_minutes_and_stopwatch_laps_only_while_running(phone):
    tap(phone, "Timer")
    phone.step(Action("type", text="ten", element=find(phone, "Minutes")))
    r = tap(phone, "Start")
    assert not r.ok and "minutes" in r.reason
    phone.step(Action("click", element=find(phone, "Clear Minutes")))
    phone.step(Action("type", text="10", element=find(phone, "Minutes")))
    tap(phone, "Start")
    assert clock(phone)["timer"] == {"minutes": 10, "running": True}
    tap(phone, "Stopwatch")
    assert not tap(phone, "Lap").ok
    tap(phone, "Start")
    tap(phone, "Lap")
    tap(phone, "Lap")
    assert clock(phone)["stopwatch"] == {"running": True, "laps": 2}


def test_add_world_clock_and_half_hour_offsets():
    phone = Phone(world_seed=1, size=(540, 1200))  # world 1 does not show Mumbai yet
    phone.step(Action("open_app", app="Clock"))
    assert "Mumbai" not in clock(phone)["clocks"]
    tap(phone, "World")
    tap(phone, "Add city")
    phone.step(Action("type", text="mum", element=find(phone, "Search cities")))
    press(phone, "pick_Mumbai")
    assert clock(phone)["clocks"].get("Mumbai") is True
    shown = phone.state["data"]["system"]["clock"]
    assert f"Mumbai\n{city_time(shown, 'Mumbai')} · 10.5 hr ahead" in [e["text"] for e in phone.observe().elements]
    assert city_time("9:37", "Mumbai") == "20:07" and city_time("9:37", "Honolulu") == "04:37"


@pytest.mark.parametrize("days, text", [([], "Once"), (["Mon", "Tue", "Wed", "Thu", "Fri"], "Weekdays"),
                                        (["Mon", "Sun"], "Mon, Sun")])
def test_repeat_text(days, text):
    assert repeat_text(days) == text
