"""Pillow renderer: a `Frame` becomes a tuple of draw ops (logical units), then pixels.

Rendering only happens when an observation's screenshot or PNG is read. Results are cached
per process and shared by all phones, by content: whole screens, and horizontal bands of a
screen (their pixels and their compressed PNG rows), so a screen seen before costs a lookup
and a screen that differs from seen ones in a few elements re-renders only the bands those
elements touch (see "caches" below). Output is pixel-identical to `rasterize` of the whole
screen. PNGs are 8-bit with a per-screen palette (`encode_png`, `render_png`).
"""

from __future__ import annotations

import io
import math
import os
import struct
import sys
import threading
import zlib
from collections import OrderedDict
from functools import lru_cache

import numpy as np
from PIL import Image, ImageColor, ImageDraw, ImageFont

from phonesim.layout import Frame
from phonesim.widgets import CANVAS_H, CANVAS_W, PAD, Node

FONT_DIRS = ("/usr/share/fonts/truetype/dejavu", "/usr/share/fonts/dejavu", "/usr/local/share/fonts")

LIGHT = {"bg": "#ffffff", "surface": "#f3f5f9", "text": "#1b1b1f", "muted": "#5f6368", "accent": "#1a73e8",
         "divider": "#e3e6ea", "track": "#c4c7cc", "status": "#eef1f6", "nav": "#eef1f6", "field": "#ffffff",
         "key": "#ffffff", "keyboard": "#d5d9e0", "card": "#ffffff", "toast": "#303134", "ontoast": "#ffffff",
         "launcher": "#dbe7f5", "dialog": "#ffffff"}
DARK = {"bg": "#121316", "surface": "#1e2025", "text": "#e6e7eb", "muted": "#a4a8b0", "accent": "#8ab4f8",
        "divider": "#2c2f35", "track": "#5f636a", "status": "#1a1c20", "nav": "#1a1c20", "field": "#1e2025",
        "key": "#3a3d43", "keyboard": "#25272c", "card": "#26282d", "toast": "#e6e7eb", "ontoast": "#1b1b1f",
        "launcher": "#1c2733", "dialog": "#2a2c31"}

GLYPHS = {"chevron": "›", "close": "✕", "more": "⋮", "plus": "+", "edit": "✎", "delete": "🗑", "star": "☆",
          "star_filled": "★", "call": "✆", "message": "✉", "settings": "⚙", "brightness": "☀",
          "dark": "☾", "airplane": "✈", "sound": "♫", "wifi": "≋", "bluetooth": "ᛒ", "battery": "▮",
          "display": "☀", "info": "ⓘ", "person": "●", "check": "✓", "menu": "☰", "nav_recents": "■",
          "nav_home": "●", "nav_back": "◀", "location": "⌖", "bell": "♪", "mail": "✉", "share": "⇪",
          "contacts": "☺", "search": "⌕", "back": "←", "group": "☷", "phone": "✆"}

Op = tuple


@lru_cache(maxsize=None)
def _font_path(bold: bool) -> str | None:
    name = "DejaVuSans-Bold.ttf" if bold else "DejaVuSans.ttf"
    for d in FONT_DIRS:
        p = os.path.join(d, name)
        if os.path.exists(p):
            return p
    return None


@lru_cache(maxsize=256)
def font(px: int, bold: bool = False) -> ImageFont.FreeTypeFont:
    path = _font_path(bold)
    # Pillow ≥10.1 ships a scalable default font; DejaVu is preferred for glyph coverage.
    return ImageFont.truetype(path, px) if path else ImageFont.load_default(size=px)


@lru_cache(maxsize=8192)
def _fit(text: str, px: int, bold: bool, max_w: float) -> str:
    if text_width(text, px, bold) <= max_w:
        return text
    lo, hi = 0, len(text)  # the longest prefix that fits with an ellipsis (length is monotonic)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if text_width(text[:mid] + "…", px, bold) <= max_w:
            lo = mid
        else:
            hi = mid - 1
    return text[:lo] + "…"


@lru_cache(maxsize=2048)
def _wrap(text: str, px: int, max_w: float) -> tuple[str, ...]:
    lines, cur = [], ""
    for word in text.split():
        cand = f"{cur} {word}".strip()
        if text_width(cand, px) <= max_w or not cur:
            cur = cand
        else:
            lines.append(cur)
            cur = word
    if cur:
        lines.append(cur)
    return tuple(lines)


# --- frame -> ops ------------------------------------------------------------------------------

def frame_ops(frame: Frame, pal: dict[str, str]) -> list[Op]:
    """Draw ops in logical coordinates: (kind, ...) tuples, hashable for caching."""
    ops: list[Op] = [("rect", 0, 0, CANVAS_W, CANVAS_H, pal["launcher" if frame.screen in ("launcher", "recents")
                                                           else "bg"], 0, None)]
    late: list[Node] = []
    for root in frame.nodes:
        if root.kind in ("statusbar", "navbar"):
            late.append(root)
            continue
        _node_ops(root, ops, pal)
    for root in late:
        _node_ops(root, ops, pal)
    scrim = next((i for i, op in enumerate(ops) if op[0] == "dim"), None)
    if scrim is not None:  # what lies under a dialog's scrim is drawn in dimmed colours instead
        ops[:scrim + 1] = [_dim_op(op) for op in ops[:scrim]]  # of blending 10 MB after (16 ms)
    return ops


# Colour fields per op kind (see `_draw`).
_COLOUR_FIELDS = {"rect": (5, 7), "text": (6,), "line": (5,), "ellipse": (5, 6)}


def _dim_op(op: Op) -> Op:
    """`op` as seen under the scrim. The scrim covers the screen above the navigation bar, which
    is drawn later, opaque, over the rest: so everything drawn before the scrim is dimmed."""
    out = list(op)
    for i in _COLOUR_FIELDS[op[0]]:
        if out[i]:
            out[i] = _dim_colour(out[i])
    return tuple(out)


@lru_cache(maxsize=256)
def _dim_colour(colour: str) -> str:
    return "#%02x%02x%02x" % tuple(round(v * (1 - _DIM / 255)) for v in _rgb(colour))


def _text(ops, x, y, s, size, color, bold=False, anchor="la", max_w=None):
    if max_w is not None:
        s = _fit(s, size, bold, max_w)
    if s:
        ops.append(("text", x, y, s, size, bold, color, anchor))


def _glyph(ops, name, x, y, w, h, color):
    if name == "search":
        r = min(w, h) * 0.28
        cx, cy = x + w * 0.44, y + h * 0.44
        ops.append(("ellipse", cx - r, cy - r, cx + r, cy + r, None, color, 2))
        ops.append(("line", cx + r * 0.7, cy + r * 0.7, x + w * 0.82, y + h * 0.82, color, 2))
        return
    if name in _DRAWN:
        _DRAWN[name](ops, x, y, w, h, color)
        return
    ch = GLYPHS.get(name, name[:1].upper())
    ops.append(("text", x + w / 2, y + h / 2, ch, int(min(w, h) * 0.8), False, color, "mm"))


