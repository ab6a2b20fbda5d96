"""A served simulator on a free localhost port, adbutils clients for it, the adb binary adbutils
ships, and a raw socket for what no client sends (malformed and hostile requests).

Shared by the server's tests (tests/phonesim/adb) and the client side's (tests/ops/environments,
tests/pipelines): their conftest.py (or module) imports the fixtures it uses from here."""

import os
import socket
import struct
import subprocess
import time

import adbutils
import pytest

from phonesim.adb import AdbServer, ServerLimits

SIZE = (540, 1200)  # half the default: the same layout, cheaper screenshots
ADB = adbutils.adb_path()
needs_adb_binary = pytest.mark.skipif(not os.access(ADB, os.X_OK), reason=f"no executable adb client at {ADB}")


@pytest.fixture
def server():
    with AdbServer(devices=2, size=SIZE) as served:
        yield served


@pytest.fixture
def client(server):
    return adbutils.AdbClient(host="127.0.0.1", port=server.port)


@pytest.fixture
def limited_server():
    """A server with small limits, to reach them quickly: `limited_server(**limits)`."""
    started = []

    def start(devices: int = 2, **limits) -> AdbServer:
        served = AdbServer(devices=devices, size=SIZE, limits=ServerLimits(**limits)).start()
        started.append(served)
        return served

    yield start
    for served in started:
        served.stop()


def adb(port: int, *args: str, timeout: float = 30, text: bool = True) -> subprocess.CompletedProcess:
    """The adb binary against the served simulator, as a user runs it (`adb -P PORT ...`)."""
    return subprocess.run([ADB, "-P", str(port), *args], capture_output=True, text=text, timeout=timeout,
                          stdin=subprocess.DEVNULL)


class Raw:
    """A bare adb-protocol connection: smart-socket requests, statuses and sync packets."""

    def __init__(self, port: int, timeout: float = 10.0) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)

    def request(self, text: str) -> None:
        data = text.encode()
        self.sock.sendall(b"%04x" % len(data) + data)

    def read(self, n: int) -> bytes:
        out = b""
        while len(out) < n:
            chunk = self.sock.recv(n - len(out))
            if not chunk:
                break
            out += chunk
        return out

    def status(self) -> tuple[bytes, str]:
        """OKAY/FAIL and, for FAIL, the message."""
        status = self.read(4)
        return status, (self.read(int(self.read(4), 16)).decode() if status == b"FAIL" else "")

    def block(self) -> str:
        return self.read(int(self.read(4), 16)).decode()

    def sync(self, command: bytes, length: int, payload: bytes = b"") -> None:
        self.sock.sendall(command + struct.pack("<I", length) + payload)

    def sync_reply(self) -> tuple[bytes, bytes]:
        """A sync status (FAIL with its message, or OKAY/DONE with its 4-byte argument)."""
        head = self.read(8)
        if head[:4] == b"FAIL":
            return b"FAIL", self.read(struct.unpack("<I", head[4:])[0])
        return head[:4], head[4:]

    def close(self) -> None:
        self.sock.close()


def server_version_ms(port: int) -> float:
    """Milliseconds for another client's `host:version` round trip."""
    started = time.perf_counter()
    assert adbutils.AdbClient(port=port).server_version() == 41
    return (time.perf_counter() - started) * 1000
