"""AndroidWorld `JSONAction` objects, e.g. `{"action_type": "click", "index": 3}`.

Targets are an element `index` or `x`/`y` (in the caller's frame; pass
`coords.screen_pixels(w, h)` for raw device pixels). `scroll.direction` is the direction the
*content* moves, the opposite of the finger, so `scroll down` is a canonical swipe `up`.
`status` carries `goal_status` complete → terminate success, infeasible → failure.
The JSON may follow other text (e.g. `Reason: … Action: {...}`); the first object is used.
"""

from __future__ import annotations

import json
from typing import Any

from ops.actions.coords import CoordFrame
from ops.actions.excerpt import excerpt
from ops.actions.formats.base import (
    ActionFormat,
    FormatError,
    ParsedOutput,
    args_within,
    first_json_object,
    number,
    text_arg,
)
from phonesim.actions import Action, ActionType

OPPOSITE = {"up": "down", "down": "up", "left": "right", "right": "left"}
_POINTED = {
    "click": ActionType.CLICK,
    "double_tap": ActionType.DOUBLE_TAP,
    "long_press": ActionType.LONG_PRESS,
}
_BUTTONS = {"navigate_home": "home", "navigate_back": "back", "keyboard_enter": "enter"}
_GOAL_STATUS = {"complete": "success", "infeasible": "failure"}


def _target(obj: dict[str, Any], frame: CoordFrame) -> dict[str, Any]:
    kw: dict[str, Any] = {}
    if obj.get("index") is not None:
        index = number(obj["index"], "index")
        if not index.is_integer():
            raise FormatError(f"index must be an integer, got {excerpt(obj['index'])}")
        kw["element"] = int(index)
    if obj.get("x") is not None or obj.get("y") is not None:
        kw["point"] = frame.to_grid(number(obj.get("x"), "x"), number(obj.get("y"), "y"))
    return kw


def _direction(obj: dict[str, Any], what: str) -> str:
    value = text_arg(obj.get("direction"), f"{what}.direction").strip().lower()
    if value not in OPPOSITE:
        raise FormatError(f"{what}: direction {excerpt(value)} is not up/down/left/right")
    return value


def object_to_action(obj: dict[str, Any], frame: CoordFrame) -> Action:
    kind = obj.get("action_type")
    if not isinstance(kind, str):
        raise FormatError("JSON object has no string 'action_type'")
    kind = kind.strip().lower()
    if kind in _POINTED:
        return Action(type=_POINTED[kind], **_target(obj, frame))
    if kind == "input_text":
        return Action(
            type=ActionType.TYPE,
            text=text_arg(obj.get("text"), "input_text.text"),
            **_target(obj, frame),
        )
    if kind == "scroll":
        return Action(
            type=ActionType.SWIPE,
            direction=OPPOSITE[_direction(obj, "scroll")],
            **_target(obj, frame),
        )
    if kind == "swipe":
        return Action(
            type=ActionType.SWIPE, direction=_direction(obj, "swipe"), **_target(obj, frame)
        )
    if kind in _BUTTONS:
        return Action(type=ActionType.SYSTEM_BUTTON, button=_BUTTONS[kind])
    if kind == "open_app":
        return Action(
            type=ActionType.OPEN_APP, app=text_arg(obj.get("app_name"), "open_app.app_name")
        )
    if kind == "status":
        status = obj.get("goal_status")
        if status not in _GOAL_STATUS:
            raise FormatError(f"status: goal_status {excerpt(status)} is not complete/infeasible")
        return Action(type=ActionType.TERMINATE, status=_GOAL_STATUS[status])
    if kind == "answer":
        return Action(type=ActionType.ANSWER, text=text_arg(obj.get("text"), "answer.text"))
    if kind == "wait":
        return Action(type=ActionType.WAIT)
    raise FormatError(f"unsupported action_type {excerpt(kind)}")


def parse(text: str, frame: CoordFrame) -> ParsedOutput:
    action = object_to_action(first_json_object(text), frame)
    return ParsedOutput(action, envelope_ok=True)


def supports(action: Action) -> bool:
    t = action.type
    target = {"point", "element"}
    if t in (ActionType.CLICK, ActionType.DOUBLE_TAP, ActionType.LONG_PRESS):
        return args_within(action, target)
    if t == ActionType.TYPE:
        return args_within(action, target | {"text"})
    if t == ActionType.SWIPE:
        return action.direction is not None and args_within(action, target | {"direction"})
    if t == ActionType.SYSTEM_BUTTON:
        return action.button in _BUTTONS.values()
    allowed = {
        ActionType.OPEN_APP: {"app"},
        ActionType.TERMINATE: {"status"},
        ActionType.ANSWER: {"text"},
        ActionType.WAIT: set(),
    }.get(t)
    return allowed is not None and args_within(action, allowed)


def action_to_object(action: Action, frame: CoordFrame) -> dict[str, Any]:
    t = action.type
    obj: dict[str, Any]
    if t == ActionType.TYPE:
        obj = {"action_type": "input_text", "text": action.text}
    elif t == ActionType.SWIPE:
        obj = {"action_type": "scroll", "direction": OPPOSITE[action.direction or ""]}
    elif t == ActionType.SYSTEM_BUTTON:
        obj = {"action_type": {v: k for k, v in _BUTTONS.items()}[action.button or ""]}
    elif t == ActionType.OPEN_APP:
        obj = {"action_type": "open_app", "app_name": action.app}
    elif t == ActionType.TERMINATE:
        goal = {v: k for k, v in _GOAL_STATUS.items()}[action.status or ""]
        obj = {"action_type": "status", "goal_status": goal}
    elif t == ActionType.ANSWER:
        obj = {"action_type": "answer", "text": action.text}
    else:  # click, double_tap, long_press, wait share their canonical name
        obj = {"action_type": t.value}
    if action.element is not None:
        obj["index"] = action.element
    if action.point is not None:
        obj["x"], obj["y"] = frame.from_grid(action.point)
    return obj


def render(action: Action, frame: CoordFrame, thinking: str | None, conclusion: str | None) -> str:
    return json.dumps(action_to_object(action, frame), ensure_ascii=False)


FORMAT = ActionFormat(name="androidworld", parse_fn=parse, render_fn=render, supports=supports)