# Icons whose characters DejaVu Sans lacks (they would show as boxes) are drawn from shapes.
def _trash(ops, x, y, w, h, color):
    lw = max(1.5, w / 14)
    ops.append(("line", x + w * 0.18, y + h * 0.24, x + w * 0.82, y + h * 0.24, color, lw))
    ops.append(("rect", x + w * 0.40, y + h * 0.12, x + w * 0.60, y + h * 0.24, None, 0, color, lw))
    ops.append(("rect", x + w * 0.26, y + h * 0.30, x + w * 0.74, y + h * 0.88, None, w * 0.06, color, lw))
    for fx in (0.42, 0.58):
        ops.append(("line", x + w * fx, y + h * 0.42, x + w * fx, y + h * 0.76, color, lw * 0.8))


def _pin(ops, x, y, w, h, color):
    r = min(w, h) * 0.26
    cx, cy = x + w / 2, y + h * 0.38
    lw = max(1.5, w / 12)
    ops.append(("ellipse", cx - r, cy - r, cx + r, cy + r, None, color, lw))
    ops.append(("line", cx - r * 0.75, cy + r * 0.66, cx, y + h * 0.9, color, lw))
    ops.append(("line", cx + r * 0.75, cy + r * 0.66, cx, y + h * 0.9, color, lw))
    ops.append(("ellipse", cx - r * 0.3, cy - r * 0.3, cx + r * 0.3, cy + r * 0.3, color, None, 0))


def _info(ops, x, y, w, h, color):
    r = min(w, h) * 0.4
    cx, cy = x + w / 2, y + h / 2
    ops.append(("ellipse", cx - r, cy - r, cx + r, cy + r, None, color, max(1.5, w / 14)))
    ops.append(("text", cx, cy + r * 0.1, "i", int(min(w, h) * 0.5), True, color, "mm"))


def _bluetooth(ops, x, y, w, h, color):
    cx, top, bottom, lw = x + w / 2, y + h * 0.12, y + h * 0.88, max(1.5, w / 14)
    rx, lx = cx + w * 0.2, cx - w * 0.2
    for a, b in (((cx, top), (cx, bottom)), ((lx, y + h * 0.32), (rx, y + h * 0.68)), ((rx, y + h * 0.68), (cx, bottom)),
                 ((lx, y + h * 0.68), (rx, y + h * 0.32)), ((rx, y + h * 0.32), (cx, top))):
        ops.append(("line", a[0], a[1], b[0], b[1], color, lw))


_DRAWN = {"delete": _trash, "location": _pin, "info": _info, "bluetooth": _bluetooth}


