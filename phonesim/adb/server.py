"""`AdbServer`: phonesim phones served as adb devices `phonesim-1..N` on 127.0.0.1:PORT, speaking
the adb *server* (host) protocol, so adbutils and the real `adb` client talk to it unchanged.

Host services are in `phonesim.adb.host`. After a transport is chosen, the device services:
`shell:<cmd>`, `shell,v2[,raw|,pty|,TERM=…]:<cmd>` (shell protocol: stdout/stderr/exit packets),
`exec:<cmd>` (`phonesim.adb.shell`), `sync:` (`phonesim.adb.sync`) and the non-standard
`phonesim:<verb>` (`phonesim.adb.control`), through which judges read the simulator's state.
Other device services (`framebuffer:`, `reverse:`, `tcp:`, `localabstract:`, `jdwp:`, `root:`, …)
are refused as adbd refuses a service it does not offer: FAIL `closed`.

Hardened against the clients it faces (`phonesim.adb.limits.ServerLimits`): at most
`max_connections` at once, an idle timeout on every read, a time budget per command line, caps on
output, storage and in-flight bytes, and a malformed request answered FAIL with a message.
"""

from __future__ import annotations

import logging
import socket
import socketserver
import threading
import time

from phonesim.adb import control, host, sync, wire
from phonesim.adb.device import SimDevice
from phonesim.adb.host import DeviceNotFound
from phonesim.adb.limits import MemoryPool, ServerLimits
from phonesim.adb.shell import executables, run_line
from phonesim.phone import DEFAULT_SIZE, Phone

log = logging.getLogger(__name__)

ADB_SERVER_VERSION = 41  # adb 1.0.41, the client adbutils ships: it neither kills nor replaces us
DRAIN_TIMEOUT_S = 2.0
POLL_INTERVAL_S = 0.05  # how soon stop() takes effect

__all__ = ["ADB_SERVER_VERSION", "AdbServer", "DeviceNotFound"]


