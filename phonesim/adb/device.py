"""`SimDevice`: one phonesim `Phone` served as an adb device, with its file system, settings and
the state the server's failure injection changes."""

from __future__ import annotations

import socket
import threading
import time
from typing import Iterable

from phonesim.adb.files import DeviceFiles
from phonesim.adb.limits import MemoryPool, ServerLimits
from phonesim.phone import Phone

# `settings get` answers for keys a client reads to prepare a device; others are `null` until put
DEFAULT_SETTINGS = {
    "global": {"window_animation_scale": "1.0", "transition_animation_scale": "1.0",
               "animator_duration_scale": "1.0", "adb_enabled": "1", "airplane_mode_on": "0",
               "device_provisioned": "1", "stay_on_while_plugged_in": "0", "development_settings_enabled": "1"},
    "secure": {"default_input_method": "com.android.inputmethod.latin/.LatinIME", "user_setup_complete": "1",
               "location_mode": "0"},
    "system": {"screen_off_timeout": "60000", "accelerometer_rotation": "0", "user_rotation": "0",
               "font_scale": "1.0"},
}


class SimDevice:
    """A served phone. `lock` serialises commands that touch the phone; the file system has its
    own lock. The sockets open on the device are tracked so that dropping it can close them, and
    `gone` is set then, so that a command waiting on the device (`sleep`) ends at once."""

    def __init__(self, serial: str, transport_id: int, phone: Phone, limits: ServerLimits | None = None,
                 executables: Iterable[str] = (), pool: MemoryPool | None = None) -> None:
        self.serial = serial
        self.transport_id = transport_id
        self.phone = phone
        self.limits = limits or ServerLimits()
        self.pool = pool or MemoryPool(self.limits.max_inflight_bytes)  # shared by the server's devices
        self.files = DeviceFiles(self.limits, executables)
        self.settings = {namespace: dict(values) for namespace, values in DEFAULT_SETTINGS.items()}
        self.installed_at = int(time.time())  # the apps' firstInstallTime / lastUpdateTime
        self.lock = threading.RLock()
        self.sockets: set[socket.socket] = set()
        self.gone = threading.Event()
        self.dump_faults: list[str] = []  # messages the next `uiautomator dump`s fail with
        self.stale_dumps = 0  # how many next dumps write the previous dump again
        self.last_dump: str | None = None
        self.booted = True  # `getprop sys.boot_completed` says 1 (a device still booting says nothing)
        self.screen_on = True  # `dumpsys power`: awake, display on