def _node_ops(n: Node, ops: list[Op], p: dict[str, str]) -> None:
    k, x, y, w, h = n.kind, n.x, n.y, n.w, n.h
    if k == "statusbar":
        ops.append(("rect", x, y, x + w, y + h, p["status"], 0, None))
        _text(ops, PAD, y + h / 2, n.text, 13, p["text"], True, "lm")
        _text(ops, w - PAD, y + h / 2, _status_short(n.desc), 12, p["text"], False, "rm")
    elif k == "navbar":
        ops.append(("rect", x, y, x + w, y + h, p["nav"], 0, None))
    elif k == "navbutton":
        _glyph(ops, n.value, x + w / 2 - 10, y + h / 2 - 10, 20, 20, p["muted"])
    elif k == "appbar":
        ops.append(("rect", x, y, x + w, y + h, p["surface"], 0, None))
    elif k == "title":
        _text(ops, x, y + h / 2, n.text, 20, p["text"], True, "lm", w)
    elif k in ("iconbutton", "glyph"):
        _glyph(ops, n.value, x + w / 2 - 12, y + h / 2 - 12, 24, 24, p["muted"] if k == "glyph" else p["text"])
    elif k == "item":
        left = PAD + (56 if any(c.kind in ("avatar", "glyph") and c.x < 60 for c in n.children) else 0)
        right = w - PAD - (80 if n.children and n.children[-1].x > w - 150 else 0)
        if n.sub:
            _text(ops, left, y + 16, n.text, 16, p["text"] if n.enabled else p["muted"], False, "la", right - left)
            _text(ops, left, y + 40, n.sub, 14, p["muted"], False, "la", right - left)
        else:
            _text(ops, left, y + h / 2, n.text, 16, p["text"] if n.enabled else p["muted"], False, "lm",
                  right - left)
        ops.append(("line", left, y + h - 1, w, y + h - 1, p["divider"], 1))
    elif k == "avatar":
        ops.append(("ellipse", x, y, x + w, y + h, n.value, None, 0))
        _text(ops, x + w / 2, y + h / 2, n.text, int(h * 0.45), "#ffffff", True, "mm")
    elif k == "trailing":
        _text(ops, x + w, y + h / 2, n.text, 14, p["muted"], False, "rm", w)
    elif k == "switch":
        on = bool(n.checked)
        ops.append(("rect", x, y + 4, x + w, y + h - 4, p["accent"] if on else p["track"], (h - 8) / 2, None))
        cx = x + w - h / 2 if on else x + h / 2
        ops.append(("ellipse", cx - h / 2 + 5, y + 5, cx + h / 2 - 5, y + h - 5, "#ffffff", None, 0))
    elif k == "checkbox":
        ops.append(("rect", x, y, x + w, y + h, p["accent"] if n.checked else None, 3, p["muted"]))
        if n.checked:
            _text(ops, x + w / 2, y + h / 2, "✓", 18, "#ffffff", True, "mm")
    elif k == "slider":
        cy, fx = y + h / 2, x + w * float(n.value)
        ops.append(("line", x, cy, x + w, cy, p["track"], 4))
        ops.append(("line", x, cy, fx, cy, p["accent"], 4))
        ops.append(("ellipse", fx - 10, cy - 10, fx + 10, cy + 10, p["accent"], None, 0))
    elif k == "fieldrow":
        _text(ops, PAD, y + 4, n.text, 13, p["muted"], False, "la", w)
    elif k in ("field", "search"):
        radius = h / 2 if k == "search" else 6
        ops.append(("rect", x, y, x + w, y + h, p["field"] if k == "field" else p["surface"], radius,
                    p["accent"] if n.focused else p["divider"], 2 if n.focused else 1))
        tx = x + (40 if k == "search" else 12)
        if k == "search":
            _glyph(ops, "search", x + 8, y + 12, 24, 24, p["muted"])
        shown = n.text or str(n.value or "")
        _text(ops, tx, y + h / 2, shown, 16, p["text"] if n.text else p["muted"], False, "lm", w - 64)
        if n.focused:
            cx = tx + (text_width(_fit(n.text, 16, False, w - 64), 16) if n.text else 0) + 1
            ops.append(("line", cx, y + 12, cx, y + h - 12, p["accent"], 2))
    elif k == "button":
        ops.append(("rect", x, y, x + w, y + h, p["accent"] if n.enabled else p["track"], h / 2, None))
        _text(ops, x + w / 2, y + h / 2, n.text, 16, "#ffffff" if n.enabled else p["muted"], True, "mm", w)
    elif k in ("textbutton", "dlgbutton"):
        _text(ops, x + w / 2, y + h / 2, n.text, 15, p["accent"] if n.enabled else p["muted"], True, "mm", w)
    elif k == "header":
        _text(ops, PAD, y + h / 2 + 4, n.text, 14, p["accent"], True, "lm", w)
    elif k == "info":
        left = PAD + (40 if n.children else 0)
        _text(ops, left, y + 10, n.sub, 13, p["muted"], False, "la", w - left - PAD)
        _text(ops, left, y + 30, n.text, 17, p["text"], False, "la", w - left - PAD)
    elif k in ("paragraph", "dlgtext"):
        for i, line in enumerate(_wrap(n.text, 15, w - 2 * PAD if k == "paragraph" else w)):
            _text(ops, x + (PAD if k == "paragraph" else 8), y + 8 + 22 * i, line, 15, p["text"])
    elif k == "hero":
        _text(ops, w / 2, y + 116, n.text, 24, p["text"], True, "mt", w - 32)
        if n.sub:
            _text(ops, w / 2, y + 150, n.sub, 14, p["muted"], False, "mt", w - 32)
    elif k == "roundbutton":
        ops.append(("ellipse", x + 8, y, x + w - 8, y + w - 16, p["surface"], None, 0))
        _glyph(ops, n.value, x + w / 2 - 12, y + (w - 16) / 2 - 12, 24, 24, p["accent"])
        _text(ops, x + w / 2, y + h - 4, n.text, 13, p["text"], False, "mb", w + 16)
    elif k == "tab":
        _text(ops, x + w / 2, y + h / 2, n.text, 15, p["accent"] if n.checked else p["muted"], True, "mm", w)
        if n.checked:
            ops.append(("rect", x + 16, y + h - 3, x + w - 16, y + h, p["accent"], 0, None))
    elif k == "fab":
        ops.append(("rect", x, y, x + w, y + h, p["accent"], 16, None))
        _glyph(ops, n.value, x + 14, y + 14, 28, 28, "#ffffff")
    elif k == "scrim":
        ops.append(("dim", x, y, x + w, y + h))
    elif k in ("dialog", "menu"):
        ops.append(("rect", x, y, x + w, y + h, p["dialog"], 24 if k == "dialog" else 6, p["divider"]))
    elif k == "dlgtitle":
        _text(ops, x, y + h / 2, n.text, 20, p["text"], True, "lm", w)
    elif k == "radio":
        cy = y + h / 2
        ops.append(("ellipse", x + 4, cy - 10, x + 24, cy + 10, None, p["accent"] if n.checked else p["muted"], 2))
        if n.checked:
            ops.append(("ellipse", x + 9, cy - 5, x + 19, cy + 5, p["accent"], None, 0))
        _text(ops, x + 40, cy, n.text, 16, p["text"], False, "lm", w - 48)
    elif k == "menuitem":
        _text(ops, x + 16, y + h / 2, n.text, 16, p["text"], False, "lm", w - 24)
    elif k == "keyboard":
        ops.append(("rect", x, y, x + w, y + h, p["keyboard"], 0, None))
    elif k == "key":
        ops.append(("rect", x, y, x + w, y + h, p["key"], 6, None))
        _text(ops, x + w / 2, y + h / 2, n.text, 18, p["text"], False, "mm", w)
    elif k == "toast":
        ops.append(("rect", x, y, x + w, y + h, p["toast"], h / 2, None))
        _text(ops, x + w / 2, y + h / 2, n.text, 14, p["ontoast"], False, "mm", w - 16)
    elif k == "clock":
        _text(ops, w / 2, y + 10, n.text, 56, p["text"], False, "mt")
        _text(ops, w / 2, y + 84, n.sub, 16, p["text"], False, "mt")
    elif k == "appicon":
        color, glyph = n.value
        ops.append(("rect", x + 14, y + 4, x + w - 14, y + 60, color, 16, None))
        _glyph(ops, glyph, x + 24, y + 12, w - 48, 40, "#ffffff")
        _text(ops, x + w / 2, y + 70, n.text, 13, p["text"], False, "mt", w)
    elif k == "pagedots":
        page, pages = n.value
        x0 = x + w / 2 - (pages - 1) * 8
        for i in range(pages):
            r = 4 if i == page else 3
            ops.append(("ellipse", x0 + 16 * i - r, y + h / 2 - r, x0 + 16 * i + r, y + h / 2 + r,
                        p["text"] if i == page else p["track"], None, 0))
    elif k == "card":
        ops.append(("rect", x, y, x + w, y + h, p["card"], 16, p["divider"]))
        ops.append(("rect", x + 16, y + 18, x + 40, y + 42, n.value, 6, None))
        _text(ops, x + 52, y + 30, n.text, 16, p["text"], True, "lm", w - 64)
        _text(ops, x + 16, y + 70, n.sub, 14, p["muted"], False, "lm", w - 32)
    for c in n.children:
        _node_ops(c, ops, p)


def _status_short(desc: str) -> str:
    parts = []
    if "Airplane" in desc:
        parts.append("✈")
    if "Wi-Fi on" in desc:
        parts.append("WiFi")
    if "Bluetooth on" in desc:
        parts.append("BT")
    parts.append(desc.rsplit(" ", 1)[-1])
    return "  ".join(parts)


# --- ops -> pixels ------------------------------------------------------------------------

def rasterize(ops: list[Op] | tuple[Op, ...], size: tuple[int, int]) -> Image.Image:
    """Draw ops onto a new RGB image of `size` pixels: the from-scratch reference rendering
    (no screen or band caches, only text and tile caches; the benchmark baseline). Cached
    screenshots are pixel-identical to it."""
    img = _canvas(size, ops[0][5])
    _draw(img, ops[1:], size, ground=ops[0][5])
    return img


# A new 1080×2400 RGB image is 10 MB of fresh memory: allocating it costs page faults (measured
# 4–9 ms of CPU while the cache evicts older screens, against ~0.5 ms to fill an existing one).
# Screenshots the pixel cache evicts and nothing else references (no observation, band or
# caller holds them) are kept as spare canvases for the next new screen of that size.
SPARE_CANVASES = 2  # per size, held outside the cache budget
_SPARE: dict[tuple[int, int], list[Image.Image]] = {}


