"""Draw ops become pixels: Pillow drawing at the target size, with labels and small rounded
shapes on a solid colour pasted as cached tiles, onto recycled canvases."""

from __future__ import annotations

import math
import sys
from typing import Sequence

from PIL import Image, ImageDraw

from phonesim.render.lru import ByteLRU, entry_bytes
from phonesim.render.ops import DrawOp, Ellipse, Line, Rect, Text
from phonesim.render.text import text_mask
from phonesim.render.theme import rgb
from phonesim.widgets import CANVAS_H, CANVAS_W

TILES = True  # paste cached tiles for labels and small rounded shapes on a solid colour (tests turn it off)
MAX_SHAPE_TILE = 160 * 160  # pixels: bigger shapes (cards, dialogs) are drawn, a tile would only be copied
TILE_CACHE = ByteLRU(64 * 2**20, entry_bytes)  # tile key → tile (`_tile`)


def rasterize(ops: Sequence[DrawOp], size: tuple[int, int]) -> Image.Image:
    """Draw ops onto a new RGB image of `size` pixels: the from-scratch reference rendering
    (no screen or band caches, only text and tile caches; the benchmark baseline). Cached
    screenshots are pixel-identical to it."""
    img = _canvas(size, ops[0].fill)
    paint(img, ops[1:], size, ground=ops[0].fill)
    return img


# A new 1080×2400 RGB image is 10 MB of fresh memory: allocating it costs page faults (measured
# 4–9 ms of CPU while the cache evicts older screens, against ~0.5 ms to fill an existing one).
# Screenshots the pixel cache evicts and nothing else references (no observation, band or
# caller holds them) are kept as spare canvases for the next new screen of that size.
SPARE_CANVASES = 2  # per size, held outside the cache budget
SPARE: dict[tuple[int, int], list[Image.Image]] = {}


def _canvas(size: tuple[int, int], colour: str) -> Image.Image:
    """An RGB image of `size` filled with `colour`: a recycled spare if there is one."""
    try:
        img = SPARE[size].pop()
    except (KeyError, IndexError):
        return Image.new("RGB", size, colour)
    img.paste(rgb(colour), (0, 0, *size))
    return img


def recycle_canvas(value) -> None:
    """Keep an evicted pixel-cache entry's image as a spare canvas if it is unreferenced: here
    only by `value` (a screenshot, or a (screenshot, top, bottom) band reference) and locals.
    Called by `ByteLRU.put` with its own local: the counts below assume exactly that caller."""
    if isinstance(value, Image.Image):
        img, refs = value, 4  # the evicting caller's local, `value`, `img`, getrefcount's argument
    elif type(value) is tuple and isinstance(value[0], Image.Image):
        img, refs = value[0], 3  # the tuple, `img`, getrefcount's argument
    else:
        return
    spare = SPARE.setdefault(img.size, [])
    if (img.mode == "RGB" and len(spare) < SPARE_CANVASES and sys.getrefcount(img) == refs
            and sys.getrefcount(img.im) == 2):  # its pixel memory is not held by a Draw or an accessor
        spare.append(img)


# Per op painted so far: a box holding every pixel it may touch, and (for solid fills) a box
# inside which every pixel has its fill colour, with that colour.
Painted = tuple[int, int, int, int, tuple | None, str | None]


