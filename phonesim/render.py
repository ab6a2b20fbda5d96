"""Pillow renderer: a `Frame` becomes a list of draw ops (logical units), then pixels.

Identical screens (same ops, size, theme) are rendered once and shared across phones via
small LRU caches of images and PNG bytes, so thousands of phones showing common screens
cost one rasterization each. PNGs are 8-bit with a per-screen palette (`encode_png`).
"""

from __future__ import annotations

import io
import os
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
    f = font(px, bold)
    if f.getlength(text) <= max_w:
        return text
    while text and f.getlength(text + "…") > max_w:
        text = text[:-1]
    return text + "…"


@lru_cache(maxsize=2048)
def _wrap(text: str, px: int, max_w: float) -> tuple[str, ...]:
    f, lines, cur = font(px), [], ""
    for word in text.split():
        cand = f"{cur} {word}".strip()
        if f.getlength(cand) <= max_w or not cur:
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
    return ops


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
    ch = GLYPHS.get(name, name[:1].upper())
    ops.append(("text", x + w / 2, y + h / 2, ch, int(min(w, h) * 0.8), False, color, "mm"))


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
            cx = tx + (font(16).getlength(_fit(n.text, 16, False, w - 64)) if n.text else 0) + 1
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

def rasterize(ops: list[Op], size: tuple[int, int]) -> Image.Image:
    """Draw ops onto a new RGB image of `size` pixels (no caching; the benchmark baseline)."""
    W, H = size
    sx, sy = W / CANVAS_W, H / CANVAS_H
    img = Image.new("RGB", size, ops[0][5])
    d = ImageDraw.Draw(img)
    for op in ops[1:]:
        kind = op[0]
        if kind == "rect":
            _, x1, y1, x2, y2, fill, radius, outline, *rest = op
            box = (x1 * sx, y1 * sy, max(x1 * sx, x2 * sx - 1), max(y1 * sy, y2 * sy - 1))
            width = round((rest[0] if rest else 1) * sx) if outline else 0
            if radius:
                d.rounded_rectangle(box, radius * sx, fill=fill, outline=outline, width=width)
            else:
                d.rectangle(box, fill=fill, outline=outline, width=width)
        elif kind == "text":
            _, x, y, s, px, bold, color, anchor = op
            mask, dx, dy = _text_mask(s, max(6, round(px * sx)), bold, anchor)
            img.paste(_rgb(color), (round(x * sx) + dx, round(y * sy) + dy), mask)
        elif kind == "line":
            _, x1, y1, x2, y2, color, width = op
            d.line((x1 * sx, y1 * sy, x2 * sx, y2 * sy), fill=color, width=max(1, round(width * sx)))
        elif kind == "ellipse":
            _, x1, y1, x2, y2, fill, outline, width = op
            d.ellipse((x1 * sx, y1 * sy, x2 * sx, y2 * sy), fill=fill, outline=outline,
                      width=max(1, round(width * sx)) if outline else 0)
        elif kind == "dim":
            _, x1, y1, x2, y2 = op
            box = (round(x1 * sx), round(y1 * sy), round(x2 * sx), round(y2 * sy))
            img.paste((0, 0, 0), box, _dim_mask(box[2] - box[0], box[3] - box[1]))
            d = ImageDraw.Draw(img)
    return img


@lru_cache(maxsize=8192)
def _text_mask(s: str, px: int, bold: bool, anchor: str) -> tuple[Image.Image, int, int]:
    """Antialiased coverage mask of a string plus its offset from the anchor point. Cached:
    screens repeat the same labels, and pasting a mask is far cheaper than shaping text."""
    f = font(px, bold)
    x0, y0, x1, y1 = f.getbbox(s, anchor=anchor)
    mask = Image.new("L", (max(1, x1 - x0), max(1, y1 - y0)), 0)
    ImageDraw.Draw(mask).text((-x0, -y0), s, fill=255, font=f, anchor=anchor)
    return mask, x0, y0


@lru_cache(maxsize=64)
def _rgb(color: str) -> tuple[int, int, int]:
    return ImageColor.getrgb(color)[:3]


_DIM = 110  # scrim opacity (of 255)


@lru_cache(maxsize=16)
def _dim_mask(w: int, h: int) -> Image.Image:
    return Image.new("L", (w, h), _DIM)


class _LRU(OrderedDict):
    def __init__(self, cap: int):
        super().__init__()
        self.cap = cap

    def get_or(self, key, make):
        if key in self:
            self.move_to_end(key)
            return self[key]
        value = make()
        self[key] = value
        if len(self) > self.cap:
            self.popitem(last=False)
        return value


_IMAGES = _LRU(12)  # full-resolution RGB images are ~7.8 MB each at 1080×2400
_PNGS = _LRU(512)


def clear_caches() -> None:
    """Forget rendered screens (benchmarks use it to time cold renders)."""
    _IMAGES.clear()
    _PNGS.clear()


def _key(frame: Frame, size: tuple[int, int], dark: bool) -> tuple:
    return (size, tuple(frame_ops(frame, DARK if dark else LIGHT)))


def render_frame(frame: Frame, size: tuple[int, int], dark: bool = False) -> Image.Image:
    """The screenshot of `frame` (shared; copy before drawing on it)."""
    key = _key(frame, size, dark)
    return _IMAGES.get_or(key, lambda: rasterize(list(key[1]), size))


def ui_palette(ops: list[Op]) -> Image.Image:
    """A fixed palette for one screen: every solid colour its ops use (dimmed copies too when a
    scrim is drawn) plus anti-aliasing ramps from each text/line colour to each fill colour.
    Screens use a few dozen colours, so ≤ 256 entries reproduce them almost exactly."""
    fills, inks = [_rgb(ops[0][5])], []
    dim = False
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
        else:
            dim = True
    return _palette(tuple(sorted(set(fills))), tuple(sorted(set(inks))), dim)


@lru_cache(maxsize=256)
def _palette(fills: tuple, inks: tuple, dim: bool) -> Image.Image:
    solids = list(dict.fromkeys(fills + inks))
    if dim:
        solids += [tuple(round(v * (1 - _DIM / 255)) for v in c) for c in solids]
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
    pal = Image.new("P", (1, 1))
    pal.putpalette([v for c in colours for v in c] + [0, 0, 0] * (256 - len(colours)))
    return pal


def encode_png(img: Image.Image, ops: list[Op] | None = None) -> bytes:
    """PNG bytes of a screenshot. With the screen's `ops`, pixels are mapped to the screen's
    fixed `ui_palette` (8-bit, no dithering; mean error 0.03 levels, text edges ≤ 23) and
    deflated with zlib level 1, run-length strategy; without, plain RGB at level 1.

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


def render_png(frame: Frame, size: tuple[int, int], dark: bool = False) -> bytes:
    key = _key(frame, size, dark)
    return _PNGS.get_or(key, lambda: encode_png(_IMAGES.get_or(key, lambda: rasterize(list(key[1]), size)),
                                                list(key[1])))