def _canvas(size: tuple[int, int], color: str) -> Image.Image:
    """An RGB image of `size` filled with `color`: a recycled spare if there is one."""
    try:
        img = _SPARE[size].pop()
    except (KeyError, IndexError):
        return Image.new("RGB", size, color)
    img.paste(_rgb(color), (0, 0, *size))
    return img


def _recycle(value) -> None:
    """Keep an evicted pixel-cache entry's image as a spare canvas if it is unreferenced: here
    only by `value` (a screenshot, or a (screenshot, top, bottom) band reference) and locals."""
    if isinstance(value, Image.Image):
        img, refs = value, 4  # the evicting caller's local, `value`, `img`, getrefcount's argument
    elif type(value) is tuple and isinstance(value[0], Image.Image):
        img, refs = value[0], 3  # the tuple, `img`, getrefcount's argument
    else:
        return
    spare = _SPARE.setdefault(img.size, [])
    if (img.mode == "RGB" and len(spare) < SPARE_CANVASES and sys.getrefcount(img) == refs
            and sys.getrefcount(img.im) == 2):  # its pixel memory is not held by a Draw or an accessor
        spare.append(img)


def _draw(img: Image.Image, ops, size: tuple[int, int], clip: tuple[int, int] | None = None,
          ground: str | None = None) -> None:
    """Paint `ops` in order onto `img` (already filled with `ground`, if given). With `clip` =
    pixel rows [top, bottom), only those rows are meant to be right: plain rectangles are cut to
    them (exact: Pillow's rounding of a box edge is monotonic and keeps integers), every other op
    is drawn whole at its usual place, so each pixel in the clip gets exactly the paint
    operations a full render would give it.

    Labels and small rounded shapes on a solid colour are pasted as opaque tiles, drawn once
    onto that colour (`_tile`: the same pixels; pasting a label's tile is ~25× cheaper than
    blending it through its mask). "On a solid colour": the last op drawn so far whose pixels
    can reach the op's box is a solid fill covering the whole box (`painted` keeps, per op, a box
    holding every pixel it may touch and one inside which every pixel has its fill colour)."""
    W, H = size
    sx, sy = W / CANVAS_W, H / CANVAS_H
    d = ImageDraw.Draw(img)
    painted: list[tuple[int, int, int, int, tuple | None, str | None]] = []
    if ground is not None:
        painted.append((0, 0, W, H, (0, 0, W, H), ground))
    for op in ops:
        kind = op[0]
        if kind == "rect":
            _, x1, y1, x2, y2, fill, radius, outline, *rest = op
            box = (x1 * sx, y1 * sy, max(x1 * sx, x2 * sx - 1), max(y1 * sy, y2 * sy - 1))
            if clip is not None and not radius and not outline:
                top, bottom = max(box[1], clip[0]), min(box[3], clip[1] - 1)
                if top > bottom:
                    continue
                box = (box[0], top, box[2], bottom)
            width = round((rest[0] if rest else 1) * sx) if outline else 0
            reach = (math.floor(box[0]) - 1, math.floor(box[1]) - 1, math.ceil(box[2]) + 2, math.ceil(box[3]) + 2)
            if radius:
                ox, oy, ex, ey = reach
                under = _ground(painted, *reach) if (ex - ox) * (ey - oy) <= MAX_SHAPE_TILE else None
                if under is None:
                    d.rounded_rectangle(box, radius * sx, fill=fill, outline=outline, width=width)
                else:  # drawn once onto a tile of its ground colour, at the same offset within a pixel
                    key = ("rounded", box[0] - ox, box[1] - oy, box[2] - ox, box[3] - oy, radius * sx, fill, outline,
                           width, under)
                    img.paste(_tile(key, (ex - ox, ey - oy)), (ox, oy))
            else:
                d.rectangle(box, fill=fill, outline=outline, width=width)
            inner = None
            if fill:  # fully filled: away from the edges by the outline, and from the rounded corners
                mx, my = max(width, math.ceil(radius * sx)) + 1, width + 1
                inner = (math.ceil(box[0]) + mx, math.ceil(box[1]) + my, math.floor(box[2]) - mx + 1,
                         math.floor(box[3]) - my + 1)
            painted.append((*reach, inner, fill))
        elif kind == "text":
            _, x, y, s, px, bold, color, anchor = op
            px = max(6, round(px * sx))
            mask, dx, dy = _text_mask(s, px, bold, anchor)
            x0, y0 = round(x * sx) + dx, round(y * sy) + dy
            x1, y1 = x0 + mask.size[0], y0 + mask.size[1]
            under = _ground(painted, x0, y0, x1, y1)
            if under is None:
                img.paste(_rgb(color), (x0, y0), mask)
            else:
                img.paste(_tile(("text", s, px, bold, anchor, color, under), mask.size), (x0, y0))
            painted.append((x0, y0, x1, y1, None, None))
        elif kind == "line":
            _, x1, y1, x2, y2, color, width = op
            w = max(1, round(width * sx))
            d.line((x1 * sx, y1 * sy, x2 * sx, y2 * sy), fill=color, width=w)
            painted.append((math.floor(min(x1, x2) * sx) - w - 2, math.floor(min(y1, y2) * sy) - w - 2,
                            math.ceil(max(x1, x2) * sx) + w + 2, math.ceil(max(y1, y2) * sy) + w + 2, None, None))
        elif kind == "ellipse":
            _, x1, y1, x2, y2, fill, outline, width = op
            d.ellipse((x1 * sx, y1 * sy, x2 * sx, y2 * sy), fill=fill, outline=outline,
                      width=max(1, round(width * sx)) if outline else 0)
            painted.append((math.floor(x1 * sx) - 2, math.floor(y1 * sy) - 2, math.ceil(x2 * sx) + 2,
                            math.ceil(y2 * sy) + 2, None, None))


def _ground(painted, x0: int, y0: int, x1: int, y1: int) -> str | None:
    """The one colour every pixel of [x0, x1) × [y0, y1) has after the ops in `painted`, if so:
    the last op reaching the box is a solid fill covering all of it."""
    if not TILES:
        return None
    for bx0, by0, bx1, by1, inner, fill in reversed(painted):
        if bx0 < x1 and x0 < bx1 and by0 < y1 and y0 < by1:
            if inner is not None and inner[0] <= x0 and inner[1] <= y0 and x1 <= inner[2] and y1 <= inner[3]:
                return fill
            return None
    return None


