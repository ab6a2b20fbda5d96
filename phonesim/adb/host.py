"""Host services of the served adb server, answered as AOSP adb's server answers them
(SERVICES.TXT; adb.cpp `handle_host_request`, services.cpp, transport.cpp):

`version`, `devices[-l]`, `track-devices[-l]` (the list again on every change, until the client
closes), `wait-for-<usb|local|any>-<device|recovery|…|any|disconnect>` (OKAY when the connection
opens, OKAY again once the state is reached; FAIL when the target is ambiguous), `features`,
`host-features`, `get-state`, `get-serialno`, `get-devpath`, `get-product`, `kill` (rejected
unless allowed), `transport…`/`tport:…` (switches the connection to a device), `list-forward`,
`killforward-all`, `connect:`/`disconnect:`. Served devices are USB-attached phones (`usb:1-N`):
`-d`/`transport-usb` reach them, `-e`/`transport-local` finds no emulator.

Refused, with the server's own error: `forward:` (`cannot bind listener: …`: the simulator has no
device sockets to forward to), `killforward:` (`listener '…' not found`), connecting to network
devices. Anything else: `unknown host service`.
"""

from __future__ import annotations

import select
import socket
import struct
from typing import TYPE_CHECKING, Protocol

from phonesim.adb import wire

if TYPE_CHECKING:
    from phonesim.adb.device import SimDevice

FEATURES = "shell_v2,cmd,stat_v2,ls_v2,fixed_push_mkdir"  # what the served devices implement
HOST_FEATURES = "shell_v2,cmd,stat_v2,ls_v2,fixed_push_mkdir,push_sync"
WAIT_TRANSPORTS = ("usb", "local", "any")
WAIT_STATES = ("device", "recovery", "rescue", "sideload", "bootloader", "any", "disconnect")
POLL_S = 0.1  # how often a waiting service looks at the devices and its client (adb polls as often)


class DeviceNotFound(LookupError):
    pass


class AdbServer(Protocol):
    """What the host services read of the server (`phonesim.adb.server.AdbServer` is one)."""

    version: int
    allow_kill: bool
    stopping: bool

    def devices(self) -> list[SimDevice]: ...

    def stop_soon(self) -> None: ...


class Selector:
    """Which device a request means: a serial, a transport id, or the only one of a transport type."""

    def __init__(self, serial: str | None = None, transport_id: int | None = None, kind: str = "any") -> None:
        self.serial, self.transport_id, self.kind = serial, transport_id, kind

    def pick(self, devices: list[SimDevice]) -> SimDevice:
        """The one device meant, or DeviceNotFound with adb's message (`acquire_one_transport`)."""
        if self.transport_id is not None:
            found = [d for d in devices if d.transport_id == self.transport_id]
            missing = f"no device with transport id '{self.transport_id}'"
        elif self.serial is not None:
            found = [d for d in devices if d.serial == self.serial]
            missing = f"device '{self.serial}' not found"
        else:
            found = [] if self.kind == "local" else devices  # every served device is a USB device
            missing = {"local": "no emulators found", "any": "no devices/emulators found"}.get(self.kind,
                                                                                              "no devices found")
            if len(found) > 1:
                raise Ambiguous({"usb": "more than one USB device"}.get(self.kind, "more than one device/emulator"))
        if not found:
            raise DeviceNotFound(missing)
        return found[0]


class Ambiguous(DeviceNotFound):
    """More than one device matches: adb refuses rather than pick one."""


def parse_request(request: str) -> tuple[Selector, str] | None:
    """(device selector, service) of a host request, or None when it is not one."""
    if request.startswith("host-serial:"):
        serial, _, service = request[len("host-serial:"):].partition(":")
        return Selector(serial=serial), service
    if request.startswith("host-transport-id:"):
        tid, _, service = request[len("host-transport-id:"):].partition(":")
        return Selector(transport_id=int(tid) if tid.isdigit() else -1), service
    for prefix, kind in (("host:", "any"), ("host-usb:", "usb"), ("host-local:", "local")):
        if request.startswith(prefix):
            return Selector(kind=kind), request[len(prefix):]
    return None


def device_lines(devices: list[SimDevice], long: bool) -> str:
    if not long:
        return "".join(f"{d.serial}\tdevice\n" for d in devices)
    return "".join(f"{d.serial:<22} device {devpath(d)} product:phonesim model:phonesim device:phonesim "
                   f"transport_id:{d.transport_id}\n" for d in devices)


def devpath(device: SimDevice) -> str:
    return f"usb:1-{device.transport_id}"


