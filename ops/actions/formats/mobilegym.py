"""MobileGym's 17-action space (MobileGym appendix C), written as JSON objects
`{"action": "CLICK", "point": [x, y]}` (parameters `point`, `point1`/`point2`, `value`), or
in the compact trace form `CLICK[880,78]` / `BACK`.

INFO (ask the user a question) and NOOP (agent-internal no-op) have no canonical counterpart:
parsing them yields a `ParseFailure` whose reason starts with "unsupported action". The TYPE
`clear` flag is accepted but not carried (the canonical type action has no such field).
"""

from __future__ import annotations

import json
import re
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
    point,
    text_arg,
)
from phonesim.actions import Action, ActionType

_POINTED = {
    "CLICK": ActionType.CLICK,
    "DOUBLE_TAP": ActionType.DOUBLE_TAP,
    "LONG_PRESS": ActionType.LONG_PRESS,
}
_STROKES = {"SWIPE": ActionType.SWIPE, "DRAG": ActionType.DRAG}
_BUTTONS = {"BACK": "back", "HOME": "home", "RECENT": "recent", "ENTER": "enter"}
_TERMINATE = {"COMPLETE": "success", "ABORT": "failure"}
UNSUPPORTED = {
    "INFO": "asks the user a clarifying question",
    "NOOP": "is an agent-internal no-op",
}
ACTION_NAMES = frozenset(
    [*_POINTED, *_STROKES, *_BUTTONS, *_TERMINATE, *UNSUPPORTED, "TYPE", "WAIT", "AWAKE", "ANSWER"]
)
MAX_COMPACT_ARGS = 64  # characters between the brackets of `CLICK[880,78]`; a box needs under 30
# The bracket's content is bounded, so a name followed by `[` and no `]` costs a bounded look ahead,
# not a scan to the end of the text for every such name.
_COMPACT = re.compile(rf"\b([A-Z_]+)\b(?:\s*+\[([^\]]{{0,{MAX_COMPACT_ARGS}}})\])?")


def object_to_action(obj: dict[str, Any], frame: CoordFrame) -> Action:
    name = obj.get("action")
    if not isinstance(name, str):
        raise FormatError("JSON object has no string 'action'")
    name = name.strip().upper()
    if name in UNSUPPORTED:
        raise FormatError(
            f"unsupported action {name}: {UNSUPPORTED[name]}; no canonical counterpart"
        )
    if name in _POINTED:
        return Action(type=_POINTED[name], point=point(obj.get("point"), frame, f"{name}.point"))
    if name in _STROKES:
        return Action(
            type=_STROKES[name],
            point=point(obj.get("point1"), frame, f"{name}.point1"),
            end_point=point(obj.get("point2"), frame, f"{name}.point2"),
        )
    if name in _BUTTONS:
        return Action(type=ActionType.SYSTEM_BUTTON, button=_BUTTONS[name])
    if name in _TERMINATE:
        return Action(type=ActionType.TERMINATE, status=_TERMINATE[name])
    if name == "TYPE":
        focus = obj.get("point")
        return Action(
            type=ActionType.TYPE,
            text=text_arg(obj.get("value"), "TYPE.value"),
            point=None if focus is None else point(focus, frame, "TYPE.point"),
        )
    if name == "WAIT":
        seconds = obj.get("value")
        return Action(
            type=ActionType.WAIT,
            duration=None if seconds is None else number(seconds, "WAIT.value"),
        )
    if name == "AWAKE":
        return Action(type=ActionType.OPEN_APP, app=text_arg(obj.get("value"), "AWAKE.value"))
    if name == "ANSWER":
        return Action(type=ActionType.ANSWER, text=text_arg(obj.get("value"), "ANSWER.value"))
    raise FormatError(f"unknown MobileGym action {excerpt(name)}")


def _compact_to_object(text: str) -> dict[str, Any]:
    for match in _COMPACT.finditer(text):
        name, coords = match.group(1), match.group(2)
        if name not in ACTION_NAMES:
            continue
        obj: dict[str, Any] = {"action": name}
        if coords is not None:
            obj["point"] = [c.strip() for c in coords.split(",")]
        return obj
    raise FormatError("no MobileGym action found (expected JSON or e.g. CLICK[x,y])")


def parse(text: str, frame: CoordFrame) -> ParsedOutput:
    if text.lstrip().startswith("{"):
        obj = first_json_object(text)
    else:
        try:
            obj = _compact_to_object(text)
        except FormatError:
            if "{" not in text:
                raise
            obj = first_json_object(text)
    return ParsedOutput(object_to_action(obj, frame), envelope_ok=True)


def supports(action: Action) -> bool:
    t = action.type
    if t in _POINTED.values():
        return action.point is not None and args_within(action, {"point"})
    if t in _STROKES.values():
        return action.end_point is not None and args_within(action, {"point", "end_point"})
    if t == ActionType.SYSTEM_BUTTON:
        return action.button in _BUTTONS.values()
    allowed = {
        ActionType.TYPE: {"text", "point"},
        ActionType.WAIT: {"duration"},
        ActionType.OPEN_APP: {"app"},
        ActionType.ANSWER: {"text"},
        ActionType.TERMINATE: {"status"},
    }.get(t)
    return allowed is not None and args_within(action, allowed)


def action_to_object(action: Action, frame: CoordFrame) -> dict[str, Any]:
    t = action.type
    if t in _POINTED.values():
        return {"action": t.value.upper(), "point": list(frame.from_grid(action.point))}
    if t in _STROKES.values():
        return {
            "action": t.value.upper(),
            "point1": list(frame.from_grid(action.point)),
            "point2": list(frame.from_grid(action.end_point)),
        }
    if t == ActionType.SYSTEM_BUTTON:
        return {"action": (action.button or "").upper()}
    if t == ActionType.TERMINATE:
        return {"action": {v: k for k, v in _TERMINATE.items()}[action.status or ""]}
    name = {
        ActionType.TYPE: "TYPE",
        ActionType.WAIT: "WAIT",
        ActionType.OPEN_APP: "AWAKE",
        ActionType.ANSWER: "ANSWER",
    }[t]
    obj: dict[str, Any] = {"action": name}
    value = action.text if action.text is not None else action.app
    if value is None:
        value = action.duration
    if value is not None:
        obj["value"] = value
    if t == ActionType.TYPE and action.point is not None:
        obj["point"] = list(frame.from_grid(action.point))
    return obj


def render(action: Action, frame: CoordFrame, thinking: str | None, conclusion: str | None) -> str:
    return json.dumps(action_to_object(action, frame), ensure_ascii=False)


FORMAT = ActionFormat(name="mobilegym", parse_fn=parse, render_fn=render, supports=supports)
