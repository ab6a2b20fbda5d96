"""Pillow renderer: a `Frame` becomes draw ops (logical units), then pixels, then a PNG.

Rendering only happens when an observation's screenshot or PNG is read. One module per job:
`ops` (the draw-op types), `build` (frame → ops, one function per widget kind), `icons`,
`text` (fonts and label masks), `raster` (ops → pixels), `png` (palette and encoders),
`bands` and `cache` (process-wide caches by content: whole screens and horizontal bands, so a
screen seen before costs a lookup and a screen that differs in a few elements re-renders only
the bands they touch). Output is pixel-identical to `rasterize` of the whole screen; PNGs are
8-bit with a per-screen palette (`encode_png`, `render_png`).
"""

from phonesim.render.build import frame_ops
from phonesim.render.cache import (
    DEFAULT_CACHE_MB,
    cache_stats,
    clear_caches,
    render_frame,
    render_png,
    set_cache_budget,
)
from phonesim.render.icons import GLYPHS
from phonesim.render.ops import DrawOp, Ellipse, Line, Rect, Scrim, Text
from phonesim.render.png import adler32_combine, encode_png, ui_palette
from phonesim.render.raster import rasterize
from phonesim.render.text import font, text_width
from phonesim.render.theme import DARK, LIGHT, ColourScheme

__all__ = [
    "DARK", "DEFAULT_CACHE_MB", "GLYPHS", "LIGHT", "ColourScheme", "DrawOp", "Ellipse", "Line", "Rect", "Scrim",
    "Text", "adler32_combine", "cache_stats", "clear_caches", "encode_png", "font", "frame_ops", "rasterize",
    "render_frame", "render_png", "set_cache_budget", "text_width", "ui_palette",
]
