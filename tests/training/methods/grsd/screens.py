"""Small synthetic screens (270×600) and actions for the fork-detection tests."""

from __future__ import annotations

from training.methods.grsd.forks.synthetic import Screen

WIDTH, HEIGHT = 270, 600


def _rows(prefix: str, n: int) -> tuple[str, ...]:
    return tuple(f"{prefix} {i + 1}" for i in range(n))


SETTINGS_ROWS = ("Wi-Fi", "Bluetooth", "Display", "Sound", "Battery", "Storage", "Apps", "Privacy", "Location", "About")
ITEM_ROWS = ("Price: 10", "In stock", "Color: red", "Size: M", "Ships in 2 days", "Reviews: 41", "Seller: Shop")

# Visually distinct screens (pairwise SSIM < 0.85 on their thumbnails) and look-alikes that
# differ only in a field's text, a switch or a title (SSIM > 0.95: only the tree tells).
SCREENS = {
    "A": Screen("Home", rows=("Messages", "Contacts", "Settings", "Camera", "Clock", "Files", "Maps", "Music",
                              "Notes", "Phone", "Photos", "Weather"), accent=(33, 150, 243), row_height=120),
    "B": Screen("Settings", rows=SETTINGS_ROWS, switches=(False, False), accent=(76, 175, 80), row_height=150),
    "C": Screen("Bluetooth", rows=("Pair new device", "Headphones", "Speaker", "Car kit", "Watch", "Keyboard"),
                button="Scan", accent=(156, 39, 176), row_height=180),
    "D": Screen("Pairing", rows=_rows("Device code", 9), button="Done", accent=(255, 152, 0), row_height=130),
    "E": Screen("Display", rows=("Brightness", "Dark theme", "Font size", "Screen timeout", "Colors", "Night light",
                                 "Wallpaper", "Auto-rotate"), switches=(None, True), accent=(0, 150, 136), row_height=165),
    "X": Screen("Contacts", rows=("Alice", "Bob", "Carol", "Dave", "Eve", "Frank", "Grace", "Heidi", "Ivan", "Judy"),
                field=("app:id/search", ""), accent=(233, 30, 99), row_height=140),
    "Y": Screen("Messages", rows=_rows("Thread with", 11), button="Compose", accent=(121, 85, 72), row_height=125),
    "Z": Screen("Camera", rows=_rows("Photo", 10), accent=(255, 87, 34), row_height=135),
    "B_wifi": Screen("Settings", rows=SETTINGS_ROWS, switches=(True, False), accent=(76, 175, 80), row_height=150),
    "B_bt": Screen("Settings", rows=SETTINGS_ROWS, switches=(False, True), accent=(76, 175, 80), row_height=150),
    "N_empty": Screen("Note", field=("app:id/body", ""), rows=_rows("Older note", 8), button="Save",
                      accent=(63, 81, 181), row_height=150),
    "N_hello": Screen("Note", field=("app:id/body", "hello"), rows=_rows("Older note", 8), button="Save",
                      accent=(63, 81, 181), row_height=150),
    "N_helo": Screen("Note", field=("app:id/body", "helo"), rows=_rows("Older note", 8), button="Save",
                     accent=(63, 81, 181), row_height=150),
    "L": Screen("Shop", rows=_rows("Item", 10), accent=(96, 125, 139), row_height=140),
    "I3": Screen("Item 3", rows=ITEM_ROWS, button="Buy", accent=(96, 125, 139), row_height=160),
    "I4": Screen("Item 4", rows=ITEM_ROWS, button="Buy", accent=(96, 125, 139), row_height=160),
}


def click(n: int) -> dict:
    """A click on row n (rows 100 grid units apart: different n never count as equivalent)."""
    return {"type": "click", "args": {"point": [500, 100 * n + 50]}}


def type_text(text: str) -> dict:
    return {"type": "type", "args": {"text": text}}


DONE = {"type": "terminate", "args": {"status": "success"}}
