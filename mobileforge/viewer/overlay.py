"""What the viewer draws over a step's screenshot: where the agent tapped, which way it swiped, what
it typed. Canonical actions (ops.actions) put points on the 0–1000 grid or name an element of the
step's element list; the marks here are in the screenshot's own pixels, for an SVG laid over it."""

from __future__ import annotations

import io
import math
from dataclasses import dataclass, field
from typing import Any

from PIL import Image

from ops.actions import GRID
from ops.samples.step_samples import element_under

SWIPE_LENGTH = 300  # grid units of an arrow for a swipe given by its direction only
DIRECTION_VECTORS = {"up": (0, -1), "down": (0, 1), "left": (-1, 0), "right": (1, 0)}  # where the finger moves
POINT_ACTIONS = {"click": "tap", "long_press": "long press", "double_tap": "double tap"}
MAX_CAPTION_CHARS = 80
MAX_LABEL_CHARS = 28  # of the element a tap names: a thumbnail's caption stays on one or two lines


@dataclass(frozen=True)
class Tap:
    """A touch at (x, y); `label` says which kind."""

    x: float
    y: float
    label: str


@dataclass(frozen=True)
class Arrow:
    """A finger moving from (x0, y0) to (x1, y1), with a head `head_size` pixels long."""

    x0: float
    y0: float
    x1: float
    y1: float
    head_size: float

    @property
    def head(self) -> list[str]:
        """The head's triangle as SVG polygon points ("x,y"), its tip at (x1, y1)."""
        length = math.hypot(self.x1 - self.x0, self.y1 - self.y0) or 1.0
        ux, uy = (self.x1 - self.x0) / length, (self.y1 - self.y0) / length
        base_x, base_y = self.x1 - ux * self.head_size, self.y1 - uy * self.head_size
        half = self.head_size * 0.6
        corners = ((self.x1, self.y1), (base_x - uy * half, base_y + ux * half), (base_x + uy * half, base_y - ux * half))
        return [f"{x:.1f},{y:.1f}" for x, y in corners]


@dataclass(frozen=True)
class Box:
    """The element the action targets."""

    x0: float
    y0: float
    x1: float
    y1: float


@dataclass(frozen=True)
class Overlay:
    """Marks over a `width`×`height` screenshot and a caption saying the action in words."""

    width: int
    height: int
    caption: str
    taps: list[Tap] = field(default_factory=list)
    arrows: list[Arrow] = field(default_factory=list)
    boxes: list[Box] = field(default_factory=list)
    invalid: bool = False  # the output did not parse: nothing was done

    @property
    def font_size(self) -> float:
        return max(12.0, self.width / 22)


def png_size(png: bytes) -> tuple[int, int]:
    """(width, height) of a PNG, read from its header."""
    with Image.open(io.BytesIO(png)) as image:
        return image.size


def _caption(kind: str, args: dict[str, Any]) -> str:
    details = {"type": lambda: f"type “{args.get('text', '')}”", "answer": lambda: f"answer “{args.get('text', '')}”",
               "system_button": lambda: f"press {args.get('button')}", "open_app": lambda: f"open app {args.get('app')}",
               "terminate": lambda: f"finish: {args.get('status')}", "key": lambda: f"key {args.get('key')}",
               "swipe": lambda: f"swipe {args['direction']}" if args.get("direction") else "swipe",
               "wait": lambda: "wait"}
    text = details[kind]() if kind in details else POINT_ACTIONS.get(kind, kind)
    return text if len(text) <= MAX_CAPTION_CHARS else text[:MAX_CAPTION_CHARS - 1] + "…"


def action_overlay(action: dict[str, Any] | None, elements: list[dict[str, Any]], size: tuple[int, int],
                   parse_error: str | None = None) -> Overlay:
    """The marks of `action` (canonical JSON, None when the output did not parse) on a screenshot of
    `size` pixels whose element list is `elements`."""
    width, height = size
    if action is None:
        return Overlay(width, height, f"invalid output: {parse_error or 'not parsed'}"[:MAX_CAPTION_CHARS],
                       invalid=True)
    kind, args = str(action.get("type")), action.get("args") or {}

    def pixel(point: Any) -> tuple[float, float]:
        return point[0] * width / GRID, point[1] * height / GRID

    caption = _caption(kind, args)
    boxes, start = [], None
    element = args.get("element")
    if element is None and args.get("point") and kind in POINT_ACTIONS and all(e.get("grid") for e in elements):
        element = element_under(args["point"], elements)  # name and outline what the point landed on
    if isinstance(element, int) and 0 <= element < len(elements) and kind in POINT_ACTIONS:
        label = str(elements[element].get("text") or elements[element].get("desc") or "")
        caption += f" “{label if len(label) <= MAX_LABEL_CHARS else label[:MAX_LABEL_CHARS - 1] + '…'}”" if label else ""
    if isinstance(element, int):
        if 0 <= element < len(elements) and elements[element].get("grid"):
            x0, y0, x1, y1 = elements[element]["grid"]
            boxes.append(Box(*pixel((x0, y0)), *pixel((x1, y1))))
            start = pixel(((x0 + x1) / 2, (y0 + y1) / 2))
        else:
            caption += f" (element #{element} not on this screen)"
    if args.get("point"):
        start = pixel(args["point"])
    taps, arrows = [], []
    if kind in ("swipe", "drag"):
        if args.get("end_point"):
            end = pixel(args["end_point"])
            start = start or end
        else:
            dx, dy = DIRECTION_VECTORS.get(args.get("direction"), (0, 0))
            start = start or pixel((GRID / 2, GRID / 2))
            end = (start[0] + dx * SWIPE_LENGTH * width / GRID, start[1] + dy * SWIPE_LENGTH * height / GRID)
        arrows.append(Arrow(*start, *end, head_size=width / 14))
    elif start is not None:
        taps.append(Tap(*start, POINT_ACTIONS.get(kind, kind)))
    return Overlay(width, height, caption, taps, arrows, boxes)
