"""Android key codes (android.view.KeyEvent) that `input keyevent` turns into phonesim actions."""

from __future__ import annotations

import string
from typing import Any

KEYCODES: dict[str, int] = {
    "HOME": 3, "BACK": 4, "SPACE": 62, "ENTER": 66, "DEL": 67, "MENU": 82, "ESCAPE": 111,
    "NUMPAD_ENTER": 160, "APP_SWITCH": 187, "POWER": 26, "SLEEP": 223, "WAKEUP": 224, "VOLUME_UP": 24,
    "VOLUME_DOWN": 25, "VOLUME_MUTE": 164,
    **{f"{d}": 7 + d for d in range(10)},
    **{c.upper(): 29 + i for i, c in enumerate(string.ascii_lowercase)},
}
SCREEN_KEYS: dict[int, bool | None] = {26: None, 223: False, 224: True}  # POWER toggles the display
_DIGIT_CODES = {7 + d: str(d) for d in range(10)}
_LETTER_CODES = {29 + i: c for i, c in enumerate(string.ascii_lowercase)}
_BUTTONS = {3: "home", 4: "back", 111: "back", 66: "enter", 160: "enter", 187: "recent", 82: "menu"}
_KEYS = {67: "backspace", 62: "space", **_DIGIT_CODES, **_LETTER_CODES}


def parse_keycode(name: str) -> int | None:
    """`4`, `KEYCODE_BACK` or `BACK` -> 4; None when the name is not a key code."""
    if name.isdigit():
        return int(name)
    key = name.upper().removeprefix("KEYCODE_")
    return KEYCODES.get(key)


def key_action(code: int) -> dict[str, Any] | None:
    """The canonical phonesim action of a key press, or None for keys the simulator ignores."""
    if code in _BUTTONS:
        return {"type": "system_button", "args": {"button": _BUTTONS[code]}}
    if code in _KEYS:
        return {"type": "key", "args": {"key": _KEYS[code]}}
    return None