def paint(img: Image.Image, ops: Sequence[DrawOp], size: tuple[int, int], clip: tuple[int, int] | None = None,
          ground: str | None = None) -> None:
    """Paint `ops` in order onto `img` (already filled with `ground`, if given). With `clip` =
    pixel rows [top, bottom), only those rows are meant to be right: plain rectangles are cut to
    them (exact: Pillow's rounding of a box edge is monotonic and keeps integers), every other op
    is drawn whole at its usual place, so each pixel in the clip gets exactly the paint
    operations a full render would give it.

    Labels and small rounded shapes on a solid colour are pasted as opaque tiles, drawn once
    onto that colour (`_tile`: the same pixels; pasting a label's tile is ~25× cheaper than
    blending it through its mask). "On a solid colour": the last op drawn so far whose pixels
    can reach the op's box is a solid fill covering the whole box (see `Painted`)."""
    W, H = size
    sx, sy = W / CANVAS_W, H / CANVAS_H
    draw = ImageDraw.Draw(img)
    painted: list[Painted] = []
    if ground is not None:
        painted.append((0, 0, W, H, (0, 0, W, H), ground))
    for op in ops:
        match op:
            case Rect(x1, y1, x2, y2, fill, radius, outline, stroke):
                box = (x1 * sx, y1 * sy, max(x1 * sx, x2 * sx - 1), max(y1 * sy, y2 * sy - 1))
                if clip is not None and not radius and not outline:
                    top, bottom = max(box[1], clip[0]), min(box[3], clip[1] - 1)
                    if top > bottom:
                        continue
                    box = (box[0], top, box[2], bottom)
                width = round(stroke * sx) if outline else 0
                reach = (math.floor(box[0]) - 1, math.floor(box[1]) - 1, math.ceil(box[2]) + 2,
                         math.ceil(box[3]) + 2)
                if radius:
                    ox, oy, ex, ey = reach
                    under = _ground(painted, *reach) if (ex - ox) * (ey - oy) <= MAX_SHAPE_TILE else None
                    if under is None:
                        draw.rounded_rectangle(box, radius * sx, fill=fill, outline=outline, width=width)
                    else:  # drawn once onto a tile of its ground colour, at the same offset within a pixel
                        key = ("rounded", box[0] - ox, box[1] - oy, box[2] - ox, box[3] - oy, radius * sx, fill,
                               outline, width, under)
                        img.paste(_tile(key, (ex - ox, ey - oy)), (ox, oy))
                else:
                    draw.rectangle(box, fill=fill, outline=outline, width=width)
                inner = None
                if fill:  # fully filled: away from the edges by the outline, and from the rounded corners
                    mx, my = max(width, math.ceil(radius * sx)) + 1, width + 1
                    inner = (math.ceil(box[0]) + mx, math.ceil(box[1]) + my, math.floor(box[2]) - mx + 1,
                             math.floor(box[3]) - my + 1)
                painted.append((*reach, inner, fill))
            case Text(x, y, s, px, bold, colour, anchor):
                px = max(6, round(px * sx))
                mask, dx, dy = text_mask(s, px, bold, anchor)
                x0, y0 = round(x * sx) + dx, round(y * sy) + dy
                x1, y1 = x0 + mask.size[0], y0 + mask.size[1]
                under = _ground(painted, x0, y0, x1, y1)
                if under is None:
                    img.paste(rgb(colour), (x0, y0), mask)
                else:
                    img.paste(_tile(("text", s, px, bold, anchor, colour, under), mask.size), (x0, y0))
                painted.append((x0, y0, x1, y1, None, None))
            case Line(x1, y1, x2, y2, colour, stroke):
                w = max(1, round(stroke * sx))
                draw.line((x1 * sx, y1 * sy, x2 * sx, y2 * sy), fill=colour, width=w)
                painted.append((math.floor(min(x1, x2) * sx) - w - 2, math.floor(min(y1, y2) * sy) - w - 2,
                                math.ceil(max(x1, x2) * sx) + w + 2, math.ceil(max(y1, y2) * sy) + w + 2, None, None))
            case Ellipse(x1, y1, x2, y2, fill, outline, stroke):
                draw.ellipse((x1 * sx, y1 * sy, x2 * sx, y2 * sy), fill=fill, outline=outline,
                             width=max(1, round(stroke * sx)) if outline else 0)
                painted.append((math.floor(x1 * sx) - 2, math.floor(y1 * sy) - 2, math.ceil(x2 * sx) + 2,
                                math.ceil(y2 * sy) + 2, None, None))


def _ground(painted: list[Painted], x0: int, y0: int, x1: int, y1: int) -> str | None:
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


def _tile(key: tuple, size: tuple[int, int]) -> Image.Image:
    """An op drawn onto a tile of `size` pixels of its ground colour (the key's last field), as
    `paint` would paint it there (cached: labels and buttons recur on many screens). Keys:
    ("text", label, px, bold, anchor, colour, ground) or ("rounded", box..., radius, fill,
    outline, width, ground), in pixels."""
    tile = TILE_CACHE.get(key)
    if tile is None:
        tile = Image.new("RGB", size, key[-1])
        if key[0] == "text":
            _, s, px, bold, anchor, colour, _ = key
            tile.paste(rgb(colour), (0, 0), text_mask(s, px, bold, anchor)[0])
        else:
            _, x0, y0, x1, y1, radius, fill, outline, width, _ = key
            ImageDraw.Draw(tile).rounded_rectangle((x0, y0, x1, y1), radius, fill=fill, outline=outline, width=width)
        TILE_CACHE.put(key, tile)
    return tile
