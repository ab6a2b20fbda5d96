"""The served simulator cannot be frozen or bloated by one client (hardening, round two): every
command line runs with a budget and fails alone past it, regular expressions are time-limited and
size-checked, transfers and connections are capped, malformed requests are answered FAIL or with
a shell error instead of raising inside the server."""

import threading
import time

import adbutils
import pytest
from adbutils.errors import AdbError

from tests.support.adb_server import Raw, server_version_ms

BACKTRACKING = "echo " + "a" * 40 + "! | grep -E '(a|a)+b'"  # exponential for a backtracking matcher


def test_a_backtracking_grep_fails_alone_while_other_clients_are_answered(limited_server):
    server = limited_server(command_budget_s=2.0)
    client = adbutils.AdbClient(port=server.port)
    outcome = {}

    def hostile():
        outcome["result"] = client.device("phonesim-1").shell2(BACKTRACKING, v2=True, timeout=60)

    runner = threading.Thread(target=hostile, daemon=True)
    runner.start()
    time.sleep(0.2)
    latencies = []
    started = time.perf_counter()
    while runner.is_alive() and time.perf_counter() - started < 60:
        latencies.append(server_version_ms(server.port))
        other = client.device("phonesim-2").shell2("echo fine", v2=True, timeout=5)
        assert other.stdout == "fine\n"
        time.sleep(0.05)
    assert not runner.is_alive(), "the backtracking grep was not stopped"
    assert len(latencies) >= 5 and max(latencies) < 1000, latencies
    result = outcome["result"]
    # stopped at its budget: 2 s of the matcher's clock, which counts CPU time (more wall time on a busy machine)
    assert result.returncode == 124 and "command budget exceeded" in result.stderr


@pytest.mark.parametrize("line,status,stderr", [
    ("sleep nan", 1, "sleep: Not a number 'nan'\n"),
    ("sleep", 1, "sleep: Needs 1 argument\n"),
    ("grep -E '(' /sdcard/none", 2, "grep: bad regex '(': parentheses not balanced\n"),
    ("grep -E 'a{1000}'", 2, "grep: bad regex 'a{1000}': invalid repetition count(s)\n"),
    ("grep -E '((a{200}){200}){200}'", 2, "grep: bad regex '((a{200}){200}){200}': regular expression too big\n"),
    ("grep '['", 2, "grep: bad regex '[': brackets ([ ]) not balanced\n"),
    ("input tap nan 5", 1, None),
    ("input keyevent " + "9" * 5000, 1, None),
    ("echo $(reboot)", 1, None),
])
def test_malformed_commands_get_shell_errors(client, line, status, stderr):
    result = client.device("phonesim-1").shell2(line, v2=True, timeout=10)
    assert result.returncode == status, result.stderr
    assert result.stderr == stderr if stderr is not None else result.stderr
    assert client.device("phonesim-1").shell("echo alive") == "alive"


def test_a_command_past_its_budget_or_output_cap_fails_with_status_124(limited_server):
    server = limited_server(command_budget_s=0.5, max_output_bytes=1024 * 1024)
    device = adbutils.AdbClient(port=server.port).device("phonesim-1")
    started = time.perf_counter()
    slept = device.shell2("sleep 10; echo never", v2=True, timeout=10)
    assert slept.returncode == 124 and slept.stdout == "" and time.perf_counter() - started < 2
    raw = device.shell2("screencap", v2=True, timeout=10)  # 540x1200 RGBA: 2.6 MB
    assert raw.returncode == 124 and "output exceeds" in raw.stderr
    assert device.shell("echo next command is fine") == "next command is fine"
    assert server.pool.used == 0


def _sync_session(port: int) -> Raw:
    raw = Raw(port)
    raw.request("host:transport:phonesim-1")
    assert raw.status() == (b"OKAY", "")
    raw.request("sync:")
    assert raw.status() == (b"OKAY", "")
    return raw


def test_sync_refuses_lying_lengths_before_reading_them(server):
    raw = _sync_session(server.port)
    raw.sync(b"STAT", 0xFFFFFFFF)
    assert raw.sync_reply() == (b"FAIL", b"path too long")
    raw.close()
    raw = _sync_session(server.port)
    raw.sync(b"SEND", 22, b"/sdcard/huge.bin,33188")
    raw.sync(b"DATA", 0xFFFFFFFF)
    status, message = raw.sync_reply()
    assert status == b"FAIL" and b"chunk limit" in message
    raw.close()
    raw = _sync_session(server.port)
    raw.sync(b"NOPE", 1, b"/")
    assert raw.sync_reply() == (b"FAIL", b"unknown command 45504f4e")
    raw.close()
    assert server_version_ms(server.port) < 1000


def test_a_push_past_the_storage_fails_and_keeps_no_memory(limited_server):
    server = limited_server(storage_bytes=1024 * 1024)
    device = adbutils.AdbClient(port=server.port).device("phonesim-1")
    with pytest.raises(AdbError):
        device.sync.push(b"x" * (2 * 1024 * 1024), "/sdcard/big.bin")
    assert not device.sync.exists("/sdcard/big.bin")
    assert server.pool.used == 0 and server.device("phonesim-1").files.used_bytes == 0
    device.sync.push(b"small", "/sdcard/small.bin")
    full = device.shell2("cat /sdcard/small.bin > /sdcard/a; screencap -p /sdcard/b.png; screencap /sdcard/c.raw",
                         v2=True, timeout=10)
    assert full.returncode == 1 and "No space left on device" in full.stderr


def _served_connection(port: int) -> Raw:
    """A connection the server serves (a device transport answered OKAY), retried while connections closed just
    before are still being released."""
    deadline = time.monotonic() + 10
    while True:
        raw = Raw(port)
        raw.request("host:transport:phonesim-1")
        status = raw.status()
        if status == (b"OKAY", ""):
            return raw
        raw.close()
        assert time.monotonic() < deadline, status
        time.sleep(0.05)


def test_malformed_requests_and_too_many_connections_are_answered_fail(limited_server):
    server = limited_server(max_connections=2)
    raw = Raw(server.port)
    raw.sock.sendall(b"zzzzhost:version")
    assert raw.status() == (b"FAIL", "malformed request length 'zzzz': expected 4 hex digits")
    raw.close()
    raw = Raw(server.port)
    raw.request("host:transport:phonesim-1")
    assert raw.status() == (b"OKAY", "")
    raw.request("phonesim:state")
    assert raw.status() == (b"OKAY", "")
    raw.sock.sendall(b"\xff\xff\xff\xff")  # a control body of 4 GiB announced
    assert raw.read(4) == b"FAIL"
    raw.close()
    held = [_served_connection(server.port), _served_connection(server.port)]  # the two it serves at once
    refused = Raw(server.port)
    status, message = refused.status()
    assert status == b"FAIL" and "connections are open" in message
    for connection in held + [refused]:
        connection.close()
    time.sleep(0.2)
    assert server_version_ms(server.port) < 1000
