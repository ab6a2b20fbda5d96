"""`SimDevice`: one phonesim `Phone` served as an adb device, with the little file system that
`uiautomator dump` and `screencap <file>` write to and `sync:` pulls from."""

from __future__ import annotations

import socket
import threading
import time
from dataclasses import dataclass, field

from phonesim.phone import Phone

# directories that exist on every served device (a device has many more; these are the ones
# tools write to)
DIRECTORIES = frozenset({"/", "/sdcard", "/data", "/data/local", "/data/local/tmp", "/storage",
                         "/storage/emulated", "/storage/emulated/0"})


@dataclass
class ShellResult:
    """What a shell command line produced: stdout, stderr and the exit status."""

    stdout: bytes = b""
    stderr: bytes = b""
    code: int = 0

    @classmethod
    def error(cls, message: str, code: int = 1) -> ShellResult:
        return cls(b"", (message.rstrip("\n") + "\n").encode(), code)


@dataclass
class StoredFile:
    data: bytes
    mtime: int = field(default_factory=lambda: int(time.time()))
    mode: int = 0o100660  # regular file, rw-rw----


class SimDevice:
    """A served phone. `lock` serialises commands that touch the phone or its files; the
    sockets open on the device are tracked so that dropping it can close them."""

    def __init__(self, serial: str, transport_id: int, phone: Phone) -> None:
        self.serial = serial
        self.transport_id = transport_id
        self.phone = phone
        self.files: dict[str, StoredFile] = {}
        self.lock = threading.RLock()
        self.sockets: set[socket.socket] = set()
        self.dump_faults: list[str] = []  # messages the next `uiautomator dump`s fail with
        self.stale_dumps = 0  # how many next dumps write the previous dump again
        self.last_dump: str | None = None
        self.booted = True  # `getprop sys.boot_completed` says 1 (a device still booting says nothing)
        self.screen_on = True  # `dumpsys power`: awake, display on

    def write_file(self, path: str, data: bytes) -> None:
        with self.lock:
            self.files[normalize_path(path)] = StoredFile(data)

    def is_dir(self, path: str) -> bool:
        path = normalize_path(path)
        return path in DIRECTORIES or any(p.startswith(path.rstrip("/") + "/") for p in self.files)

    def listing(self, path: str) -> dict[str, StoredFile | None]:
        """Entries directly under directory `path`: name -> file (None for a directory)."""
        prefix = normalize_path(path).rstrip("/") + "/"
        out: dict[str, StoredFile | None] = {}
        for p in list(DIRECTORIES) + list(self.files):
            if p.startswith(prefix) and p != prefix:
                name, _, rest = p[len(prefix):].partition("/")
                out[name] = None if rest or p in DIRECTORIES else self.files[p]
        return out


def normalize_path(path: str) -> str:
    """`/sdcard//x.xml` -> `/sdcard/x.xml`; relative paths are taken from `/`, as adbd's cwd."""
    parts = [p for p in path.split("/") if p not in ("", ".")]
    return "/" + "/".join(parts)