TILES = True  # paste cached tiles for labels and small rounded shapes on a solid colour (tests turn it off)
MAX_SHAPE_TILE = 160 * 160  # pixels: bigger shapes (cards, dialogs) are drawn, a tile would only be copied


def _tile(key: tuple, size: tuple[int, int]) -> Image.Image:
    """An op drawn onto a tile of `size` pixels of its ground colour (the key's last field), as
    `_draw` would paint it there (cached: labels and buttons recur on many screens)."""
    tile = _TILES.get(key)
    if tile is None:
        tile = Image.new("RGB", size, key[-1])
        if key[0] == "text":
            _, s, px, bold, anchor, color, _ = key
            tile.paste(_rgb(color), (0, 0), _text_mask(s, px, bold, anchor)[0])
        else:
            _, x0, y0, x1, y1, radius, fill, outline, width, _ = key
            ImageDraw.Draw(tile).rounded_rectangle((x0, y0, x1, y1), radius, fill=fill, outline=outline, width=width)
        _TILES.put(key, tile)
    return tile


# --- text ---------------------------------------------------------------------------------
#
# Text is composed from cached glyphs rather than laid out by Pillow per string: a character's
# coverage bitmap is rendered once per (character, size, weight), and a label is its glyphs
# placed at their rounded pen positions on a common baseline (the maximum where neighbours
# overlap). No kerning or ligatures: a label looks like Pillow's own rendering of it to within
# a pixel per glyph, at ~1/10 of the cost for a new label. Anchors are Pillow's: horizontally
# l/m/r on the advance width, vertically a (ascender), m (middle of ascender and descender),
# s (baseline), d (descender), t/b (top/bottom of the ink).

@lru_cache(maxsize=4096)
def _char(ch: str, px: int, bold: bool) -> tuple[np.ndarray, int, int]:
    """A character's coverage bitmap and its offset from the pen position on the baseline."""
    core, (x0, y0) = _bitmap_font(px, bold).getmask2(ch, "L", anchor="ls")
    ink = np.asarray(Image.Image()._new(core)) if core.size[0] and core.size[1] else np.zeros((0, 0), np.uint8)
    return ink, x0, y0


@lru_cache(maxsize=8192)
def _advance(ch: str, px: int, bold: bool) -> float:
    return font(px, bold).getlength(ch)  # unhinted (the basic layout's advances are whole pixels)


@lru_cache(maxsize=256)
def _bitmap_font(px: int, bold: bool) -> ImageFont.FreeTypeFont:
    """`font` without text shaping: the same glyph bitmaps, rendered 2.5× faster."""
    path = _font_path(bold)
    return ImageFont.truetype(path, px, layout_engine=ImageFont.Layout.BASIC) if path else font(px, bold)


def text_width(s: str, px: int, bold: bool = False) -> float:
    """Advance width of `s` as drawn (pixels at font size `px`)."""
    return sum(_advance(ch, px, bold) for ch in s)


@lru_cache(maxsize=64)
def _metrics(px: int, bold: bool) -> tuple[int, int]:
    return font(px, bold).getmetrics()  # (ascent, descent), both positive


@lru_cache(maxsize=8192)
def _text_mask(s: str, px: int, bold: bool, anchor: str) -> tuple[Image.Image, int, int]:
    """Coverage mask of a label plus the offset of its top-left corner from the anchor point.
    Cached: screens repeat the same labels, and pasting a mask is all drawing them costs."""
    placed, pen = [], 0.0
    for ch in s:
        ink, x0, y0 = _char(ch, px, bold)
        if ink.size:
            placed.append((_round_half_up(pen) + x0, y0, ink))
        pen += _advance(ch, px, bold)
    width = _round_half_up(pen)
    if not placed:  # blank: an empty mask on the baseline
        placed = [(0, 0, np.zeros((1, max(1, width)), np.uint8))]
    left = min(0, min(x for x, _, _ in placed))
    right = max(width, max(x + ink.shape[1] for x, _, ink in placed))
    top = min(y for _, y, _ in placed)
    bottom = max(y + ink.shape[0] for _, y, ink in placed)
    mask = np.zeros((bottom - top, right - left), np.uint8)
    for x, y, ink in placed:
        region = mask[y - top:y - top + ink.shape[0], x - left:x - left + ink.shape[1]]
        np.maximum(region, ink, out=region)
    ascent, descent = _metrics(px, bold)
    baseline = {"a": ascent, "m": (ascent - descent) / 2, "s": 0, "d": -descent, "t": -top, "b": -bottom}[anchor[1]]
    shift = {"l": 0, "m": pen / 2, "r": pen}[anchor[0]]
    return Image.fromarray(mask, "L"), left + _round_half_up(-shift), top + _round_half_up(baseline)


def _round_half_up(v: float) -> int:
    return math.floor(v + 0.5)


@lru_cache(maxsize=64)
def _rgb(color: str) -> tuple[int, int, int]:
    return ImageColor.getrgb(color)[:3]


_DIM = 110  # scrim opacity (of 255)


# --- caches ---------------------------------------------------------------------------------
#
# Screens are cached at two grains, process-wide and shared by every phone:
#   * whole frames: (size, draw ops) → screenshot image / PNG bytes. Repeated screens (the
#     launcher, an app's home, a task's start screen after every reset or fork) cost a lookup.
#   * horizontal bands of `band_height(H)` pixel rows: (size, band, the ops touching the band)
#     → the band's pixels, and (palette, that key) → the band's compressed PNG rows. A screen
#     that differs from a cached one in a few elements (a switch toggled, a character typed,
#     a dialog's buttons) re-rasterizes and re-compresses only the bands those elements touch;
#     status bar, app bar, navigation bar and unchanged rows are reused.
# Everything is keyed by content, never by phone, so a hit is right by construction; the
# tests compare cached output with `rasterize` pixel for pixel over random action sequences.

class _LRU(OrderedDict):
    """LRU map bounded by a byte budget (`size_of(value)` bytes per entry)."""

    def __init__(self, budget: int, size_of, on_evict=None):
        super().__init__()
        self.budget, self.size_of, self.used, self.on_evict = budget, size_of, 0, on_evict

    def get(self, key, default=None):
        try:
            self.move_to_end(key)
        except KeyError:
            return default
        return self[key]

    def put(self, key, value) -> None:
        if key in self or self.budget <= 0:
            return
        self[key] = value
        self.used += self.size_of(value)
        while self.used > self.budget:
            _, old = self.popitem(last=False)
            self.used -= self.size_of(old)
            if self.on_evict is not None:
                self.on_evict(old)

    def discard(self, key) -> None:
        if key in self:
            self.used -= self.size_of(self.pop(key))

    def clear(self) -> None:
        super().clear()
        self.used = 0


