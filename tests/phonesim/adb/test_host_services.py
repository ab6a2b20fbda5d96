"""Host services a client relies on, answered as the real adb server does: wait-for-<transport>-
<state>, track-devices(-l) with updates when phones are plugged in or pulled, and the served
phones as USB devices (`-d` reaches them, `-e` finds no emulator)."""

import threading
import time

import adbutils
import pytest
from adbutils.errors import AdbError, AdbTimeout

from tests.support.adb_server import Raw, adb, needs_adb_binary


def test_wait_for_device_returns_once_a_phone_is_plugged_in(limited_server):
    server = limited_server(devices=0)
    client = adbutils.AdbClient(port=server.port)
    outcome: list = []
    waiter = threading.Thread(target=lambda: outcome.append(client.wait_for(transport="usb", timeout=10)))
    waiter.start()
    time.sleep(0.3)
    assert waiter.is_alive() and not outcome  # nothing to wait for yet
    server.add_device()
    waiter.join(5)
    assert outcome == [None]  # OKAY, OKAY: the device is there
    assert [d.serial for d in client.device_list()] == ["phonesim-1"]


def test_wait_for_answers_as_the_server_does(client, server):
    with pytest.raises(AdbError, match="more than one device/emulator"):
        client.wait_for(timeout=5)  # two phones and no serial: ambiguous
    client.wait_for(serial="phonesim-2", timeout=5)
    client.wait_for(serial="phonesim-2", state="any", timeout=5)
    with pytest.raises(AdbTimeout):
        client.wait_for(serial="phonesim-2", transport="any", state="recovery", timeout=0.5)
    with pytest.raises(AdbError, match="bad wait-for- state"):
        client.wait_for(serial="phonesim-2", state="sleeping", timeout=5)
    dropper = threading.Timer(0.3, server.drop, ["phonesim-2"])
    dropper.start()
    client.wait_for(serial="phonesim-2", state="disconnect", timeout=5)
    dropper.join()


@needs_adb_binary
def test_the_adb_binary_waits_and_selects_usb_devices(limited_server):
    server = limited_server(devices=1)
    assert adb(server.port, "wait-for-device").returncode == 0
    assert adb(server.port, "wait-for-usb-device", "shell", "echo", "ready").stdout == "ready\n"
    assert adb(server.port, "-d", "shell", "echo", "usb").stdout == "usb\n"
    emulator = adb(server.port, "-e", "shell", "echo", "emulator")
    assert emulator.returncode != 0 and "no emulators found" in emulator.stderr
    assert adb(server.port, "get-devpath").stdout == "usb:1-1\n"
    listing = adb(server.port, "devices", "-l").stdout.splitlines()[1]
    assert listing.split() == ["phonesim-1", "device", "usb:1-1", "product:phonesim", "model:phonesim",
                               "device:phonesim", "transport_id:1"]


def test_track_devices_reports_phones_plugged_in_and_pulled(client, server):
    events = []
    stream = client.track_devices()

    def follow():
        for event in stream:
            events.append((event.present, event.serial, event.status))
            if len(events) == 4:
                return

    follower = threading.Thread(target=follow, daemon=True)
    follower.start()
    time.sleep(0.3)
    server.add_device()
    time.sleep(0.3)
    server.drop("phonesim-1")
    follower.join(5)
    assert sorted(events[:2]) == [(True, "phonesim-1", "device"), (True, "phonesim-2", "device")]
    assert events[2:] == [(True, "phonesim-3", "device"), (False, "phonesim-1", "absent")]


def test_track_devices_l_sends_length_prefixed_long_lists(server):
    raw = Raw(server.port)
    raw.request("host:track-devices-l")
    assert raw.status() == (b"OKAY", "")
    first = raw.block().splitlines()
    assert [line.split()[0] for line in first] == ["phonesim-1", "phonesim-2"]
    assert first[0].endswith("usb:1-1 product:phonesim model:phonesim device:phonesim transport_id:1")
    server.drop("phonesim-2")
    assert [line.split()[0] for line in raw.block().splitlines()] == ["phonesim-1"]
    raw.close()


def test_device_queries_by_serial_and_transport_id(client):
    device = client.device("phonesim-2")
    assert (device.get_state(), device.get_serialno(), device.get_devpath()) == ("device", "phonesim-2", "usb:1-2")
    assert "shell_v2" in device.get_features().split(",")
    by_id = adbutils.AdbDevice(client, transport_id=1)
    assert by_id.shell("getprop ro.serialno") == "phonesim-1"
    with pytest.raises(AdbError, match="device 'phonesim-9' not found"):
        client.device("phonesim-9").get_state()


def test_a_device_service_without_a_transport_goes_to_the_only_device(server):
    raw = Raw(server.port)
    raw.request("shell:echo direct")
    assert raw.status() == (b"FAIL", "more than one device/emulator")
    raw.close()
    server.drop("phonesim-2")
    raw = Raw(server.port)
    raw.request("shell:echo direct")
    assert raw.status() == (b"OKAY", "") and raw.read(7) == b"direct\n"
    raw.close()
