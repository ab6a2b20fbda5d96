"""adbutils, unchanged, against the served simulator."""

import io
import xml.etree.ElementTree as ET

import pytest
from adbutils.errors import AdbError
from PIL import Image

from phonesim.phone import Phone
from tests.support.adb_server import SIZE


def _texts(xml: str) -> set[str]:
    return {n.get("text") for n in ET.fromstring(xml.encode()).iter("node") if n.get("text")}


def _bounds(node: ET.Element) -> tuple[int, int, int, int]:
    a, b = node.get("bounds")[1:-1].split("][")
    return (*map(int, a.split(",")), *map(int, b.split(",")))


def test_lists_both_devices_with_transport_ids(client):
    assert [d.serial for d in client.device_list()] == ["phonesim-1", "phonesim-2"]
    assert [i.tags["transport_id"] for i in client.list(extended=True)] == ["1", "2"]
    assert client.server_version() == 41


def test_screenshot_and_window_size_are_the_configured_size(client):
    device = client.device("phonesim-1")
    assert device.screenshot().size == SIZE
    assert device.window_size() == SIZE


def test_dump_hierarchy_carries_the_screen_texts(client, server):
    device = client.device("phonesim-2")
    device.app_start("com.android.contacts")
    xml = device.dump_hierarchy()
    assert xml.startswith("<?xml")
    phone = server.device("phonesim-2").phone
    assert phone.current_app == "contacts"
    expected = {e["text"] for e in phone.observe().elements if e["text"]}
    assert expected and expected <= _texts(xml)
    assert device.app_current().package == "com.android.contacts"


def test_click_on_a_node_centre_changes_the_hierarchy(client, server):
    device = client.device("phonesim-1")
    before = device.dump_hierarchy()
    icon = next(n for n in ET.fromstring(before.encode()).iter("node") if n.get("content-desc") == "Contacts")
    x1, y1, x2, y2 = _bounds(icon)
    device.click((x1 + x2) // 2, (y1 + y2) // 2)
    after = device.dump_hierarchy()
    assert after != before
    assert server.device("phonesim-1").phone.current_app == "contacts"
    device.keyevent(4)  # BACK leaves the app's root screen for the launcher
    assert server.device("phonesim-1").phone.current_app == "launcher"


def test_app_clear_resets_that_app_only(client, server):
    phone = server.device("phonesim-1").phone
    fresh = Phone(phone.world_seed, phone.size)
    device = client.device("phonesim-1")
    device.app_start("com.android.contacts")
    phone.state["data"]["contacts"] = {"edited": True}
    phone.state["data"]["notes"] = {"edited": True}
    device.app_clear("com.android.contacts")
    assert phone.state["data"]["contacts"] == fresh.state["data"]["contacts"]
    assert phone.state["data"]["notes"] == {"edited": True}
    assert phone.current_app == "launcher" and "contacts" not in phone.state["os"]["tasks"]


def _centre(element: dict) -> tuple[int, int]:
    x1, y1, x2, y2 = element["bounds"]
    return (x1 + x2) // 2, (y1 + y2) // 2


def test_input_commands_map_to_phonesim_actions(client, server):
    device = client.device("phonesim-1")
    phone = server.device("phonesim-1").phone
    device.shell("am start -n com.android.contacts/.create", timeout=5)
    assert (phone.current_app, phone.current_screen) == ("contacts", "create")
    field = next(e for e in phone.observe().elements if e["class"].endswith("EditText"))
    device.click(*_centre(field))
    device.send_keys("Ada Lovelace")  # adbutils sends `input text 'Ada Lovelace'`; %s is adb's space
    device.shell("input text %sjr", timeout=5)
    assert "Ada Lovelace jr" in phone.top_page()["fields"].values()
    device.keyevent("KEYCODE_BACK")  # hides the keyboard
    device.keyevent(4)
    assert phone.current_screen == "list"
    person = next(e for e in phone.observe().elements if e["long_clickable"])
    before = phone.snapshot()
    device.swipe(*_centre(person), *_centre(person), 0.8)  # same point, 800 ms: a long press
    assert phone.current_screen == "list" and phone.snapshot() != before
    refused = device.shell2("am start -n com.android.contacts/.detail", v2=True, timeout=5)
    assert refused.returncode != 0 and "not exported" in refused.stderr


def test_shell_answers_like_a_device(client):
    device = client.device("phonesim-1")
    missing = device.shell2("frobnicate --now", v2=True, timeout=5)
    assert (missing.returncode, missing.stderr.strip()) == (127, "/system/bin/sh: frobnicate: inaccessible or not found")
    v1 = device.shell2("echo one; false", timeout=5)  # shell v1 with adbutils' `echo X4EXIT:$?`
    assert (v1.returncode, v1.output.strip()) == (1, "one")
    assert device.shell("getprop ro.product.model", timeout=5) == "phonesim"
    assert device.shell("wm size", timeout=5) == f"Physical size: {SIZE[0]}x{SIZE[1]}"
    assert "versionName=1.0." in device.shell("dumpsys package com.android.contacts", timeout=5)
    assert device.app_info("com.android.contacts").version_name.startswith("1.0.")
    typed = device.shell2("input text héllo", v2=True, timeout=5)
    assert typed.returncode == 255 and "NullPointerException" in typed.stderr


def test_sync_stat_list_pull_and_push(client):
    device = client.device("phonesim-1")
    assert "UI hierchary dumped to: /sdcard/window_dump.xml" in device.shell("uiautomator dump", timeout=10)
    assert "window_dump.xml" in [f.path for f in device.sync.list("/sdcard")]
    assert device.sync.stat("/sdcard/window_dump.xml").size > 100
    assert device.sync.read_text("/sdcard/window_dump.xml").startswith("<?xml")
    device.sync.push(b"payload", "/data/local/tmp/x.bin")
    assert device.sync.read_bytes("/data/local/tmp/x.bin") == b"payload"
    assert not device.sync.exists("/sdcard/nothing.xml")
    with pytest.raises(AdbError):
        device.sync.read_bytes("/sdcard/nothing.xml")


def test_dropped_device_leaves_the_list_and_refuses_connections(client, server):
    device = client.device("phonesim-2")
    stream = device.shell("sleep 5", stream=True)  # an open connection the drop must close
    server.drop("phonesim-2")
    assert stream.read(10) == b""
    assert [d.serial for d in client.device_list()] == ["phonesim-1"]
    with pytest.raises(AdbError, match="not found"):
        device.shell("echo hi", timeout=5)
    assert client.device("phonesim-1").shell("echo still here", timeout=5) == "still here"


def test_two_devices_keep_separate_state(client, server):
    client.device("phonesim-1").app_start("com.android.settings")
    assert server.device("phonesim-1").phone.current_app == "settings"
    assert server.device("phonesim-2").phone.current_app == "launcher"
