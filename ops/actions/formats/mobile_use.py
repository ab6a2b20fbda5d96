"""The `mobile_use` tool-call arguments shared by Qwen3-VL and GUI-Owl responses.

`{"name": "mobile_use", "arguments": {"action": "click", "coordinate": [x, y]}}` with actions
click, long_press (time), swipe (coordinate → coordinate2), type, answer, system_button
(Back/Home/Menu/Enter/Recent), open (app name in `text`), wait (time), terminate (status),
key (`text`). Extension beyond the published schema: a swipe may carry `direction` (finger
direction) instead of `coordinate2`, so direction-only swipes can be written.
"""

from __future__ import annotations

import json
from typing import Any

from ops.actions import json_limits
from ops.actions.coords import CoordFrame
from ops.actions.excerpt import excerpt
from ops.actions.formats.base import (
    FormatError,
    args_within,
    json_object_at,
    number,
    point,
    text_arg,
)
from phonesim.actions import Action, ActionType

TOOL_NAME = "mobile_use"

_NATIVE = {
    "click": ActionType.CLICK,
    "long_press": ActionType.LONG_PRESS,
    "swipe": ActionType.SWIPE,
    "type": ActionType.TYPE,
    "answer": ActionType.ANSWER,
    "system_button": ActionType.SYSTEM_BUTTON,
    "open": ActionType.OPEN_APP,
    "wait": ActionType.WAIT,
    "terminate": ActionType.TERMINATE,
    "key": ActionType.KEY,
}
_NAME_OF = {v: k for k, v in _NATIVE.items()}


def tool_call_at(text: str, start: int) -> dict[str, Any]:
    """The `mobile_use` arguments of the tool call whose JSON starts after `start`."""
    found = json_object_at(text, start)
    if found is None:
        raise FormatError("<tool_call> holds no JSON object")
    call, _ = found
    if call.get("name") != TOOL_NAME:
        raise FormatError(f"tool call names {excerpt(call.get('name'))}, expected {TOOL_NAME!r}")
    arguments = call.get("arguments")
    if isinstance(arguments, str):  # some servers serialise arguments as a JSON string
        try:
            arguments = json_limits.loads(arguments)
        except ValueError as exc:  # not JSON, or past the size/depth/digit limits
            raise FormatError(f"tool call arguments are a string that is not JSON ({exc})") from None
    if not isinstance(arguments, dict):
        raise FormatError("tool call has no 'arguments' object")
    return arguments


def arguments_to_action(args: dict[str, Any], frame: CoordFrame) -> Action:
    """A canonical action from `mobile_use` arguments."""
    name = args.get("action")
    if not isinstance(name, str) or name.strip().lower() not in _NATIVE:
        raise FormatError(f"unknown mobile_use action {excerpt(name)}")
    atype = _NATIVE[name.strip().lower()]
    kw: dict[str, Any] = {}
    if "coordinate" in args:
        kw["point"] = point(args["coordinate"], frame, f"{name}.coordinate")
    if atype == ActionType.SWIPE:
        if "coordinate2" in args:
            kw["end_point"] = point(args["coordinate2"], frame, f"{name}.coordinate2")
        if "direction" in args:
            kw["direction"] = text_arg(args["direction"], "swipe.direction").strip().lower()
    elif atype in (ActionType.TYPE, ActionType.ANSWER):
        kw["text"] = text_arg(args.get("text"), f"{name}.text")
    elif atype == ActionType.OPEN_APP:
        kw["app"] = text_arg(args.get("text", args.get("app")), "open.text")
    elif atype == ActionType.KEY:
        kw["key"] = text_arg(args.get("text"), "key.text")
    elif atype == ActionType.SYSTEM_BUTTON:
        kw["button"] = text_arg(args.get("button"), "system_button.button").strip().lower()
    elif atype == ActionType.TERMINATE:
        kw["status"] = text_arg(args.get("status"), "terminate.status").strip().lower()
    if atype in (ActionType.WAIT, ActionType.LONG_PRESS) and args.get("time") is not None:
        kw["duration"] = number(args["time"], f"{name}.time")
    return Action(type=atype, **kw)


def supports(action: Action) -> bool:
    t = action.type
    if t == ActionType.CLICK:
        return action.point is not None and args_within(action, {"point"})
    if t == ActionType.LONG_PRESS:
        return action.point is not None and args_within(action, {"point", "duration"})
    if t == ActionType.SWIPE:
        if action.direction is None:
            return args_within(action, {"point", "end_point"})
        return args_within(action, {"point", "direction"})
    allowed = {
        ActionType.TYPE: {"text"},
        ActionType.ANSWER: {"text"},
        ActionType.SYSTEM_BUTTON: {"button"},
        ActionType.OPEN_APP: {"app"},
        ActionType.WAIT: {"duration"},
        ActionType.TERMINATE: {"status"},
        ActionType.KEY: {"key"},
    }.get(t)
    return allowed is not None and args_within(action, allowed)


def action_to_arguments(action: Action, frame: CoordFrame) -> dict[str, Any]:
    """`mobile_use` arguments for a supported canonical action."""
    args: dict[str, Any] = {"action": _NAME_OF[action.type]}
    if action.point is not None:
        args["coordinate"] = list(frame.from_grid(action.point))
    if action.end_point is not None:
        args["coordinate2"] = list(frame.from_grid(action.end_point))
    if action.direction is not None:
        args["direction"] = action.direction
    if action.text is not None:
        args["text"] = action.text
    if action.app is not None:
        args["text"] = action.app
    if action.key is not None:
        args["text"] = action.key
    if action.button is not None:
        args["button"] = action.button.capitalize()
    if action.status is not None:
        args["status"] = action.status
    if action.duration is not None:
        args["time"] = action.duration
    return args


def tool_call_json(action: Action, frame: CoordFrame) -> str:
    call = {"name": TOOL_NAME, "arguments": action_to_arguments(action, frame)}
    return json.dumps(call, ensure_ascii=False)
