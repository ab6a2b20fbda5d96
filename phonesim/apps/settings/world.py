"""Settings world data: nearby Wi-Fi networks, paired Bluetooth devices, device facts."""

from __future__ import annotations

import random
from typing import Any

NETWORK_NAMES = ["HomeNet", "Casa-5G", "Linksys_204", "Office-Guest", "CoffeeBar_Free", "NETGEAR-7F", "TP-Link_33A0",
                 "Library-Public", "xfinitywifi", "Airport_WiFi", "Starlink-9", "Hotel Lobby"]
BT_DEVICES = ["Pixel Buds Pro", "JBL Flip 6", "Car Audio", "Galaxy Watch", "Bose QC45", "Mi Band 7", "Sony WH-1000XM5",
              "Logitech K380"]


def make_world(seed: int) -> dict[str, Any]:
    rng = random.Random(f"settings:{seed}")
    nets = rng.sample(NETWORK_NAMES, 7)
    return {
        "networks": [{"name": n, "signal": rng.choice(["Excellent", "Good", "Fair", "Weak"]),
                      "secured": rng.random() < 0.7} for n in nets],
        "paired": rng.sample(BT_DEVICES, rng.randint(2, 5)),
        "android_version": rng.choice(["12", "13", "14", "15"]),
        "model": rng.choice(["Pixel 7", "Pixel 8", "Pixel 8 Pro", "Galaxy S23", "Moto G84"]),
        "build": f"UQ1A.{rng.randint(230101, 240930)}.{rng.randint(1, 99):03d}",
        "storage_total_gb": rng.choice([64, 128, 256]),
        "storage_used_gb": rng.randint(12, 60),
    }


def initial_data(world: dict[str, Any]) -> dict[str, Any]:
    """Settings-app runtime data; device-wide settings live in the OS `system` namespace."""
    return {"bt_connected": None}