def _transport_selector(service: str, selector: Selector) -> Selector:
    if service.startswith("tport:"):
        rest = service[len("tport:"):]
        if rest.startswith("serial:"):
            return Selector(serial=rest[len("serial:"):])
        if rest.startswith("transport-id:"):
            tid = rest[len("transport-id:"):]
            return Selector(transport_id=int(tid) if tid.isdigit() else -1)
        return Selector(kind=rest if rest in WAIT_TRANSPORTS else "any")
    rest = service[len("transport"):]
    if rest.startswith(":"):
        return Selector(serial=rest[1:])
    if rest.startswith("-id:"):
        return Selector(transport_id=int(rest[4:]) if rest[4:].isdigit() else -1)
    return Selector(kind=rest[1:] if rest[1:] in WAIT_TRANSPORTS else selector.kind)


def serve(server: AdbServer, sock: socket.socket, selector: Selector, service: str) -> SimDevice | None:
    """Answer one host service; return the device when the connection switched to it."""
    if service == "version":
        sock.sendall(wire.okay(f"{server.version:04x}"))
    elif service in ("devices", "devices-l"):
        sock.sendall(wire.okay(device_lines(server.devices(), long=service == "devices-l")))
    elif service in ("track-devices", "track-devices-l"):
        sock.sendall(wire.OKAY)
        _track(server, sock, long=service == "track-devices-l")
    elif service.startswith("wait-for-"):
        _wait_for(server, sock, selector, service[len("wait-for-"):])
    elif service == "host-features":
        sock.sendall(wire.okay(HOST_FEATURES))
    elif service == "kill":
        if not server.allow_kill:
            sock.sendall(wire.fail("kill-server rejected by remote server (phonesim: start it with --allow-kill)"))
        else:
            sock.sendall(wire.OKAY)
            server.stop_soon()
    elif service.startswith(("transport", "tport:")):
        device = _transport_selector(service, selector).pick(server.devices())
        sock.sendall(wire.OKAY + (struct.pack("<Q", device.transport_id) if service.startswith("tport:") else b""))
        return device
    elif service in ("features", "get-state", "get-serialno", "get-devpath", "get-product"):
        device = selector.pick(server.devices())
        sock.sendall(wire.okay({"features": FEATURES, "get-state": "device", "get-serialno": device.serial,
                                "get-devpath": devpath(device), "get-product": "phonesim"}[service]))
    elif service in ("list-forward", "reverse:list-forward"):
        sock.sendall(wire.okay(""))
    elif service == "killforward-all":
        sock.sendall(wire.OKAY + wire.OKAY)
    elif service.startswith("killforward:"):
        sock.sendall(wire.fail(f"listener '{service[len('killforward:'):]}' not found"))
    elif service.startswith("forward:"):
        selector.pick(server.devices())
        sock.sendall(wire.fail("cannot bind listener: phonesim serves no device sockets to forward to"))
    elif service.startswith("connect:"):
        sock.sendall(wire.okay(f"failed to connect to '{service[len('connect:'):]}': phonesim serves its own "
                               "devices only"))
    elif service.startswith("disconnect:"):
        sock.sendall(wire.fail(f"no such device '{service[len('disconnect:'):]}'"))
    else:
        sock.sendall(wire.fail(f"unknown host service '{service[:200]}'"))
    return None


def _client_left(sock: socket.socket, timeout: float) -> bool:
    """Wait up to `timeout` for the client to send or close (either ends a waiting service)."""
    poller = select.poll()
    poller.register(sock, select.POLLIN | select.POLLHUP | select.POLLERR)
    return bool(poller.poll(timeout * 1000))


def _track(server: AdbServer, sock: socket.socket, long: bool) -> None:
    sent = None
    while not server.stopping:
        listing = device_lines(server.devices(), long)
        if listing != sent:
            sock.sendall(wire.block(listing))
            sent = listing
        if _client_left(sock, POLL_S):
            return


def _wait_for(server: AdbServer, sock: socket.socket, selector: Selector, spec: str) -> None:
    sock.sendall(wire.OKAY)  # the service's connection is open; its verdict follows
    components = spec.split("-")
    if len(components) < 2:
        sock.sendall(wire.fail(f"short wait-for-: {spec}"))
        return
    if components[0] not in WAIT_TRANSPORTS:
        sock.sendall(wire.fail(f"bad wait-for- transport: {spec}"))
        return
    if any(state not in WAIT_STATES for state in components[1:]):
        sock.sendall(wire.fail(f"bad wait-for- state: {spec}"))
        return
    target = Selector(selector.serial, selector.transport_id, components[0])
    while not server.stopping:
        try:
            device: SimDevice | None = target.pick(server.devices())
        except Ambiguous as exc:
            sock.sendall(wire.fail(str(exc)))
            return
        except DeviceNotFound:
            device = None
        for state in components[1:]:
            if (state == "disconnect" and device is None) or (device is not None and state in ("any", "device")):
                sock.sendall(wire.OKAY)
                return
        if _client_left(sock, POLL_S):
            return
