"""Synthetic phone screens (Pillow-drawn) with matching accessibility trees.

For tests and benchmarks of fork detection: a `Screen` describes what is shown (title,
rows with optional switches, a text field, a button, the status-bar clock); `render_screen`
draws it at any resolution and `screen_tree` gives the elements with pixel bounds.
"""

from __future__ import annotations

import io
import zlib
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from training.methods.grsd.forks.model import Step

BASE_WIDTH = 1080  # layout units are pixels of a 1080-wide screen, scaled to the target width
STATUS_BAR_RATIO = 25 / 878


@dataclass(frozen=True, slots=True)
class Screen:
    title: str
    rows: tuple[str, ...] = ()
    switches: tuple[bool | None, ...] = ()  # per row: None = no switch, else its state
    field: tuple[str, str] | None = None  # (resource id, text) of a text field under the title
    button: str | None = None
    clock: str = "12:00"
    accent: tuple[int, int, int] = (33, 150, 243)
    row_height: int = 140  # layout units; screens of different apps use different row pitches
    background: tuple[int, int, int] = (246, 246, 246)  # page colour (dark themes: dark values)
    pictures: bool = False  # rows start with a picture (a colour block keyed by the row text)


@lru_cache(maxsize=8)
def _font(size: int) -> ImageFont.ImageFont:
    return ImageFont.load_default(size=size)


def _layout(screen: Screen, width: int, height: int) -> list[dict[str, Any]]:
    """Elements (tree dicts with pixel bounds) in drawing order."""
    k = width / BASE_WIDTH
    status = int(height * STATUS_BAR_RATIO)
    elements = [
        {"class": "android.widget.TextView", "resource_id": "android:id/clock", "text": screen.clock,
         "bounds": [int(24 * k), 0, int(200 * k), status]},
        {"class": "android.widget.TextView", "resource_id": "app:id/title", "text": screen.title,
         "bounds": [0, status, width, status + int(170 * k)]},
    ]
    y = status + int(200 * k)
    if screen.field is not None:
        rid, text = screen.field
        elements.append({"class": "android.widget.EditText", "resource_id": rid, "text": text,
                         "bounds": [int(40 * k), y, width - int(40 * k), y + int(130 * k)], "focused": True})
        y += int(170 * k)
    for index, label in enumerate(screen.rows):
        top, bottom = y, y + int(screen.row_height * k)
        elements.append({"class": "android.widget.TextView", "resource_id": "app:id/row", "text": label,
                         "bounds": [int(40 * k), top, width - int(40 * k), bottom]})
        state = screen.switches[index] if index < len(screen.switches) else None
        if state is not None:
            elements.append({"class": "android.widget.Switch", "resource_id": "app:id/toggle", "text": "",
                             "checked": state,
                             "bounds": [width - int(220 * k), top + int(35 * k),
                                        width - int(80 * k), bottom - int(35 * k)]})
        y = bottom + int(20 * k)
    if screen.button is not None:
        elements.append({"class": "android.widget.Button", "resource_id": "app:id/action", "text": screen.button,
                         "bounds": [int(200 * k), height - int(260 * k), width - int(200 * k), height - int(120 * k)]})
    return elements


def screen_tree(screen: Screen, width: int = 1080, height: int = 2400) -> list[dict[str, Any]]:
    """The accessibility tree of `screen` as a list of element dicts (bounds in pixels)."""
    return _layout(screen, width, height)


def render_screen(screen: Screen, width: int = 1080, height: int = 2400) -> np.ndarray:
    """Draw `screen` as an (H, W, 3) uint8 array."""
    k = width / BASE_WIDTH
    image = Image.new("RGB", (width, height), screen.background)
    dark = sum(screen.background) < 384
    card, ink = ((45, 45, 48), (235, 235, 235)) if dark else ((255, 255, 255), (30, 30, 30))
    draw = ImageDraw.Draw(image)
    text_font, title_font = _font(max(8, int(44 * k))), _font(max(9, int(56 * k)))
    for element in _layout(screen, width, height):
        left, top, right, bottom = element["bounds"]
        rid = element["resource_id"]
        if rid == "android:id/clock":
            draw.rectangle((0, 0, width, bottom), fill=(20, 20, 20))
            clock_font = _font(max(6, int(40 * k)))
            draw.text((left, top + (bottom - top) // 6), element["text"], fill=(255, 255, 255), font=clock_font)
        elif rid == "app:id/title":
            draw.rectangle((left, top, right, bottom), fill=screen.accent)
            draw.text((left + int(40 * k), top + int(50 * k)), element["text"], fill=(255, 255, 255), font=title_font)
        elif element["class"] == "android.widget.EditText":
            border = max(1, int(4 * k))
            draw.rectangle((left, top, right, bottom), fill=(255, 255, 255), outline=screen.accent, width=border)
            draw.text((left + int(30 * k), top + int(40 * k)), element["text"], fill=(10, 10, 10), font=text_font)
        elif element["class"] == "android.widget.Switch":
            on = element["checked"]
            draw.rounded_rectangle((left, top, right, bottom), radius=(bottom - top) // 2,
                                   fill=screen.accent if on else (190, 190, 190))
            knob = bottom - top
            x0 = right - knob if on else left
            draw.ellipse((x0, top, x0 + knob, bottom), fill=(255, 255, 255), outline=(120, 120, 120))
        elif element["class"] == "android.widget.Button":
            draw.rounded_rectangle((left, top, right, bottom), radius=int(30 * k), fill=screen.accent)
            draw.text((left + int(60 * k), top + int(45 * k)), element["text"], fill=(255, 255, 255), font=text_font)
        else:
            draw.rectangle((left, top, right, bottom), fill=card, outline=(215, 215, 215))
            text_left = left + int(30 * k)
            if screen.pictures:
                shade = zlib.crc32(element["text"].encode())
                colour = (shade & 255, (shade >> 8) & 255, (shade >> 16) & 255)
                side = bottom - top - int(20 * k)
                inset = int(10 * k)
                draw.rectangle((left + inset, top + inset, left + inset + side, bottom - inset), fill=colour)
                text_left += side
            draw.text((text_left, top + int(45 * k)), element["text"], fill=ink, font=text_font)
    return np.asarray(image)


def png_bytes(array: np.ndarray) -> bytes:
    """PNG encoding of an (H, W, 3) uint8 array, as screenshots are stored."""
    buffer = io.BytesIO()
    Image.fromarray(array).save(buffer, format="PNG")
    return buffer.getvalue()


def make_step(
    screen: Screen,
    action: dict[str, Any] | None,
    width: int = 1080,
    height: int = 2400,
    with_tree: bool = True,
    encode: bool = True,
) -> Step:
    """A trajectory step showing `screen`: PNG bytes (or the array) plus, optionally, its tree."""
    array = render_screen(screen, width, height)
    return Step(
        screenshot=png_bytes(array) if encode else array,
        action=action,
        tree=screen_tree(screen, width, height) if with_tree else None,
    )
