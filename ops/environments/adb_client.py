"""adbutils' client with every wait bounded: connections that time out instead of hanging (adbutils waits
600 s unless told otherwise), and the serials an adb server lists."""

from __future__ import annotations

import adbutils
from adbutils.errors import AdbError, AdbTimeout

from ops.environments.infrastructure import DeviceLost


class _DirectConnection(adbutils.AdbConnection):
    """A connection that fails when no server listens, where adbutils would run `adb start-server`
    (which would start a real adb server on the simulator's port)."""

    def _safe_connect(self):
        return self._create_socket()


class BoundedClient(adbutils.AdbClient):
    """adbutils' client with every socket timeout capped (its transports default to 600 s), asking
    the server's version once instead of before every transport (a connection each time)."""

    def __init__(self, host: str, port: int, timeout_cap: float) -> None:
        super().__init__(host=host, port=port)
        self.timeout_cap = timeout_cap
        self._version: int | None = None

    def server_version(self) -> int:
        if self._version is None:
            self._version = super().server_version()
        return self._version

    def make_connection(self, timeout: float | None = None) -> adbutils.AdbConnection:
        try:
            connection = _DirectConnection(self.host, self.port)
        except TimeoutError:
            raise AdbTimeout("connect to adb server timeout") from None
        connection.conn.settimeout(min(timeout or self.timeout_cap, self.timeout_cap))
        return connection


def connected_serials(host: str = "127.0.0.1", port: int = 5037, timeout_s: float = 10.0) -> list[str]:
    """Serials of the devices the adb server lists as ready (state `device`)."""
    client = BoundedClient(host, port, timeout_s)
    try:
        return [info.serial for info in client.list() if info.state == "device"]
    except (AdbError, OSError) as exc:
        raise DeviceLost("*", f"adb server {host}:{port} unreachable ({exc})") from exc
