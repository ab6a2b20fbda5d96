"""The `phonesim:<verb>` device service: the served simulator's state, for judges. It is not an
adb service (a real adbd closes the stream), so only clients that know it use it.

After a transport is chosen (`host:tport:serial:<serial>`), the client requests
`phonesim:<verb>` and gets OKAY; it then sends a body (a little-endian u32 length and that many
bytes of JSON; length 0 for none) and reads the reply: `OKAY` or `FAIL`, a u32 length and that
many bytes of JSON.

- `state` → `{"world_seed", "size", "state"}`, `state` being `Phone.snapshot()`.
- `restore` `{"world_seed", "state"}` → `"ok"`: the phone takes that runtime state (on a fresh
  phone of that world when the world differs).
- `record` `<canonical action>` → `"ok"`: applies an `answer` or `terminate` action. What the
  agent answers is no device input, but the judge reads both from the phone's state.
"""

from __future__ import annotations

import json
import socket
import struct
from typing import Any

from phonesim.adb.device import SimDevice
from phonesim.adb.wire import read_exact
from phonesim.phone import Phone

VERBS = ("state", "restore", "record")
RECORDED_TYPES = ("answer", "terminate")


class ControlError(RuntimeError):
    """The server refused a `phonesim:` request (the message says why)."""


def _send(sock: socket.socket, status: bytes, payload: Any) -> None:
    data = json.dumps(payload, separators=(",", ":")).encode("utf-8")
    sock.sendall(status + struct.pack("<I", len(data)) + data)


def _answer(device: SimDevice, verb: str, body: Any) -> Any:
    phone = device.phone
    if verb == "state":
        return {"world_seed": phone.world_seed, "size": list(phone.size), "state": phone.snapshot()}
    if verb == "restore":
        if not isinstance(body, dict) or not isinstance(body.get("state"), dict):
            raise ControlError("restore needs {'world_seed': int, 'state': {...}}")
        seed = int(body.get("world_seed", phone.world_seed))
        if seed != phone.world_seed:
            device.phone = phone = Phone(seed, phone.size)
        phone.restore(body["state"])
        device.last_dump = None
        return "ok"
    if not isinstance(body, dict) or body.get("type") not in RECORDED_TYPES:
        raise ControlError(f"record takes an action of type {RECORDED_TYPES}, got {body!r}")
    result = phone.step(body)
    if not result.ok:
        raise ControlError(f"record: {result.reason}")
    return "ok"


def serve(sock: socket.socket, device: SimDevice, verb: str) -> None:
    """Answer one `phonesim:<verb>` request (the service OKAY has been sent)."""
    size = struct.unpack("<I", read_exact(sock, 4))[0]
    if size > device.limits.max_control_bytes:
        _send(sock, b"FAIL", f"a {size}-byte body exceeds the {device.limits.max_control_bytes}-byte limit")
        return
    raw = read_exact(sock, size) if size else b""
    if verb not in VERBS:
        _send(sock, b"FAIL", f"unknown phonesim verb {verb!r}; known: {VERBS}")
        return
    try:
        body = json.loads(raw) if raw else None
        with device.lock:
            _send(sock, b"OKAY", _answer(device, verb, body))
    except (ControlError, ValueError, KeyError, TypeError, AttributeError, IndexError) as exc:
        _send(sock, b"FAIL", str(exc) if isinstance(exc, ControlError) else f"{type(exc).__name__}: {str(exc)[:500]}")


def exchange(sock: socket.socket, body: Any = None) -> Any:
    """Client side, after `phonesim:<verb>` was acknowledged: send the body, return the reply.
    Raises `ControlError` when the server refuses, `ConnectionError` when it goes away."""
    data = b"" if body is None else json.dumps(body, separators=(",", ":")).encode("utf-8")
    sock.sendall(struct.pack("<I", len(data)) + data)
    status = read_exact(sock, 4)
    size = struct.unpack("<I", read_exact(sock, 4))[0]
    payload = json.loads(read_exact(sock, size))
    if status != b"OKAY":
        raise ControlError(str(payload))
    return payload
