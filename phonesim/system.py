"""OS-owned device settings (the `system` runtime namespace) and their cascades (MobileGym appendix A.2)."""

from __future__ import annotations

import random
from typing import Any

LAUNCHER, RECENTS = "launcher", "recents"  # the OS's own screens


def default_system(world_seed: int) -> dict[str, Any]:
    rng = random.Random(f"system:{world_seed}")
    return {
        "wifi": True,
        "wifi_network": rng.choice(["HomeNet", "Casa-5G", "Linksys_204", "Office-Guest"]),
        "bluetooth": False,
        "airplane": False,
        "mobile_data": True,
        "location": True,
        "brightness": rng.choice([40, 50, 60, 70]),
        "adaptive_brightness": True,
        "dark_theme": False,
        "font_size": "Default",
        "screen_timeout": "1 minute",
        "media_volume": rng.choice([30, 50, 70]),
        "ring_volume": 60,
        "dnd": False,
        "vibrate": True,
        "battery": rng.randint(35, 95),
        "battery_saver": False,
        "device_name": rng.choice(["Pixel 8", "Galaxy S23", "Moto G"]),
        "clock": f"{rng.randint(8, 11)}:{rng.randint(0, 59):02d}",
        "date": "Mon, Mar 4",
    }


def set_airplane(system: dict[str, Any], on: bool) -> None:
    """Airplane mode turns radios off; turning it off leaves them off (Android behaviour)."""
    system["airplane"] = on
    if on:
        system["wifi"] = False
        system["bluetooth"] = False
        system["mobile_data"] = False


def status_icons(system: dict[str, Any]) -> str:
    parts = []
    if system.get("airplane"):
        parts.append("Airplane mode")
    parts.append("Wi-Fi on" if system.get("wifi") else "Wi-Fi off")
    if system.get("bluetooth"):
        parts.append("Bluetooth on")
    if system.get("dnd"):
        parts.append("Do not disturb")
    parts.append(f"Battery {system.get('battery', 0)}%")
    return ", ".join(parts)
