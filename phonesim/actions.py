"""Canonical GUI action: one type plus typed arguments, coordinates on the 0–1000 grid.

The simulator's own action model (phonesim imports nothing of the project). `ops.actions`
parses every model format (Qwen3-VL, GUI-Owl, AndroidWorld, MobileGym, MobileRL, MobileWizard)
into `Action` and renders it back; environments, rewards and datasets only ever see `Action`.
A parse that cannot produce one yields `ParseFailure`, never an exception.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field, fields
from enum import Enum
from typing import Any

GRID = 1000  # normalized coordinate range: 0..GRID on both axes


class ActionType(str, Enum):
    CLICK = "click"
    LONG_PRESS = "long_press"
    DOUBLE_TAP = "double_tap"
    SWIPE = "swipe"
    DRAG = "drag"
    TYPE = "type"
    ANSWER = "answer"
    SYSTEM_BUTTON = "system_button"
    OPEN_APP = "open_app"
    WAIT = "wait"
    TERMINATE = "terminate"
    KEY = "key"


SYSTEM_BUTTONS = ("back", "home", "enter", "recent", "menu")
DIRECTIONS = ("up", "down", "left", "right")  # direction the finger moves
TERMINATE_STATUSES = ("success", "failure")

# Action types whose target is a point or an element reference.
POINTED_TYPES = frozenset({ActionType.CLICK, ActionType.LONG_PRESS, ActionType.DOUBLE_TAP})


class ActionError(ValueError):
    """An action whose arguments do not fit its type (raised by `Action.validate`)."""


@dataclass(frozen=True, slots=True)
class Action:
    """A canonical action. Only the arguments relevant to `type` are set.

    - click / long_press / double_tap: `point` (x, y on the 0–1000 grid) or `element`
      (index into the observation's element list; the environment resolves it).
    - swipe: `point` + `end_point`, or `direction` (optionally with a start `point`/`element`).
      `direction` is the direction the finger moves ("up" scrolls content further down).
    - drag: `point` + `end_point`.
    - type: `text` (into the focused field; an optional `point`/`element` focuses first).
    - answer: `text`.   system_button: `button`.   open_app: `app`.
    - wait: optional `duration` seconds.   terminate: `status` success/failure.   key: `key`.
    """

    type: ActionType
    point: tuple[int, int] | None = None
    element: int | None = None
    end_point: tuple[int, int] | None = None
    direction: str | None = None
    text: str | None = None
    button: str | None = None
    app: str | None = None
    status: str | None = None
    key: str | None = None
    duration: float | None = None

    def __post_init__(self) -> None:
        try:
            object.__setattr__(self, "type", ActionType(self.type))
        except ValueError:
            raise ActionError(f"unknown action type {self.type!r}") from None
        for name in ("point", "end_point"):
            value = getattr(self, name)
            if value is not None:
                object.__setattr__(self, name, _grid_point(name, value))
        self.validate()

    def validate(self) -> None:
        """Raise `ActionError` naming the argument that does not fit the action type."""
        t = self.type
        for name in ("direction", "text", "button", "app", "status", "key"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, str):
                raise ActionError(f"{t.value}: {name} must be a string, got {value!r}")
        if self.element is not None and (
            isinstance(self.element, bool) or not isinstance(self.element, int)
        ):
            raise ActionError(f"{t.value}: element must be an integer, got {self.element!r}")
        if self.duration is not None and (
            isinstance(self.duration, bool)
            or not isinstance(self.duration, int | float)
            or not math.isfinite(self.duration)
        ):
            raise ActionError(f"{t.value}: duration must be a finite number, got {self.duration!r}")
        for name in ("point", "end_point"):
            p = getattr(self, name)
            if p is not None and not (0 <= p[0] <= GRID and 0 <= p[1] <= GRID):
                raise ActionError(f"{t.value}: {name} {p} outside the 0–{GRID} grid")
        if self.element is not None and self.element < 0:
            raise ActionError(f"{t.value}: element index {self.element} is negative")
        if t in POINTED_TYPES and self.point is None and self.element is None:
            raise ActionError(f"{t.value}: needs a point or an element")
        if t == ActionType.SWIPE:
            if self.direction is None and (self.point is None or self.end_point is None):
                raise ActionError("swipe: needs a direction or both point and end_point")
            if self.direction is not None and self.direction not in DIRECTIONS:
                raise ActionError(f"swipe: direction {self.direction!r} not in {DIRECTIONS}")
        if t == ActionType.DRAG and (self.point is None or self.end_point is None):
            raise ActionError("drag: needs point and end_point")
        if t in (ActionType.TYPE, ActionType.ANSWER) and self.text is None:
            raise ActionError(f"{t.value}: needs text")
        if t == ActionType.SYSTEM_BUTTON and self.button not in SYSTEM_BUTTONS:
            raise ActionError(f"system_button: button {self.button!r} not in {SYSTEM_BUTTONS}")
        if t == ActionType.OPEN_APP and not self.app:
            raise ActionError("open_app: needs an app name")
        if t == ActionType.TERMINATE and self.status not in TERMINATE_STATUSES:
            raise ActionError(f"terminate: status {self.status!r} not in {TERMINATE_STATUSES}")
        if t == ActionType.KEY and not self.key:
            raise ActionError("key: needs a key name")
        if self.duration is not None and self.duration < 0:
            raise ActionError(f"{t.value}: negative duration {self.duration}")

    @property
    def args(self) -> dict[str, Any]:
        """The set arguments as plain JSON values."""
        out: dict[str, Any] = {}
        for f in fields(self):
            if f.name == "type":
                continue
            value = getattr(self, f.name)
            if value is not None:
                out[f.name] = list(value) if isinstance(value, tuple) else value
        return out

    def to_dict(self) -> dict[str, Any]:
        """`{"type": ..., "args": {...}}`, the canonical JSON form."""
        return {"type": self.type.value, "args": self.args}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, sort_keys=True)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Action:
        """Inverse of `to_dict`; raises `ActionError` on unknown types or arguments."""
        if not isinstance(data, dict) or "type" not in data:
            raise ActionError(f"canonical action must be an object with 'type', got {data!r}")
        try:
            atype = ActionType(data["type"])
        except ValueError:
            raise ActionError(f"unknown action type {data['type']!r}") from None
        args = data.get("args") or {}
        if not isinstance(args, dict):
            raise ActionError(f"args must be an object, got {type(args).__name__}")
        known = {f.name for f in fields(cls)} - {"type"}
        unknown = set(args) - known
        if unknown:
            raise ActionError(f"{atype.value}: unknown arguments {sorted(unknown)}")
        kwargs = dict(args)
        try:
            for name in ("point", "end_point"):
                if kwargs.get(name) is not None:
                    if not isinstance(kwargs[name], list | tuple):
                        raise ValueError(f"{name} must be a list [x, y]")
                    x, y = kwargs[name]
                    kwargs[name] = (float(x), float(y))
            if kwargs.get("element") is not None:
                element = float(kwargs["element"])
                if not element.is_integer():
                    raise ValueError(f"element index {kwargs['element']!r} is not an integer")
                kwargs["element"] = int(element)
            if kwargs.get("duration") is not None:
                kwargs["duration"] = float(kwargs["duration"])
        except (TypeError, ValueError) as exc:
            raise ActionError(f"{atype.value}: malformed argument ({exc})") from None
        return cls(type=atype, **kwargs)

    @classmethod
    def from_json(cls, text: str) -> Action:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ActionError(f"not JSON: {exc}") from None
        return cls.from_dict(data)


def _grid_point(name: str, value: Any) -> tuple[int, int]:
    """A point rounded to integer grid units; `ActionError` unless it is two finite numbers."""
    try:
        x, y = value
        fx, fy = float(x), float(y)
    except (TypeError, ValueError):
        raise ActionError(f"{name} must be two numbers, got {value!r}") from None
    if not (math.isfinite(fx) and math.isfinite(fy)):
        raise ActionError(f"{name} {value!r} is not finite")
    return int(round(fx)), int(round(fy))


@dataclass(frozen=True, slots=True)
class ParseFailure:
    """A model output that could not become an `Action`; recorded, never raised."""

    reason: str
    raw: str = field(default="", repr=False)
    format: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"error": self.reason, "format": self.format}


ParseResult = Action | ParseFailure