def _entry_bytes(v) -> int:
    if isinstance(v, Image.Image):  # Pillow stores RGB as 4 bytes per pixel
        return v.size[0] * v.size[1] * 4 + 200
    if isinstance(v, bytes):  # a whole PNG
        return len(v) + 100
    if isinstance(v[0], Image.Image):  # (whole screen, top, bottom): a band not cut out yet (`_band_get`)
        return v[0].size[0] * (v[2] - v[1]) * 4 + 200
    return len(v[0]) + 120  # (IDAT chunk, adler32, raw length) of a band


class _Kind:
    """One kind of entry in a shared pool: kinds in a pool compete for its byte budget."""

    __slots__ = ("tag", "pool")

    def __init__(self, tag: str, pool: _LRU):
        self.tag, self.pool = tag, pool

    def get(self, key):
        return self.pool.get((self.tag, key))

    def put(self, key, value) -> None:
        self.pool.put((self.tag, key), value)

    def replace(self, key, value) -> None:  # same byte size: order and count unchanged
        OrderedDict.__setitem__(self.pool, (self.tag, key), value)

    def __contains__(self, key) -> bool:
        return (self.tag, key) in self.pool

    def clear(self) -> None:
        for k in [k for k in self.pool if k[0] == self.tag]:
            self.pool.discard(k)


# Two pools: pixels (screenshots, band pixels) and PNG bytes (whole files, compressed bands).
# PNG entries are ~200× smaller than a screenshot, so sharing one LRU with pixels would let a
# few new screenshots evict hundreds of PNGs; each pool is a cap, not a reservation.
DEFAULT_CACHE_MB = float(os.environ.get("PHONESIM_RENDER_CACHE_MB", 320))  # per process, both pools
PNG_SHARE = 0.2
_PIXELS = _LRU(int(DEFAULT_CACHE_MB * (1 - PNG_SHARE) * 2**20), _entry_bytes, _recycle)
_PNG_POOL = _LRU(int(DEFAULT_CACHE_MB * PNG_SHARE * 2**20), _entry_bytes)
_IMAGES = _Kind("image", _PIXELS)  # whole screenshots
_BANDS = _Kind("band", _PIXELS)  # band pixels
_PNG_BANDS = _Kind("png band", _PNG_POOL)  # (IDAT chunk, adler32, raw length) per (palette, band)
_PNGS = _Kind("png", _PNG_POOL)  # whole PNGs
_LAYOUTS = _LRU(256, lambda v: 1)  # frame key → band layout (entry count)
_TILES = _LRU(64 * 2**20, _entry_bytes)  # labels and small shapes on a solid colour (`_tile`)
STATS: dict[str, int] = {}


def _count(name: str, n: int = 1) -> None:
    STATS[name] = STATS.get(name, 0) + n


def _lookup(cache, key, stat: str):
    """A cached value or None, counted as `<stat>_hit` / `<stat>_miss`."""
    value = cache.get(key)
    _count(f"{stat}_hit" if value is not None else f"{stat}_miss")
    return value


def set_cache_budget(mb: float) -> None:
    """Resize the render cache of this process (megabytes; 0 disables caching) and empty it."""
    _PIXELS.budget = int(mb * (1 - PNG_SHARE) * 2**20)
    _PNG_POOL.budget = int(mb * PNG_SHARE * 2**20)
    clear_caches()


def clear_caches(text: bool = True) -> None:
    """Forget rendered screens and bands, and (`text`) text masks and fitted labels too
    (benchmarks time cold renders)."""
    _PIXELS.clear()
    _PNG_POOL.clear()
    _LAYOUTS.clear()
    if text:
        _TILES.clear()
        for fn in (_text_mask, _fit, _wrap, _char, _advance):
            fn.cache_clear()


def cache_stats(reset: bool = False) -> dict[str, float]:
    """Hit counts and rates of the frame and band caches since the last reset, plus bytes held."""
    out: dict[str, float] = dict(STATS)
    for name in ("frame_png", "frame_image", "band_png", "band_pixels"):
        hit, miss = STATS.get(f"{name}_hit", 0), STATS.get(f"{name}_miss", 0)
        out[f"{name}_hit_rate"] = hit / (hit + miss) if hit + miss else float("nan")
    out["cache_mb"] = (_PIXELS.used + _PNG_POOL.used) / 2**20
    if reset:
        STATS.clear()
    return out


BANDS_PER_SCREEN = int(os.environ.get("PHONESIM_RENDER_BANDS", 50))


