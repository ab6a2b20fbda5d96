"""PNG encoding of screenshots: a fixed per-screen palette, Pillow's encoder as the reference,
and the band-wise writer the render cache assembles PNGs with.

The image data of a PNG is one zlib stream, which may be split over any number of IDAT
chunks. Each band's rows (filter byte + palette indices) are deflated on their own and
ended with a full flush — a byte-aligned, non-final block boundary — so compressed bands
concatenate into one valid deflate stream: 78 01 | band 0 | band 1 | … | 03 00 (an empty
final block) | adler32 of all raw rows. Each band is its own IDAT chunk, so its CRC is cached
with it, and the stream's adler32 is combined from per-band checksums (zlib's
adler32_combine). The first row of a band uses no filter, the others "Up" (byte minus the
byte above), which turns repeated rows into zero runs for the run-length strategy and keeps
a band's bytes independent of its neighbours.
"""

from __future__ import annotations

import io
import struct
import zlib
from functools import lru_cache
from typing import NamedTuple, Sequence

import numpy as np
from PIL import Image

from phonesim.render.ops import FILL_FIELDS, INK_FIELDS, DrawOp
from phonesim.render.theme import rgb

_PNG_SIG = b"\x89PNG\r\n\x1a\n"
_ADLER_BASE = 65521


class EncodedBand(NamedTuple):
    """A band of rows, compressed: its IDAT chunk, the adler32 of its raw rows and their length."""

    chunk: bytes
    adler: int
    raw_length: int


class Palette(NamedTuple):
    """A screen's palette: the image `quantize` maps to, its PLTE chunk, a small id for cache keys."""

    image: Image.Image
    chunk: bytes
    id: int


def ui_palette(ops: Sequence[DrawOp]) -> Image.Image:
    """A fixed palette for one screen: every solid colour its ops use (under a dialog's scrim,
    dimmed ones) plus anti-aliasing ramps from each text/line colour to each fill colour.
    Screens use a few dozen colours, so ≤ 256 entries reproduce them almost exactly."""
    return screen_palette(ops).image


def screen_palette(ops: Sequence[DrawOp]) -> Palette:
    """`ui_palette` with its PLTE chunk and id (shared by screens using the same colours)."""
    fills, inks = [rgb(ops[0].fill)], []
    for op in ops[1:]:
        kind = type(op)
        fills += [rgb(getattr(op, name)) for name in FILL_FIELDS.get(kind, ()) if getattr(op, name)]
        inks += [rgb(getattr(op, name)) for name in INK_FIELDS.get(kind, ()) if getattr(op, name)]
    return _palette(tuple(sorted(set(fills))), tuple(sorted(set(inks))))


_palette_ids = 0


@lru_cache(maxsize=256)
def _palette(fills: tuple, inks: tuple) -> Palette:
    global _palette_ids
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
    image = Image.new("P", (1, 1))
    image.putpalette(entries)
    _palette_ids += 1
    return Palette(image, _chunk(b"PLTE", bytes(entries)), _palette_ids)


def encode_png(img: Image.Image, ops: Sequence[DrawOp] | None = None) -> bytes:
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


def quantize(img: Image.Image, palette: Image.Image) -> np.ndarray:
    """Palette indices, one call per image (Pillow rebuilds its colour lookup per call)."""
    q = img.quantize(palette=palette, dither=Image.Dither.NONE)
    return np.frombuffer(q.tobytes(), np.uint8).reshape(img.size[1], img.size[0])


def stack(imgs: list[Image.Image]) -> Image.Image:
    """Images of the same width, one below the other."""
    if len(imgs) == 1:
        return imgs[0]
    out = Image.new("RGB", (imgs[0].size[0], sum(im.size[1] for im in imgs)), None)
    y = 0
    for im in imgs:
        out.paste(im, (0, y))
        y += im.size[1]
    return out


def encode_bands(indices: np.ndarray, spans: list[tuple[int, int]]) -> list[EncodedBand]:
    """Per span [top, bottom) of rows of the palette `indices` (one band each): the band deflated
    on its own (see module docstring)."""
    h, w = indices.shape
    rows = np.empty((h, w + 1), np.uint8)
    rows[:, 0] = 2  # "Up"
    np.subtract(indices[1:], indices[:-1], out=rows[1:, 1:])
    starts = [a for a, _ in spans]
    rows[starts, 0] = 0  # a band's first row: no filter, so bands do not depend on each other
    rows[starts, 1:] = indices[starts]
    raw = memoryview(rows.reshape(-1))
    out = []
    for a, b in spans:
        band = raw[a * (w + 1):b * (w + 1)]
        z = zlib.compressobj(1, zlib.DEFLATED, -15, 8, zlib.Z_RLE)
        data = z.compress(band) + z.flush(zlib.Z_FULL_FLUSH)
        out.append(EncodedBand(_chunk(b"IDAT", data), zlib.adler32(band), len(band)))
    return out


def assemble_png(size: tuple[int, int], palette: Palette, bands: Sequence[EncodedBand]) -> bytes:
    """An 8-bit palette PNG from its bands, top to bottom."""
    W, H = size
    adler = 1
    for band in bands:
        adler = adler32_combine(adler, band.adler, band.raw_length)
    return b"".join([_PNG_SIG, _chunk(b"IHDR", struct.pack(">IIBBBBB", W, H, 8, 3, 0, 0, 0)), palette.chunk,
                     _ZLIB_HEAD, *(band.chunk for band in bands),
                     _chunk(b"IDAT", b"\x03\x00" + struct.pack(">I", adler)), _IEND])
