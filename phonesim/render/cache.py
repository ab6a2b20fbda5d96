"""Screenshots and PNGs of frames, cached per process by content and shared by every phone.

Screens are cached at two grains:
  * whole frames: (size, draw ops) → screenshot image / PNG bytes. Repeated screens (the
    launcher, an app's home, a task's start screen after every reset or fork) cost a lookup.
  * horizontal bands of `band_height(H)` pixel rows: (size, band, the ops touching the band)
    → the band's pixels, and (palette, that key) → the band's compressed PNG rows. A screen
    that differs from a cached one in a few elements (a switch toggled, a character typed,
    a dialog's buttons) re-rasterizes and re-compresses only the bands those elements touch;
    status bar, app bar, navigation bar and unchanged rows are reused.
Everything is keyed by content, never by phone, so a hit is right by construction; the
tests compare cached output with `rasterize` pixel for pixel over random action sequences.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict

from PIL import Image

from phonesim.layout import Frame
from phonesim.render.bands import BandLayout
from phonesim.render.build import frame_ops
from phonesim.render.lru import ByteLRU, entry_bytes
from phonesim.render.ops import DrawOp
from phonesim.render.png import EncodedBand, Palette, assemble_png, encode_bands, quantize, screen_palette, stack
from phonesim.render.raster import TILE_CACHE, paint, rasterize, recycle_canvas
from phonesim.render.text import clear_text_caches
from phonesim.render.theme import DARK, LIGHT

FrameKey = tuple[tuple[int, int], tuple[DrawOp, ...]]  # (size, draw ops)


class _Kind:
    """One kind of entry in a shared pool: kinds in a pool compete for its byte budget."""

    __slots__ = ("tag", "pool")

    def __init__(self, tag: str, pool: ByteLRU):
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
_PIXELS = ByteLRU(int(DEFAULT_CACHE_MB * (1 - PNG_SHARE) * 2**20), entry_bytes, recycle_canvas)
_PNG_POOL = ByteLRU(int(DEFAULT_CACHE_MB * PNG_SHARE * 2**20), entry_bytes)
IMAGES = _Kind("image", _PIXELS)  # whole screenshots
BANDS = _Kind("band", _PIXELS)  # band pixels, or (screenshot, top, bottom) references into one
PNG_BANDS = _Kind("png band", _PNG_POOL)  # `EncodedBand` per (palette id, band key)
PNGS = _Kind("png", _PNG_POOL)  # whole PNGs
_LAYOUTS = ByteLRU(256, lambda v: 1)  # frame key → band layout (entry count)
STATS: dict[str, int] = {}


def _count(name: str, n: int = 1) -> None:
    STATS[name] = STATS.get(name, 0) + n


def _lookup(cache: _Kind, key, stat: str):
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
    """Forget rendered screens and bands, and (`text`) text masks, tiles and fitted labels too
    (benchmarks time cold renders)."""
    _PIXELS.clear()
    _PNG_POOL.clear()
    _LAYOUTS.clear()
    if text:
        TILE_CACHE.clear()
        clear_text_caches()


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


def _frame_key(frame: Frame, size: tuple[int, int], dark: bool) -> FrameKey:
    """(size, the frame's draw ops); the ops are built once per frame and kept on it."""
    cached = frame._ops
    if cached is None or cached[0] != dark:
        cached = frame._ops = (dark, tuple(frame_ops(frame, DARK if dark else LIGHT)))
    return size, cached[1]


def _layout(key: FrameKey) -> BandLayout:
    layout = _LAYOUTS.get(key)
    if layout is None:
        layout = BandLayout(key[1], key[0])
        _LAYOUTS.put(key, layout)
    return layout


def render_frame(frame: Frame, size: tuple[int, int], dark: bool = False) -> Image.Image:
    """The screenshot of `frame` (shared between phones: copy before drawing on it)."""
    key = _frame_key(frame, size, dark)
    img = _lookup(IMAGES, key, "frame_image")
    if img is not None:
        return img
    # Always drawn whole: a new 1080×2400 image costs its allocation either way, and cutting out
    # and pasting 50 cached bands (~5 ms) is not cheaper than drawing them (measured). The PNG of
    # this screen, if asked for, is made from this image.
    img = rasterize(key[1], size)
    _count("whole_rasters")
    IMAGES.put(key, img)
    return img


def render_png(frame: Frame, size: tuple[int, int], dark: bool = False) -> bytes:
    """The screenshot of `frame` as an 8-bit palette PNG (same pixels as `encode_png` of it)."""
    key = _frame_key(frame, size, dark)
    png = _lookup(PNGS, key, "frame_png")
    if png is not None:
        return png
    ops = key[1]
    layout = _layout(key)
    palette = screen_palette(ops)
    parts: list[EncodedBand | None] = [PNG_BANDS.get((palette.id, k)) for k in layout.keys]
    missing = [b for b, part in enumerate(parts) if part is None]
    _count("band_png_hit", len(parts) - len(missing))
    _count("band_png_miss", len(missing))
    if missing:
        whole = IMAGES.get(key) or _whole(ops, layout, len(missing))
        if whole is not None:  # quantize the whole screen, encode the missing bands
            encoded = encode_bands(quantize(whole, palette.image), [layout.span(b) for b in missing])
        else:  # quantize and encode only the missing bands
            encoded = _encode_missing(ops, layout, missing, palette)
        for b, part in zip(missing, encoded):
            parts[b] = part
            PNG_BANDS.put((palette.id, layout.keys[b]), part)
    png = assemble_png(size, palette, parts)
    PNGS.put(key, png)
    return png


WHOLE_FRACTION = 0.6  # re-rasterize the whole screen when at least this share of its bands is new


def _whole(ops: tuple[DrawOp, ...], layout: BandLayout, wanted: int) -> Image.Image | None:
    """The whole screen rasterized directly when most of the `wanted` bands are not cached: cutting
    out, re-assembling and quantizing band by band costs more than redrawing the cached ones."""
    new = sum(1 for k in layout.keys if k not in BANDS)
    if new < WHOLE_FRACTION * len(layout.keys) or wanted < WHOLE_FRACTION * len(layout.keys):
        return None
    _count("band_pixels_miss", new)
    _count("band_pixels_hit", len(layout.keys) - new)
    _count("whole_rasters")
    img = rasterize(ops, layout.size)
    for b, k in enumerate(layout.keys):
        BANDS.put(k, (img, *layout.span(b)))
    return img


def _band_pixels(key) -> Image.Image | None:
    """A cached band's pixels. Bands of a screen rasterized whole are stored as references into
    that image and cut out on first use (most are never reused; cutting all costs ~1.5 ms)."""
    value = BANDS.get(key)
    if type(value) is tuple:
        img, top, bottom = value
        value = img.crop((0, top, img.size[0], bottom))
        BANDS.replace(key, value)
    return value


_SCRATCH: dict[tuple[int, int], Image.Image] = {}
_SCRATCH_LOCK = threading.Lock()


def _encode_missing(ops: tuple[DrawOp, ...], layout: BandLayout, missing: list[int],
                    palette: Palette) -> list[EncodedBand]:
    """PNG parts of the `missing` bands. Bands whose pixels are cached are stacked and quantized
    in one call; the others are rasterized per run of adjacent bands on a reusable full-size
    scratch canvas (drawing only the ops touching the run), cut out once per run and quantized
    from that; their pixels are cached as references into the run's image."""
    W, H = layout.size
    out: dict[int, EncodedBand] = {}
    cached: dict[int, Image.Image] = {}
    todo: list[int] = []
    for b in missing:
        img = _band_pixels(layout.keys[b])
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
        out.update(zip(cached, encode_bands(quantize(stack(list(cached.values())), palette.image), spans)))
    runs: list[list[int]] = []
    for b in todo:
        if runs and runs[-1][-1] == b - 1:
            runs[-1].append(b)
        else:
            runs.append([b])
    for run in runs:
        top, bottom = layout.span(run[0])[0], layout.span(run[-1])[1]
        members = sorted(set().union(*(layout.members[b] for b in run)))
        with _SCRATCH_LOCK:
            scratch = _SCRATCH.get(layout.size)
            if scratch is None:
                scratch = _SCRATCH[layout.size] = Image.new("RGB", layout.size)
            paint(scratch, [ops[i] for i in members], layout.size, (top, bottom))
            img = scratch.crop((0, top, W, bottom))
        spans = [(b_top - top, b_bottom - top) for b_top, b_bottom in map(layout.span, run)]
        for b, span in zip(run, spans):
            BANDS.put(layout.keys[b], (img, *span))
        out.update(zip(run, encode_bands(quantize(img, palette.image), spans)))
    return [out[b] for b in missing]
