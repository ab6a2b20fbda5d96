"""Fonts, text measurement and label masks composed from cached glyph bitmaps.

Text is composed from cached glyphs rather than laid out by Pillow per string: a character's
coverage bitmap is rendered once per (character, size, weight), and a label is its glyphs
placed at their rounded pen positions on a common baseline (the maximum where neighbours
overlap). No kerning or ligatures: a label looks like Pillow's own rendering of it to within
a pixel per glyph, at ~1/10 of the cost for a new label. Anchors are Pillow's: horizontally
l/m/r on the advance width, vertically a (ascender), m (middle of ascender and descender),
s (baseline), d (descender), t/b (top/bottom of the ink).
"""

from __future__ import annotations

import math
import os
from functools import lru_cache

import numpy as np
from PIL import Image, ImageFont

FONT_DIRS = ("/usr/share/fonts/truetype/dejavu", "/usr/share/fonts/dejavu", "/usr/local/share/fonts")


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
    """The UI font at `px` pixels (DejaVu Sans, else Pillow's default)."""
    path = _font_path(bold)
    # Pillow ≥10.1 ships a scalable default font; DejaVu is preferred for glyph coverage.
    return ImageFont.truetype(path, px) if path else ImageFont.load_default(size=px)


@lru_cache(maxsize=256)
def _bitmap_font(px: int, bold: bool) -> ImageFont.FreeTypeFont:
    """`font` without text shaping: the same glyph bitmaps, rendered 2.5× faster."""
    path = _font_path(bold)
    return ImageFont.truetype(path, px, layout_engine=ImageFont.Layout.BASIC) if path else font(px, bold)


@lru_cache(maxsize=4096)
def _char(ch: str, px: int, bold: bool) -> tuple[np.ndarray, int, int]:
    """A character's coverage bitmap and its offset from the pen position on the baseline."""
    core, (x0, y0) = _bitmap_font(px, bold).getmask2(ch, "L", anchor="ls")
    ink = np.asarray(Image.Image()._new(core)) if core.size[0] and core.size[1] else np.zeros((0, 0), np.uint8)
    return ink, x0, y0


@lru_cache(maxsize=8192)
def _advance(ch: str, px: int, bold: bool) -> float:
    return font(px, bold).getlength(ch)  # unhinted (the basic layout's advances are whole pixels)


@lru_cache(maxsize=64)
def _metrics(px: int, bold: bool) -> tuple[int, int]:
    return font(px, bold).getmetrics()  # (ascent, descent), both positive


def text_width(s: str, px: int, bold: bool = False) -> float:
    """Advance width of `s` as drawn (pixels at font size `px`)."""
    return sum(_advance(ch, px, bold) for ch in s)


@lru_cache(maxsize=8192)
def fit(text: str, px: int, bold: bool, max_w: float) -> str:
    """`text`, or its longest prefix that fits `max_w` with an ellipsis."""
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
def wrap(text: str, px: int, max_w: float) -> tuple[str, ...]:
    """`text` broken into lines of whole words no wider than `max_w` (a longer word stays whole)."""
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


@lru_cache(maxsize=8192)
def text_mask(s: str, px: int, bold: bool, anchor: str) -> tuple[Image.Image, int, int]:
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


def clear_text_caches() -> None:
    """Forget glyphs, label masks and fitted or wrapped labels (benchmarks time cold renders)."""
    for cached in (text_mask, fit, wrap, _char, _advance):
        cached.cache_clear()
