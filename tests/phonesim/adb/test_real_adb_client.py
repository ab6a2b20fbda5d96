"""The adb client binary adbutils ships, against the served simulator: it must work, and it
must neither kill nor replace the server."""

import phonesim.adb.server as adb_server
from tests.support.adb_server import adb as _adb
from tests.support.adb_server import needs_adb_binary

pytestmark = needs_adb_binary


def test_devices_lists_the_served_phones(server):
    result = _adb(server.port, "devices")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[1:3] == ["phonesim-1\tdevice", "phonesim-2\tdevice"]


def test_shell_keyevent_reaches_the_phone(server, client):
    phone = server.device("phonesim-1").phone
    phone.launch("contacts")
    result = _adb(server.port, "-s", "phonesim-1", "shell", "input", "keyevent", "4")
    assert result.returncode == 0, result.stderr
    assert phone.current_app == "launcher"  # the binary talked to this server, not one of its own
    status = _adb(server.port, "-s", "phonesim-1", "shell", "frobnicate")
    assert status.returncode == 127 and "frobnicate: inaccessible or not found" in status.stderr  # shell v2 exit status
    assert client.server_version() == 41


def test_pull_over_sync(server, tmp_path):
    assert _adb(server.port, "-s", "phonesim-2", "shell", "uiautomator", "dump").returncode == 0
    target = tmp_path / "dump.xml"
    result = _adb(server.port, "-s", "phonesim-2", "pull", "/sdcard/window_dump.xml", str(target))
    assert result.returncode == 0, result.stderr
    assert target.read_text().startswith("<?xml")


def test_kill_server_is_refused_and_the_server_stays(server, client):
    result = _adb(server.port, "kill-server")
    assert result.returncode != 0 and "kill-server rejected by remote server" in result.stderr
    assert [d.serial for d in client.device_list()] == ["phonesim-1", "phonesim-2"]


def test_a_version_mismatch_cannot_replace_the_server(server, client, monkeypatch):
    """A client of another version kills the server and starts its own: host:kill is refused
    and its server cannot bind the port we hold, so ours keeps serving."""
    monkeypatch.setattr(adb_server, "ADB_SERVER_VERSION", 40)
    result = _adb(server.port, "devices")
    assert result.returncode != 0 and "doesn't match" in result.stderr
    monkeypatch.setattr(adb_server, "ADB_SERVER_VERSION", 41)
    assert [d.serial for d in client.device_list()] == ["phonesim-1", "phonesim-2"]
    assert client.device("phonesim-1").shell("echo ours", timeout=5) == "ours"
