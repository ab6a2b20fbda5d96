"""Images the LLM critic looks at: action-annotated before/after panels, stitched last screens, and the
previous/current/next screens of a step its reasoning annotation reads."""

from __future__ import annotations

import io
import math
from typing import Any, Sequence

from PIL import Image, ImageDraw

from ops.actions import GRID, Action
from ops.actions.coords import element_centre

MARKER = (255, 40, 40)
PANEL_HEIGHT = 800  # critic images are downscaled: VLM critics do not need full resolution


def _decode(png: bytes) -> Image.Image:
    return Image.open(io.BytesIO(png)).convert("RGB")


def _scaled(img: Image.Image, height: int) -> Image.Image:
    w = max(1, round(img.width * height / img.height))
    return img.resize((w, height), Image.BILINEAR)


def _to_px(point: Sequence[float], img: Image.Image) -> tuple[float, float]:
    return point[0] / GRID * img.width, point[1] / GRID * img.height


_DIRECTION_VECTORS = {"up": (0, -1), "down": (0, 1), "left": (-1, 0), "right": (1, 0)}


def annotate_action(png: bytes, action: Action | None, elements: list[dict[str, Any]]) -> Image.Image:
    """Draw the action on the screenshot: a ring for taps, an arrow for swipes and drags."""
    img = _decode(png)
    if action is None:
        return img
    draw = ImageDraw.Draw(img)
    r = max(12, img.width // 30)
    start = action.point or element_centre(action.element, elements)
    if start is not None and action.end_point is None and action.direction is None:
        x, y = _to_px(start, img)
        draw.ellipse((x - r, y - r, x + r, y + r), outline=MARKER, width=max(3, r // 4))
        draw.ellipse((x - r / 4, y - r / 4, x + r / 4, y + r / 4), fill=MARKER)
        return img
    if action.end_point is not None or action.direction is not None:
        start = start or (GRID / 2, GRID / 2)
        if action.end_point is not None:
            end = action.end_point
        else:
            dx, dy = _DIRECTION_VECTORS[action.direction]
            end = (start[0] + dx * GRID / 4, start[1] + dy * GRID / 4)
        (x0, y0), (x1, y1) = _to_px(start, img), _to_px(end, img)
        draw.line((x0, y0, x1, y1), fill=MARKER, width=max(4, r // 3))
        angle = math.atan2(y1 - y0, x1 - x0)
        for side in (-0.5, 0.5):
            a = angle + math.pi + side
            draw.line((x1, y1, x1 + r * 1.5 * math.cos(a), y1 + r * 1.5 * math.sin(a)),
                      fill=MARKER, width=max(4, r // 3))
    return img


def before_after_panel(before_png: bytes, after_png: bytes, action: Action | None,
                       elements: list[dict[str, Any]], height: int = PANEL_HEIGHT) -> Image.Image:
    """Two panels side by side: the annotated Before Action screen and the After Action screen."""
    left = _scaled(annotate_action(before_png, action, elements), height)
    right = _scaled(_decode(after_png), height)
    return stitch([left, right])


def step_context_panel(previous_png: bytes | None, current_png: bytes, action: Action | None,
                       elements: list[dict[str, Any]], next_png: bytes | None,
                       height: int = PANEL_HEIGHT) -> Image.Image:
    """The screens around one step side by side (MobileWizard App. C.1): the previous screen, if
    any; the current one with the action drawn on it; the next one, if any."""
    panels = [] if previous_png is None else [_scaled(_decode(previous_png), height)]
    panels.append(_scaled(annotate_action(current_png, action, elements), height))
    if next_png is not None:
        panels.append(_scaled(_decode(next_png), height))
    return stitch(panels)


def stitch(images: Sequence[Image.Image], gap: int = 12) -> Image.Image:
    """Images placed left to right on a white canvas (the critic's 'composite of last screens')."""
    height = max(i.height for i in images)
    width = sum(i.width for i in images) + gap * (len(images) - 1)
    canvas = Image.new("RGB", (width, height), (255, 255, 255))
    x = 0
    for img in images:
        canvas.paste(img, (x, 0))
        x += img.width + gap
    return canvas


def last_screens(pngs: Sequence[bytes], n: int = 3, height: int = PANEL_HEIGHT) -> Image.Image:
    """The composite of the last `n` screenshots used by the final-decision prompt."""
    return stitch([_scaled(_decode(p), height) for p in pngs[-n:]])


def to_png(img: Image.Image) -> bytes:
    buf = io.BytesIO()
    img.save(buf, format="PNG", optimize=False)
    return buf.getvalue()
