"""What a simulator has no reason to fake stays refused, with the error a device (or server)
without that feature gives, so client code takes its usual fallback or error path."""

import pytest
from adbutils.errors import AdbError

from tests.support.adb_server import adb, needs_adb_binary


def test_screen_recording_framebuffer_and_logcat_are_absent(client):
    device = client.device("phonesim-1")
    for command in ("screenrecord /sdcard/video.mp4", "logcat -d", "ifconfig wlan0", "ip addr show dev wlan0"):
        result = device.shell2(command, v2=True, timeout=5)
        name = command.split()[0]
        assert (result.returncode, result.stderr) == (127, f"/system/bin/sh: {name}: inaccessible or not found\n")
    with pytest.raises(AdbError, match="closed"):
        device.framebuffer()  # the framebuffer: device service, refused as adbd refuses it


def test_brightness_and_wifi_address_fail_as_on_a_device_without_them(client):
    device = client.device("phonesim-1")
    assert device.shell("settings get system screen_brightness") == "null"  # no backlight setting
    with pytest.raises(ValueError):
        device.brightness_value  # noqa: B018 — adbutils parses int("null")
    with pytest.raises(AdbError, match="fail to parse wlan ip"):
        device.wlan_ip()


def test_port_forwarding_is_refused_with_the_servers_errors(client):
    device = client.device("phonesim-2")
    with pytest.raises(AdbError, match="cannot bind listener"):
        device.forward("tcp:12345", "tcp:80")
    assert device.forward_list() == [] and client.forward_list() == []
    with pytest.raises(AdbError, match="listener 'tcp:12345' not found"):
        device.forward_remove("tcp:12345")
    with pytest.raises(AdbError, match="closed"):
        device.reverse("tcp:12345", "tcp:80")
    assert device.shell("echo still served") == "still served"


@needs_adb_binary
def test_the_adb_binary_sees_the_same_refusals(server, tmp_path):
    forward = adb(server.port, "-s", "phonesim-1", "forward", "tcp:12345", "tcp:80")
    assert forward.returncode != 0 and "cannot bind listener" in forward.stderr
    logcat = adb(server.port, "-s", "phonesim-1", "logcat", "-d")
    assert logcat.returncode == 127 and "logcat: inaccessible or not found" in logcat.stderr
    apk = tmp_path / "app.apk"
    apk.write_bytes(b"PK\x03\x04 not really an apk")
    install = adb(server.port, "-s", "phonesim-1", "install", str(apk))
    assert install.returncode != 0 and "INSTALL_FAILED_USER_RESTRICTED" in install.stdout + install.stderr