def band_height(height: int) -> int:
    """Pixel rows per cached band: 1/`BANDS_PER_SCREEN` of the screen (48 rows at 2400)."""
    return max(8, height // BANDS_PER_SCREEN)


def _frame_ops(frame: Frame, dark: bool) -> tuple[Op, ...]:
    cached = frame._ops
    if cached is not None and cached[0] == dark:
        return cached[1]
    ops = tuple(frame_ops(frame, DARK if dark else LIGHT))
    frame._ops = (dark, ops)
    return ops


def _op_rows(op: Op, sx: float, sy: float) -> tuple[int, int]:
    """Pixel rows [top, bottom) an op can touch (generous: anti-aliasing and stroke widths)."""
    kind = op[0]
    if kind == "text":
        _, x, y, s, px, bold, color, anchor = op
        mask, dx, dy = _text_mask(s, max(6, round(px * sx)), bold, anchor)
        top = round(y * sy) + dy
        return top - 1, top + mask.size[1] + 1
    if kind == "line":
        w = max(1, round(op[6] * sx))
        lo, hi = (op[2], op[4]) if op[2] <= op[4] else (op[4], op[2])
        return math.floor(lo * sy) - w - 2, math.ceil(hi * sy) + w + 2
    return math.floor(op[2] * sy) - 2, math.ceil(op[4] * sy) + 2  # rect, ellipse: (kind, x1, y1, x2, y2, ...)


class _Bands:
    """How one screen's ops fall into bands: per band the ops touching it and its cache key."""

    __slots__ = ("size", "height", "members", "keys")

    def __init__(self, ops: tuple[Op, ...], size: tuple[int, int]):
        W, H = size
        sx, sy = W / CANVAS_W, H / CANVAS_H
        bh = band_height(H)
        n = -(-H // bh)
        members: list[list[int]] = [[0] for _ in range(n)]  # the background fills every band
        for i in range(1, len(ops)):
            top, bottom = _op_rows(ops[i], sx, sy)
            for b in range(max(0, top // bh), min(n - 1, (bottom - 1) // bh) + 1):
                members[b].append(i)
        self.size, self.height, self.members = size, bh, members
        self.keys = [(size, b, tuple([ops[i] for i in m])) for b, m in enumerate(members)]


def _layout(key: tuple) -> _Bands:
    lay = _LAYOUTS.get(key)
    if lay is None:
        lay = _Bands(key[1], key[0])
        _LAYOUTS.put(key, lay)
    return lay


_SCRATCH: dict[tuple[int, int], Image.Image] = {}
_LOCK = threading.Lock()


def _band_get(key) -> Image.Image | None:
    """A cached band's pixels. Bands of a screen rasterized whole are stored as references into
    that image and cut out on first use (most are never reused; cutting all costs ~1.5 ms)."""
    v = _BANDS.get(key)
    if type(v) is tuple:
        img, top, bottom = v
        v = img.crop((0, top, img.size[0], bottom))
        _BANDS.replace(key, v)
    return v


def _put_band_refs(lay: _Bands, img: Image.Image) -> None:
    H = lay.size[1]
    for b, k in enumerate(lay.keys):
        _BANDS.put(k, (img, b * lay.height, min(H, (b + 1) * lay.height)))


WHOLE_FRACTION = 0.6  # re-rasterize the whole screen when at least this share of its bands is new


def _whole(ops: tuple[Op, ...], lay: _Bands, wanted: int) -> Image.Image | None:
    """The whole screen rasterized directly when most of the `wanted` bands are not cached: cutting
    out, re-assembling and quantizing band by band costs more than redrawing the cached ones."""
    new = sum(1 for k in lay.keys if k not in _BANDS)
    if new < WHOLE_FRACTION * len(lay.keys) or wanted < WHOLE_FRACTION * len(lay.keys):
        return None
    _count("band_pixels_miss", new)
    _count("band_pixels_hit", len(lay.keys) - new)
    _count("whole_rasters")
    img = rasterize(ops, lay.size)
    _put_band_refs(lay, img)
    return img


def _encode_missing(ops: tuple[Op, ...], lay: _Bands, missing: list[int], pal: Image.Image) -> list:
    """PNG parts of the `missing` bands. Bands whose pixels are cached are stacked and quantized
    in one call; the others are rasterized per run of adjacent bands on a reusable full-size
    scratch canvas (drawing only the ops touching the run), cut out once per run and quantized
    from that; their pixels are cached as references into the run's image."""
    W, H = lay.size
    bh = lay.height
    out: dict[int, tuple] = {}
    cached: dict[int, Image.Image] = {}
    todo: list[int] = []
    for b in missing:
        img = _band_get(lay.keys[b])
        if img is None:
            todo.append(b)
        else:
            cached[b] = img
    _count("band_pixels_hit", len(cached))
    _count("band_pixels_miss", len(todo))
    if cached:
        spans, y = [], 0
        for img in cached.values():
            spans.append((y, y + img.size[1]))
            y += img.size[1]
        out.update(zip(cached, _encode_rows(_quantize(_stack(list(cached.values())), pal), spans)))
    runs: list[list[int]] = []
    for b in todo:
        if runs and runs[-1][-1] == b - 1:
            runs[-1].append(b)
        else:
            runs.append([b])
    for run in runs:
        top, bottom = run[0] * bh, min(H, (run[-1] + 1) * bh)
        idx = sorted(set().union(*(lay.members[b] for b in run)))
        with _LOCK:
            scratch = _SCRATCH.get(lay.size)
            if scratch is None:
                scratch = _SCRATCH[lay.size] = Image.new("RGB", lay.size)
            _draw(scratch, [ops[i] for i in idx], lay.size, (top, bottom))
            img = scratch.crop((0, top, W, bottom))
        spans = [(b * bh - top, min(H, (b + 1) * bh) - top) for b in run]
        for b, span in zip(run, spans):
            _BANDS.put(lay.keys[b], (img, *span))
        out.update(zip(run, _encode_rows(_quantize(img, pal), spans)))
    return [out[b] for b in missing]


def render_frame(frame: Frame, size: tuple[int, int], dark: bool = False) -> Image.Image:
    """The screenshot of `frame` (shared between phones: copy before drawing on it)."""
    key = (size, _frame_ops(frame, dark))
    img = _lookup(_IMAGES, key, "frame_image")
    if img is not None:
        return img
    # Always drawn whole: a new 1080×2400 image costs its allocation either way, and cutting out
    # and pasting 50 cached bands (~5 ms) is not cheaper than drawing them (measured). The PNG of
    # this screen, if asked for, is made from this image.
    img = rasterize(key[1], size)
    _count("whole_rasters")
    _IMAGES.put(key, img)
    return img


def ui_palette(ops: list[Op] | tuple[Op, ...]) -> Image.Image:
    """A fixed palette for one screen: every solid colour its ops use (under a dialog's scrim,
    dimmed ones) plus anti-aliasing ramps from each text/line colour to each fill colour.
    Screens use a few dozen colours, so ≤ 256 entries reproduce them almost exactly."""
    return _palette(*_palette_key(ops))[0]


def _palette_key(ops) -> tuple[tuple, tuple]:
    fills, inks = [_rgb(ops[0][5])], []
    for op in ops[1:]:
        kind = op[0]
        if kind in ("rect", "ellipse"):
            fill, outline = op[5], op[7 if kind == "rect" else 6]
            if fill:
                fills.append(_rgb(fill))
            if outline:
                inks.append(_rgb(outline))
        elif kind == "text":
            inks.append(_rgb(op[6]))
        elif kind == "line":
            inks.append(_rgb(op[5]))
    return tuple(sorted(set(fills))), tuple(sorted(set(inks)))


@lru_cache(maxsize=256)
def _palette(fills: tuple, inks: tuple) -> tuple[Image.Image, bytes, int]:
    """(palette image for `quantize`, its PLTE chunk, a small id for cache keys)."""
    solids = list(dict.fromkeys(fills + inks))
    pairs = [(i, f) for i in inks for f in fills if i != f]
    steps = max(1, min(7, (256 - len(solids)) // max(1, len(pairs))))
    ramps = [tuple(round(f[k] + (i[k] - f[k]) * s / (steps + 1)) for k in range(3))
             for i, f in pairs for s in range(1, steps + 1)]
    # Pillow maps a pixel to the entry nearest its 6-bit cell corner (each channel & 0xFC), so a
    # shade nearer that corner than the solid colour itself would capture the solid's pixels.
    if ramps:
        sol = np.array(solids)
        corner = sol & 0xFC
        own = ((sol - corner) ** 2).sum(1)
        near = ((np.array(ramps)[:, None, :] - corner[None]) ** 2).sum(2)
        ramps = [r for r, ok in zip(ramps, (near > own[None]).all(1)) if ok]
    colours = list(dict.fromkeys(solids + ramps))[:256]
    entries = [v for c in colours for v in c] + [0, 0, 0] * (256 - len(colours))
    pal = Image.new("P", (1, 1))
    pal.putpalette(entries)
    global _PALETTE_IDS
    _PALETTE_IDS += 1
    return pal, _chunk(b"PLTE", bytes(entries)), _PALETTE_IDS


_PALETTE_IDS = 0


def encode_png(img: Image.Image, ops: list[Op] | None = None) -> bytes:
    """PNG bytes of a whole screenshot by Pillow (the reference encoder; `render_png` writes
    the same pixels band by band from its caches). With the screen's `ops`, pixels are mapped to
    the screen's fixed `ui_palette` (8-bit, no dithering; mean error 0.03 levels, text edges
    ≤ 23) and deflated with zlib level 1, run-length strategy; without, plain RGB at level 1.

    Contacts list (`phonesim.bench` reports both per run), CPU ms per encode, same run:
      1080×2400: RGB 43 ms / 112 KB → palette 12 ms / 52 KB (quantize 4 + deflate 8)
       540×1200: RGB 12 ms /  52 KB → palette  3 ms / 22 KB
    Options measured and rejected (wall ms on the loaded machine, 1080×2400): RGB level 6
    120 ms / 100 KB; adaptive octree quantize 65 ms / 56 KB (the quantizer dominates); median
    cut 350 ms; Huffman-only 22 ms CPU / 370 KB; levels 3–6 with RLE give the same bytes."""
    if ops is not None:
        img = img.quantize(palette=ui_palette(ops), dither=Image.Dither.NONE)
    buf = io.BytesIO()
    img.save(buf, format="PNG", compress_level=1, compress_type=zlib.Z_RLE)
    return buf.getvalue()


# --- band-wise PNG --------------------------------------------------------------------------
#
# The image data of a PNG is one zlib stream, which may be split over any number of IDAT
# chunks. Each band's rows (filter byte + palette indices) are deflated on their own and
# ended with a full flush — a byte-aligned, non-final block boundary — so compressed bands
# concatenate into one valid deflate stream: 78 01 | band 0 | band 1 | … | 03 00 (an empty
# final block) | adler32 of all raw rows. Each band is its own IDAT chunk, so its CRC is cached
# with it, and the stream's adler32 is combined from per-band checksums (zlib's
# adler32_combine). The first row of a band uses no filter, the others "Up" (byte minus the
# byte above), which turns repeated rows into zero runs for the run-length strategy and keeps
# a band's bytes independent of its neighbours.

_PNG_SIG = b"\x89PNG\r\n\x1a\n"
_ADLER_BASE = 65521


def _chunk(tag: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(data, zlib.crc32(tag)))


_ZLIB_HEAD = _chunk(b"IDAT", b"\x78\x01")
_IEND = _chunk(b"IEND", b"")


def adler32_combine(adler1: int, adler2: int, len2: int) -> int:
    """adler32(a + b) from adler32(a), adler32(b) and len(b) (zlib's adler32_combine)."""
    rem = len2 % _ADLER_BASE
    s1 = ((adler1 & 0xFFFF) + (adler2 & 0xFFFF) - 1) % _ADLER_BASE
    s2 = (rem * (adler1 & 0xFFFF) + (adler1 >> 16) + (adler2 >> 16) - rem) % _ADLER_BASE
    return s1 | (s2 << 16)


def _quantize(img: Image.Image, pal: Image.Image) -> np.ndarray:
    """Palette indices, one call per image (Pillow rebuilds its colour lookup per call)."""
    q = img.quantize(palette=pal, dither=Image.Dither.NONE)
    return np.frombuffer(q.tobytes(), np.uint8).reshape(img.size[1], img.size[0])


def _stack(imgs: list[Image.Image]) -> Image.Image:
    if len(imgs) == 1:
        return imgs[0]
    stack = Image.new("RGB", (imgs[0].size[0], sum(im.size[1] for im in imgs)), None)
    y = 0
    for im in imgs:
        stack.paste(im, (0, y))
        y += im.size[1]
    return stack


def _encode_rows(q: np.ndarray, spans: list[tuple[int, int]]) -> list[tuple[bytes, int, int]]:
    """Per span of rows of `q` (one band each): (IDAT chunk of its deflated rows, adler32 of its
    raw rows, raw length)."""
    h, w = q.shape
    rows = np.empty((h, w + 1), np.uint8)
    rows[:, 0] = 2  # "Up"
    np.subtract(q[1:], q[:-1], out=rows[1:, 1:])
    starts = [a for a, _ in spans]
    rows[starts, 0] = 0  # a band's first row: no filter, so bands do not depend on each other
    rows[starts, 1:] = q[starts]
    raw = memoryview(rows.reshape(-1))
    out = []
    for a, b in spans:
        band = raw[a * (w + 1):b * (w + 1)]
        z = zlib.compressobj(1, zlib.DEFLATED, -15, 8, zlib.Z_RLE)
        data = z.compress(band) + z.flush(zlib.Z_FULL_FLUSH)
        out.append((_chunk(b"IDAT", data), zlib.adler32(band), len(band)))
    return out


def render_png(frame: Frame, size: tuple[int, int], dark: bool = False) -> bytes:
    """The screenshot of `frame` as an 8-bit palette PNG (same pixels as `encode_png` of it)."""
    key = (size, _frame_ops(frame, dark))
    png = _lookup(_PNGS, key, "frame_png")
    if png is not None:
        return png
    ops = key[1]
    lay = _layout(key)
    pal, plte, pid = _palette(*_palette_key(ops))
    parts = [None] * len(lay.keys)
    missing = []
    for b, k in enumerate(lay.keys):
        parts[b] = _PNG_BANDS.get((pid, k))
        if parts[b] is None:
            missing.append(b)
    _count("band_png_hit", len(parts) - len(missing))
    _count("band_png_miss", len(missing))
    whole = (_IMAGES.get(key) or _whole(ops, lay, len(missing))) if missing else None
    H, bh = size[1], lay.height
    if whole is not None:  # quantize the whole screen, encode the missing bands
        encoded = _encode_rows(_quantize(whole, pal), [(b * bh, min(H, (b + 1) * bh)) for b in missing])
    elif missing:  # quantize and encode only the missing bands
        encoded = _encode_missing(ops, lay, missing, pal)
    if missing:
        for b, part in zip(missing, encoded):
            parts[b] = part
            _PNG_BANDS.put((pid, lay.keys[b]), part)
    W, H = size
    adler = 1
    for _, a, n in parts:
        adler = adler32_combine(adler, a, n)
    png = b"".join([_PNG_SIG, _chunk(b"IHDR", struct.pack(">IIBBBBB", W, H, 8, 3, 0, 0, 0)), plte, _ZLIB_HEAD,
                    *(p[0] for p in parts), _chunk(b"IDAT", b"\x03\x00" + struct.pack(">I", adler)), _IEND])
    _PNGS.put(key, png)
    return png
