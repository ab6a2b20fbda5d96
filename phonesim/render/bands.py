"""How a screen's draw ops fall into horizontal bands of pixel rows (the render cache's grain)."""

from __future__ import annotations

import math
import os

from phonesim.render.ops import DrawOp, Line, Text
from phonesim.render.text import text_mask
from phonesim.widgets import CANVAS_H, CANVAS_W

BANDS_PER_SCREEN = int(os.environ.get("PHONESIM_RENDER_BANDS", 50))


def band_height(height: int) -> int:
    """Pixel rows per cached band: 1/`BANDS_PER_SCREEN` of the screen (48 rows at 2400)."""
    return max(8, height // BANDS_PER_SCREEN)


def op_rows(op: DrawOp, sx: float, sy: float) -> tuple[int, int]:
    """Pixel rows [top, bottom) an op can touch (generous: anti-aliasing and stroke widths)."""
    match op:
        case Text(_, y, s, px, bold, _, anchor):
            mask, _, dy = text_mask(s, max(6, round(px * sx)), bold, anchor)
            top = round(y * sy) + dy
            return top - 1, top + mask.size[1] + 1
        case Line(_, y1, _, y2, _, stroke):
            w = max(1, round(stroke * sx))
            lo, hi = (y1, y2) if y1 <= y2 else (y2, y1)
            return math.floor(lo * sy) - w - 2, math.ceil(hi * sy) + w + 2
        case _:  # Rect, Ellipse
            return math.floor(op.y1 * sy) - 2, math.ceil(op.y2 * sy) + 2


class BandLayout:
    """How one screen's ops fall into bands: per band the indices of the ops touching it and
    the band's cache key (size, band number, those ops)."""

    __slots__ = ("size", "height", "members", "keys")

    def __init__(self, ops: tuple[DrawOp, ...], size: tuple[int, int]):
        W, H = size
        sx, sy = W / CANVAS_W, H / CANVAS_H
        height = band_height(H)
        n = -(-H // height)
        members: list[list[int]] = [[0] for _ in range(n)]  # the background fills every band
        for i in range(1, len(ops)):
            top, bottom = op_rows(ops[i], sx, sy)
            for b in range(max(0, top // height), min(n - 1, (bottom - 1) // height) + 1):
                members[b].append(i)
        self.size, self.height, self.members = size, height, members
        self.keys = [(size, b, tuple([ops[i] for i in m])) for b, m in enumerate(members)]

    def span(self, band: int) -> tuple[int, int]:
        """Pixel rows [top, bottom) of `band`."""
        return band * self.height, min(self.size[1], (band + 1) * self.height)
