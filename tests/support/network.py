"""Guard that fails a test if anything tries to reach a host other than the loopback."""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterator
from contextlib import contextmanager

LOCAL_NAMES = {"localhost", "127.0.0.1", "::1"}


class ExternalNetworkAccess(AssertionError):
    pass


def _is_local(host: object) -> bool:
    if isinstance(host, bytes):
        host = host.decode()
    if not isinstance(host, str):
        return False
    if host in LOCAL_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@contextmanager
def loopback_only() -> Iterator[list[str]]:
    """Within the block, DNS lookups and connections to non-loopback hosts raise
    `ExternalNetworkAccess`; the attempted hosts are also collected in the yielded list."""
    attempts: list[str] = []
    original_connect = socket.socket.connect
    original_connect_ex = socket.socket.connect_ex
    original_getaddrinfo = socket.getaddrinfo

    def check(host: object) -> None:
        if not _is_local(host):
            attempts.append(str(host))
            raise ExternalNetworkAccess(f"test tried to reach {host!r}")

    def connect(self: socket.socket, address: object) -> object:
        if self.family in (socket.AF_INET, socket.AF_INET6):
            check(address[0])  # type: ignore[index]
        return original_connect(self, address)

    def connect_ex(self: socket.socket, address: object) -> object:
        if self.family in (socket.AF_INET, socket.AF_INET6):
            check(address[0])  # type: ignore[index]
        return original_connect_ex(self, address)

    def getaddrinfo(host: object, *args: object, **kwargs: object) -> object:
        if host is not None:
            check(host)
        return original_getaddrinfo(host, *args, **kwargs)

    socket.socket.connect = connect  # type: ignore[method-assign]
    socket.socket.connect_ex = connect_ex  # type: ignore[method-assign]
    socket.getaddrinfo = getaddrinfo  # type: ignore[assignment]
    try:
        yield attempts
    finally:
        socket.socket.connect = original_connect  # type: ignore[method-assign]
        socket.socket.connect_ex = original_connect_ex  # type: ignore[method-assign]
        socket.getaddrinfo = original_getaddrinfo  # type: ignore[assignment]
