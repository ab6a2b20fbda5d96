"""The adb wire format: 4-hex-digit length-prefixed requests, OKAY/FAIL replies, shell-v2
packets and sync-protocol packets (as specified by AOSP's adb SERVICES.TXT, protocol.txt and
SYNC.TXT)."""

from __future__ import annotations

import socket
import struct

OKAY = b"OKAY"
FAIL = b"FAIL"

# shell,v2 packet ids (AOSP adb/shell_protocol.h)
SHELL_STDIN, SHELL_STDOUT, SHELL_STDERR, SHELL_EXIT, SHELL_CLOSE_STDIN, SHELL_WINDOW_SIZE = range(6)
SYNC_DATA_MAX = 64 * 1024  # largest DATA chunk a sync peer accepts


class PeerClosed(ConnectionError):
    """The client closed the connection (or it was closed under us by a device drop)."""


class MalformedRequest(ValueError):
    """A request whose length prefix is not 4 hex digits (answered FAIL with this message)."""


def read_exact(sock: socket.socket, n: int) -> bytes:
    """Exactly `n` bytes from `sock`, or `PeerClosed`. Callers bound `n`; reads go in 64 KiB
    pieces, so a length the peer lies about costs nothing until its bytes arrive."""
    chunks, left = [], n
    while left:
        chunk = sock.recv(min(left, SYNC_DATA_MAX))
        if not chunk:
            raise PeerClosed(f"connection closed with {left} of {n} bytes unread")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def read_request(sock: socket.socket) -> str:
    """One smart-socket request: 4 hex digits of length, then that many bytes of UTF-8."""
    header = read_exact(sock, 4)
    if not all(c in b"0123456789abcdefABCDEF" for c in header):
        raise MalformedRequest(f"malformed request length {header.decode('ascii', 'replace')!r}: "
                               "expected 4 hex digits")
    return read_exact(sock, int(header, 16)).decode("utf-8", errors="replace")


def block(payload: bytes | str) -> bytes:
    """A length-prefixed block (4 hex digits + payload)."""
    data = payload.encode("utf-8") if isinstance(payload, str) else payload
    return b"%04x" % len(data) + data


def okay(payload: bytes | str | None = None) -> bytes:
    """OKAY, followed by a length-prefixed payload when one is given."""
    return OKAY if payload is None else OKAY + block(payload)


def fail(message: str) -> bytes:
    return FAIL + block(message)


def shell_packet(kind: int, data: bytes) -> bytes:
    """One shell-protocol packet: id byte, little-endian u32 length, data."""
    return struct.pack("<BI", kind, len(data)) + data


def shell_v2_reply(chunks: list[tuple[int, bytes]], exit_code: int) -> bytes:
    """A whole shell-v2 exchange: the (fd 1/2, data) output in the order written, as stdout and
    stderr packets, then the exit packet."""
    kinds = {1: SHELL_STDOUT, 2: SHELL_STDERR}
    out = b"".join(shell_packet(kinds[fd], data[i:i + SYNC_DATA_MAX])
                   for fd, data in chunks for i in range(0, len(data), SYNC_DATA_MAX))
    return out + shell_packet(SHELL_EXIT, bytes([exit_code & 0xFF]))


def sync_header(sock: socket.socket) -> tuple[bytes, int]:
    """A sync request header: 4-byte id and little-endian u32 argument."""
    head = read_exact(sock, 8)
    return head[:4], struct.unpack("<I", head[4:])[0]


def sync_fail(message: str) -> bytes:
    data = message.encode("utf-8")
    return b"FAIL" + struct.pack("<I", len(data)) + data