class AdbServer:
    """Serve `devices` phonesim phones over the adb server protocol.

    Use `start()` for a background thread (tests, in-process), `serve_forever()` for the CLI;
    `port=0` picks a free port (read `.port` after `start()`). `add_device()` plugs a phone in,
    `drop(serial)` pulls one out (both reach `host:track-devices` clients).
    """

    def __init__(self, devices: int = 2, size: tuple[int, int] = DEFAULT_SIZE, world_seed: int = 0,
                 host: str = "127.0.0.1", port: int = 0, allow_kill: bool = False,
                 limits: ServerLimits | None = None) -> None:
        if devices < 0:
            raise ValueError(f"devices must be at least 0, got {devices}")
        self.size = size
        self.world_seed = world_seed
        self.allow_kill = allow_kill
        self.limits = limits or ServerLimits()
        self.pool = MemoryPool(self.limits.max_inflight_bytes)
        self.stopping = False
        self._devices: dict[str, SimDevice] = {}
        self._lock = threading.Lock()
        self._next_transport_id = 1
        self._connections = threading.BoundedSemaphore(self.limits.max_connections)
        self._executables = executables()
        for _ in range(devices):
            self.add_device()
        self._tcp = _TCPServer((host, port), _Handler)
        self._tcp.adb = self
        self._thread: threading.Thread | None = None

    @property
    def version(self) -> int:
        return ADB_SERVER_VERSION

    # --- lifecycle ---------------------------------------------------------------------------
    @property
    def port(self) -> int:
        return self._tcp.server_address[1]

    def start(self) -> AdbServer:
        self._thread = threading.Thread(target=self._tcp.serve_forever, args=(POLL_INTERVAL_S,),
                                        name=f"adb-server:{self.port}", daemon=True)
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        self._tcp.serve_forever(POLL_INTERVAL_S)

    def stop(self) -> None:
        self.stopping = True
        self._tcp.shutdown()
        self._tcp.server_close()
        for device in self.devices():
            device.gone.set()
            self._close_sockets(device)

    def stop_soon(self) -> None:
        """Stop from a connection's thread (`host:kill`), after its reply has gone out."""
        threading.Thread(target=self.stop, daemon=True).start()

    def __enter__(self) -> AdbServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # --- devices -----------------------------------------------------------------------------
    def serials(self) -> list[str]:
        with self._lock:
            return list(self._devices)

    def devices(self) -> list[SimDevice]:
        with self._lock:
            return list(self._devices.values())

    def device(self, serial: str) -> SimDevice:
        with self._lock:
            found = self._devices.get(serial)
        if found is None:
            raise DeviceNotFound(f"device '{serial}' not found")
        return found

    def add_device(self) -> SimDevice:
        """Plug in another phone: `phonesim-<transport id>`, a fresh phone of the server's world."""
        with self._lock:
            transport_id, self._next_transport_id = self._next_transport_id, self._next_transport_id + 1
            device = SimDevice(f"phonesim-{transport_id}", transport_id, Phone(self.world_seed, self.size),
                               self.limits, self._executables, self.pool)
            self._devices[device.serial] = device
        return device

    def drop(self, serial: str) -> None:
        """Pull a device: it leaves `host:devices` and its open connections are closed."""
        with self._lock:
            device = self._devices.pop(serial, None)
        if device is None:
            raise DeviceNotFound(f"device '{serial}' not found")
        device.gone.set()
        self._close_sockets(device)

    @staticmethod
    def _close_sockets(device: SimDevice) -> None:
        for sock in list(device.sockets):
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    # --- connections -------------------------------------------------------------------------
    def handle(self, sock: socket.socket) -> None:
        """Serve one client connection until it is done."""
        if not self._connections.acquire(blocking=False):
            _send_quietly(sock, wire.fail(f"phonesim adb server: {self.limits.max_connections} connections are "
                                          "open, the most it serves at once; try again"))
            return
        try:
            # replies go out as several writes (a sync DATA chunk, then DONE): with Nagle on, the last small
            # one waits for the client's delayed ACK, ~40 ms per pull on Linux loopback
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            sock.settimeout(self.limits.idle_timeout_s)
            self._serve(sock)
        except (wire.PeerClosed, OSError) as exc:
            log.debug("adb connection ended: %s", exc)
        except Exception:  # a bug must cost one connection, never the server
            log.exception("adb connection failed")
        finally:
            for device in self.devices():
                device.sockets.discard(sock)
            self._connections.release()

    def _serve(self, sock: socket.socket) -> None:
        """Host requests until one switches to a device (`host:transport…`), then that
        device's request; after a switch, `host:` requests (adb's `forward`) mean that device."""
        device: SimDevice | None = None
        while True:
            try:
                request = wire.read_request(sock)
            except wire.MalformedRequest as exc:
                sock.sendall(wire.fail(str(exc)))
                return
            parsed = host.parse_request(request)
            if parsed is None and device is None:  # a device service with no transport: the only device
                try:
                    device = host.Selector().pick(self.devices())
                except DeviceNotFound as exc:
                    sock.sendall(wire.fail(str(exc)))
                    return
                device.sockets.add(sock)
            if parsed is None:
                log.debug("%s request %r", device.serial, request[:200])
                self._device_request(sock, device, request)
                return
            selector, service = parsed
            if device is not None and request.startswith("host:"):
                selector = host.Selector(transport_id=device.transport_id)
            try:
                switched = host.serve(self, sock, selector, service)
            except DeviceNotFound as exc:
                sock.sendall(wire.fail(str(exc)))
                return
            if switched is None or switched.gone.is_set():
                return
            device = switched
            device.sockets.add(sock)

    def _device_request(self, sock: socket.socket, device: SimDevice, request: str) -> None:
        name, _, argument = request.partition(":")
        service = name.split(",")[0]
        if service in ("shell", "exec"):
            if not argument.strip():
                sock.sendall(wire.fail("phonesim serves no interactive shell: pass a command"))
                return
            sock.sendall(wire.OKAY)  # before running, as adbd: a streaming client has its connection at once
            out = run_line(device, argument)
            try:
                if "v2" in name.split(",")[1:]:
                    sock.sendall(wire.shell_v2_reply(out.chunks, out.code))
                else:
                    sock.sendall(out.output)  # no shell protocol: stdout and stderr share the stream
            finally:
                out.release()
        elif service == "sync":
            sock.sendall(wire.OKAY)
            sync.serve(sock, device)
        elif service == "phonesim":
            sock.sendall(wire.OKAY)
            control.serve(sock, device, argument)
        else:
            log.info("%s: refused device service %r (not served)", device.serial, request[:80])
            sock.sendall(wire.fail("closed"))  # what adbd's refusal of a service looks like to a client
            return
        _close_gracefully(sock)


def _send_quietly(sock: socket.socket, data: bytes) -> None:
    try:
        sock.sendall(data)
    except OSError:
        pass


def _close_gracefully(sock: socket.socket) -> None:
    """Half-close, then wait for the client to close: closing with unread client bytes (a
    shell-v2 close-stdin packet, say) would reset the connection and lose our reply."""
    deadline = time.monotonic() + DRAIN_TIMEOUT_S
    try:
        sock.shutdown(socket.SHUT_WR)
        while (left := deadline - time.monotonic()) > 0:
            sock.settimeout(left)
            if not sock.recv(65536):
                break
    except OSError:
        pass


class _TCPServer(socketserver.ThreadingTCPServer):
    allow_reuse_address = True
    daemon_threads = True
    request_queue_size = 128
    adb: AdbServer


class _Handler(socketserver.BaseRequestHandler):
    def handle(self) -> None:
        self.server.adb.handle(self.request)
