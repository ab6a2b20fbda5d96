"""The `sync:` service (AOSP adb's SYNC.TXT and file_sync_service): STAT, STA2, LST2, LIST,
LIS2, RECV, SEND, QUIT on the device's files (`phonesim.adb.files`), with adbd's quirks — LIST
includes `.` and `..`, a missing path stats as all zeros (v1) or an errno (v2), SEND creates
missing parent directories and stamps the mtime the client sends, failures are `FAIL` + message
and end the session.

Bounded as adbd is and further: a path over 1024 bytes, a DATA chunk over 64 KiB or an unknown
request is refused (`path too long`, …) before anything is read or allocated; a pushed file
counts against the device's storage and the server's in-flight memory as it arrives, and past
either the push fails with `No space left on device` while the rest is read and discarded.
"""

from __future__ import annotations

import errno
import socket
import stat
import struct

from phonesim.adb import wire
from phonesim.adb.device import SimDevice
from phonesim.adb.files import WIRE_ERRNO, FileError, Node

MAX_PATH = 1024  # adbd's SyncRequest.path_length limit
REQUESTS = (b"STAT", b"STA2", b"LST2", b"LIST", b"LIS2", b"RECV", b"SEND", b"QUIT")
_STAT_V2 = struct.Struct("<IQQIIIIQqqq")
_DENT_V2 = struct.Struct("<IQQIIIIQqqqI")
DEVICE_ID = 0xFD05


class _SessionOver(Exception):
    """The sync session ends (after a FAIL, as adbd ends it)."""


def _fail(sock: socket.socket, message: str) -> None:
    sock.sendall(wire.sync_fail(message))
    raise _SessionOver(message)


def _v2_fields(node: Node) -> tuple:
    return (DEVICE_ID, node.inode, node.mode, 2 if node.is_dir else 1, node.uid, node.gid, node.size,
            node.mtime, node.mtime, node.mtime)


def serve(sock: socket.socket, device: SimDevice) -> None:
    """One sync session: requests until QUIT, a FAIL or the client leaving."""
    try:
        while _request(sock, device):
            pass
    except _SessionOver:
        return


def _request(sock: socket.socket, device: SimDevice) -> bool:
    command, length = wire.sync_header(sock)
    if length > MAX_PATH:
        _fail(sock, "path too long")
    path = wire.read_exact(sock, length).decode("utf-8", errors="replace")
    if command == b"QUIT":
        return False
    if command not in REQUESTS:
        _fail(sock, f"unknown command {int.from_bytes(command, 'little'):08x}")
    files = device.files
    if command == b"STAT":
        node = files.stat(path, follow=False)
        fields = (node.mode, node.size & 0xFFFFFFFF, node.mtime) if node else (0, 0, 0)
        sock.sendall(b"STAT" + struct.pack("<III", *fields))
    elif command in (b"STA2", b"LST2"):
        try:
            _, node = files.require(path, follow=command == b"STA2")
            sock.sendall(command + _STAT_V2.pack(0, *_v2_fields(node)))
        except FileError as exc:
            sock.sendall(command + _STAT_V2.pack(WIRE_ERRNO[exc.code], *[0] * 10))
    elif command in (b"LIST", b"LIS2"):
        _list(sock, device, path, v2=command == b"LIS2")
    elif command == b"RECV":
        _send_file(sock, device, path)
    else:
        _receive_file(sock, device, path)
    return True


def _list(sock: socket.socket, device: SimDevice, path: str, v2: bool) -> None:
    files = device.files
    try:
        entries = files.list(path)
        node = files.stat(path)
        if node is None or not node.is_dir:
            entries = []
        else:
            parent = files.stat(f"{path.rstrip('/')}/..") or node
            entries = [(".", node), ("..", parent), *entries]
    except FileError:
        entries = []  # adbd: opendir failed, the listing is just DONE
    for name, entry in entries:
        raw = name.encode("utf-8")
        if v2:
            sock.sendall(b"DNT2" + _DENT_V2.pack(0, *_v2_fields(entry), len(raw)) + raw)
        else:
            fields = (entry.mode, entry.size & 0xFFFFFFFF, entry.mtime, len(raw))
            sock.sendall(b"DENT" + struct.pack("<IIII", *fields) + raw)
    sock.sendall(b"DONE" + bytes(_DENT_V2.size if v2 else 16))


def _send_file(sock: socket.socket, device: SimDevice, path: str) -> None:
    try:
        data = device.files.read(path)
    except FileError as exc:
        op = "read" if exc.code == errno.EISDIR else "open"
        _fail(sock, f"{op} failed: {exc.reason}")
    view = memoryview(data)
    for start in range(0, len(data), wire.SYNC_DATA_MAX):
        chunk = view[start:start + wire.SYNC_DATA_MAX]
        sock.sendall(b"DATA" + struct.pack("<I", len(chunk)) + chunk)
    sock.sendall(b"DONE" + struct.pack("<I", 0))


def _mode(text: str) -> int | None:
    try:
        return int(text, 0) if text else 0
    except ValueError:
        return int(text, 8) if text.isdigit() else None


def _receive_file(sock: socket.socket, device: SimDevice, spec: str) -> None:
    path, comma, mode_text = spec.rpartition(",")
    if not comma:
        _fail(sock, "missing , in ID_SEND_V1")
    mode = _mode(mode_text)
    if mode is None:
        _fail(sock, "bad mode")
    if stat.S_ISLNK(mode):
        _drain(sock)
        _fail(sock, "symlink failed: phonesim stores no symbolic links")
    permissions = mode & 0o777  # adbd copies user permission bits to group, then group to other
    permissions |= (permissions >> 3) & 0o070
    permissions |= (permissions >> 3) & 0o007
    files, pool = device.files, device.pool
    existing = files.stat(path)
    free = files.limits.storage_bytes - files.used_bytes + (existing.size if existing and not existing.is_dir else 0)
    chunks, received = [], 0
    try:
        while True:
            command, value = wire.sync_header(sock)
            if command == b"DONE":
                mtime = value
                break
            if command != b"DATA":
                _fail(sock, "invalid data message")
            if value > wire.SYNC_DATA_MAX:
                _fail(sock, f"invalid data message: {value} bytes is over the {wire.SYNC_DATA_MAX}-byte chunk limit")
            if received + value > free or not pool.reserve(value):
                wire.read_exact(sock, value)
                _drain(sock)
                _fail(sock, "write failed: No space left on device")
            chunks.append(wire.read_exact(sock, value))
            received += value
        try:
            files.write(path, b"".join(chunks), mode=permissions, mtime=mtime, make_parents=True, uid=2000)
        except FileError as exc:
            reason = "secure_mkdirs() failed" if exc.code in (errno.ENOENT, errno.ENOTDIR) else "couldn't create file"
            _fail(sock, f"{reason}: {exc.reason}")
    finally:
        pool.release(received)
    sock.sendall(b"OKAY" + struct.pack("<I", 0))


def _drain(sock: socket.socket) -> None:
    """Read and discard the rest of a push until its DONE, as adbd does after a failure (so the
    client, still sending, reads the FAIL instead of a reset connection)."""
    while True:
        command, value = wire.sync_header(sock)
        if command != b"DATA" or value > wire.SYNC_DATA_MAX:
            return
        wire.read_exact(sock, value)
