"""Do two canonical actions, taken on the same screen state, do the same thing?

Used to drop fork candidates where the failed attempt acted like the teacher (the public
release of UI-Voyager drops identical tool calls; here "identical" is relaxed to "same effect":
same type and same target element, a nearby point, the same text).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from training.methods.grsd.forks.model import ForkInputError
from training.methods.grsd.forks.tree import Element, normalize_text

GRID = 1000  # canonical action coordinates are on a 0..1000 grid
_POINTED = {"click", "long_press", "double_tap"}


@dataclass(frozen=True, slots=True)
class ActionContext:
    """What is needed to resolve an action's target on its screen."""

    elements: list[Element] | None  # the flattened tree (element indices point into it)
    screen_size: tuple[int, int]  # (width, height) of the screenshot in pixels
    bounds_in_grid: bool  # element bounds on the 0..1000 grid instead of pixels


def check_action(action: Any) -> dict[str, Any] | None:
    """Validate the shape of a canonical action dict (None passes through)."""
    if action is None:
        return None
    if not isinstance(action, dict) or not isinstance(action.get("type"), str):
        raise ForkInputError(f"action must be {{'type': str, 'args': {{...}}}}, got {action!r}")
    args = action.get("args") or {}
    if not isinstance(args, dict):
        raise ForkInputError(f"action args must be an object, got {args!r}")
    for name in ("point", "end_point"):
        point = args.get(name)
        if point is not None and not (
            isinstance(point, (list, tuple)) and len(point) == 2 and all(isinstance(v, (int, float)) for v in point)
        ):
            raise ForkInputError(f"action {name} must be [x, y] on the 0..{GRID} grid, got {point!r}")
    element = args.get("element")
    if element is not None and (not isinstance(element, int) or isinstance(element, bool) or element < 0):
        raise ForkInputError(f"action element must be a non-negative index, got {element!r}")
    return {"type": action["type"], "args": args}


def actions_equivalent(
    a: dict[str, Any] | None,
    b: dict[str, Any] | None,
    ctx_a: ActionContext,
    ctx_b: ActionContext,
    point_tolerance: float,
) -> bool:
    """Same type and same effect on the same state; a missing action is never equivalent."""
    if a is None or b is None or a["type"] != b["type"]:
        return False
    kind, args_a, args_b = a["type"], a["args"], b["args"]
    if kind in _POINTED:
        return _same_target(args_a, args_b, ctx_a, ctx_b, point_tolerance) is True
    if kind == "swipe":
        same_direction = _direction(args_a) == _direction(args_b)
        return same_direction and _same_target(args_a, args_b, ctx_a, ctx_b, point_tolerance) is not False
    if kind == "drag":
        return _near(args_a.get("point"), args_b.get("point"), point_tolerance) and _near(
            args_a.get("end_point"), args_b.get("end_point"), point_tolerance
        )
    if kind == "type":
        same_text = args_a.get("text") == args_b.get("text")  # exact: a typo is a different action
        return same_text and _same_target(args_a, args_b, ctx_a, ctx_b, point_tolerance) is not False
    if kind == "answer":
        return _answer(args_a) == _answer(args_b)
    if kind == "open_app":
        return str(args_a.get("app", "")).casefold() == str(args_b.get("app", "")).casefold()
    if kind == "wait":
        return True
    return args_a == args_b  # system_button, terminate, key and unknown types: exact arguments


def _answer(args: dict[str, Any]) -> str:
    return normalize_text(str(args.get("text", ""))).casefold()


def _same_target(
    args_a: dict[str, Any], args_b: dict[str, Any], ctx_a: ActionContext, ctx_b: ActionContext, tolerance: float
) -> bool | None:
    """True/False when both actions name a target, None (unknown) when one of them does not."""
    has_a = args_a.get("element") is not None or args_a.get("point") is not None
    has_b = args_b.get("element") is not None or args_b.get("point") is not None
    if not (has_a and has_b):
        return None
    element_a, element_b = _resolve(args_a, ctx_a), _resolve(args_b, ctx_b)
    if element_a is not None and element_b is not None:
        return element_a.identity == element_b.identity
    if args_a.get("element") is not None and args_b.get("element") is not None and ctx_a.elements is None:
        return args_a["element"] == args_b["element"]  # no trees: indices into the same screen's list
    return _near(_grid_point(args_a, ctx_a), _grid_point(args_b, ctx_b), tolerance)


def _resolve(args: dict[str, Any], ctx: ActionContext) -> Element | None:
    """The element an action targets: its index, else the smallest element under its point."""
    if ctx.elements is None:
        return None
    index = args.get("element")
    if index is not None:
        return ctx.elements[index] if 0 <= int(index) < len(ctx.elements) else None
    point = _to_bounds_space(args["point"], ctx)
    hits = [e for e in ctx.elements if e.visible and e.contains(*point)]
    return min(hits, key=lambda e: e.area) if hits else None


def _to_bounds_space(point: Any, ctx: ActionContext) -> tuple[float, float]:
    x, y = float(point[0]), float(point[1])
    if ctx.bounds_in_grid:
        return x, y
    width, height = ctx.screen_size
    return x / GRID * width, y / GRID * height


def _grid_point(args: dict[str, Any], ctx: ActionContext) -> tuple[float, float] | None:
    """The action's point on the 0..1000 grid (an element stands for its centre)."""
    if args.get("point") is not None:
        return float(args["point"][0]), float(args["point"][1])
    element = _resolve(args, ctx)
    if element is None or element.bounds is None:
        return None
    left, top, right, bottom = element.bounds
    x, y = (left + right) / 2, (top + bottom) / 2
    if ctx.bounds_in_grid:
        return x, y
    width, height = ctx.screen_size
    return x / width * GRID, y / height * GRID


def _near(p: Any, q: Any, tolerance: float) -> bool:
    if p is None or q is None:
        return False
    return ((float(p[0]) - float(q[0])) ** 2 + (float(p[1]) - float(q[1])) ** 2) ** 0.5 <= tolerance


def _direction(args: dict[str, Any]) -> str | None:
    """Finger direction of a swipe, from `direction` or from its start and end points."""
    if args.get("direction") is not None:
        return str(args["direction"])
    start, end = args.get("point"), args.get("end_point")
    if start is None or end is None:
        return None
    dx, dy = float(end[0]) - float(start[0]), float(end[1]) - float(start[1])
    if abs(dx) >= abs(dy):
        return "right" if dx > 0 else "left"
    return "down" if dy > 0 else "up"
