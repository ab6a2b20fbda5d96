"""Draw operations: what a screen is made of, in logical units (the 0..CANVAS_W × 0..CANVAS_H
canvas), before it becomes pixels.

Ops are NamedTuples: immutable, hashable and compared by value like plain tuples, so a screen's
op sequence is itself the key of the render caches. Caveat of tuple equality: ops of different
types must never compare equal, so no two types may agree in arity and in the type of every
field (tests/phonesim/test_render_ops.py checks it).
"""

from __future__ import annotations

from typing import Callable, NamedTuple


class Rect(NamedTuple):
    """A box from (x1, y1) to (x2, y2), corners rounded by `radius`; filled and/or outlined."""

    x1: float
    y1: float
    x2: float
    y2: float
    fill: str | None
    radius: float
    outline: str | None
    width: float = 1  # outline stroke


class Text(NamedTuple):
    """A one-line label at (x, y); `anchor` is Pillow's two-letter text anchor ("la", "mm", ...)."""

    x: float
    y: float
    text: str
    size: int  # font size in logical units
    bold: bool
    colour: str
    anchor: str


class Line(NamedTuple):
    """A straight stroke from (x1, y1) to (x2, y2)."""

    x1: float
    y1: float
    x2: float
    y2: float
    colour: str
    width: float


class Ellipse(NamedTuple):
    """An ellipse inscribed in the box (x1, y1)–(x2, y2); filled and/or outlined."""

    x1: float
    y1: float
    x2: float
    y2: float
    fill: str | None
    outline: str | None
    width: float  # outline stroke


class Scrim(NamedTuple):
    """Where a dialog's scrim starts while a screen is built. `build.frame_ops` removes it and
    draws everything before it in dimmed colours instead (no pixel blending)."""

    x1: float
    y1: float
    x2: float
    y2: float


DrawOp = Rect | Text | Line | Ellipse | Scrim

# Colour fields per op type: fills cover areas, inks are strokes and text (the PNG palette
# blends inks into fills for anti-aliased edges).
FILL_FIELDS: dict[type, tuple[str, ...]] = {Rect: ("fill",), Ellipse: ("fill",), Text: (), Line: ()}
INK_FIELDS: dict[type, tuple[str, ...]] = {Rect: ("outline",), Ellipse: ("outline",), Text: ("colour",),
                                           Line: ("colour",)}


def recoloured(op: DrawOp, change: Callable[[str], str]) -> DrawOp:
    """`op` with every colour it sets replaced by `change(colour)`."""
    names = FILL_FIELDS[type(op)] + INK_FIELDS[type(op)]
    return op._replace(**{name: change(getattr(op, name)) for name in names if getattr(op, name)})
