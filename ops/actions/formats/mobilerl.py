"""MobileRL / AndroidLab-style calls: `do(action="Tap", element=[x, y])`, `finish(message=…)`.

`element` may be a point `[x, y]` or a box `[x0, y0, x1, y1]` (taken at its centre).
Actions: Tap, Double Tap, Long Press (also `Long_Press`, `Long_Pres`), Type (`text`),
Swipe (`start`/`end` points, or `direction` with optional `element` and `dist`), Launch
(`app`), Back, Home, Enter, Wait (`duration`, e.g. "3 seconds"). `dist` has no canonical
counterpart and is not carried. `finish()` is a successful terminate; `finish(message=X)`
with a non-empty X is an answer X (AndroidLab reports answers through the finish message).
(MobileRL table 5 and appendix D)
"""

from __future__ import annotations

import re
from typing import Any

from ops.actions.coords import CoordFrame
from ops.actions.excerpt import excerpt
from ops.actions.formats.base import (
    ActionFormat,
    Call,
    FormatError,
    ParsedOutput,
    args_within,
    duration_text,
    find_call,
    number,
    point,
    py_literal,
    text_arg,
)
from phonesim.actions import Action, ActionType

_POINTED = {
    "tap": ActionType.CLICK,
    "double tap": ActionType.DOUBLE_TAP,
    "long press": ActionType.LONG_PRESS,
}
_BUTTONS = {"back": "back", "home": "home", "enter": "enter"}
_NATIVE_NAME = {
    ActionType.CLICK: "Tap",
    ActionType.DOUBLE_TAP: "Double Tap",
    ActionType.LONG_PRESS: "Long Press",
    ActionType.TYPE: "Type",
    ActionType.SWIPE: "Swipe",
    ActionType.OPEN_APP: "Launch",
    ActionType.WAIT: "Wait",
}


def _normal_name(name: str) -> str:
    name = re.sub(r"[\s_]+", " ", name.strip().lower())
    return "long press" if name == "long pres" else name


MAX_DURATION_CHARS = 40  # "12.5 seconds" with room to spare; no longer text is a duration
# Possessive quantifiers: a long digit run is read once, never re-split between `\d*` and `\d+`.
_SECONDS = re.compile(r"\s*+((?:\d++(?:\.\d++)?+|\.\d++)(?:[eE][-+]?+\d++)?+)\s*+(?:seconds?|secs?|s)?\s*+")


def _duration(value: Any) -> float:
    if isinstance(value, str):
        if len(value) > MAX_DURATION_CHARS:
            raise FormatError(f"Wait.duration: {len(value)} characters, over the {MAX_DURATION_CHARS}-character "
                              f"limit of a duration: {excerpt(value)}")
        match = _SECONDS.fullmatch(value)
        if not match:
            raise FormatError(f"Wait.duration: cannot read seconds from {excerpt(value)}")
        return float(match.group(1))
    return number(value, "Wait.duration")


def call_to_action(call: Call, frame: CoordFrame) -> Action:
    kw = call.kwargs
    if call.args:
        raise FormatError(f"{call.name}(...) takes keyword arguments only")
    if call.name == "finish":
        message = kw.get("message")
        if message is None or message == "":
            return Action(type=ActionType.TERMINATE, status="success")
        return Action(type=ActionType.ANSWER, text=text_arg(message, "finish.message"))
    name = _normal_name(text_arg(kw.get("action"), "do.action"))
    element = kw.get("element")
    target = None if element is None else point(element, frame, f"{name}.element")
    if name in _POINTED:
        return Action(type=_POINTED[name], point=target)
    if name == "type":
        return Action(
            type=ActionType.TYPE, text=text_arg(kw.get("text"), "Type.text"), point=target
        )
    if name == "swipe":
        if kw.get("start") is not None or kw.get("end") is not None:
            return Action(
                type=ActionType.SWIPE,
                point=point(kw.get("start"), frame, "Swipe.start"),
                end_point=point(kw.get("end"), frame, "Swipe.end"),
            )
        direction = text_arg(kw.get("direction"), "Swipe.direction").strip().lower()
        return Action(type=ActionType.SWIPE, direction=direction, point=target)
    if name == "launch":
        return Action(type=ActionType.OPEN_APP, app=text_arg(kw.get("app"), "Launch.app"))
    if name in _BUTTONS:
        return Action(type=ActionType.SYSTEM_BUTTON, button=_BUTTONS[name])
    if name == "wait":
        seconds = kw.get("duration")
        return Action(
            type=ActionType.WAIT, duration=None if seconds is None else _duration(seconds)
        )
    raise FormatError(f"unknown MobileRL action {excerpt(kw.get('action'))}")


def parse(text: str, frame: CoordFrame) -> ParsedOutput:
    call = find_call(text, lambda name: name in ("do", "finish"))
    return ParsedOutput(call_to_action(call, frame), envelope_ok=True)


def supports(action: Action) -> bool:
    t = action.type
    if t in _POINTED.values():
        return action.point is not None and args_within(action, {"point"})
    if t == ActionType.SWIPE:
        if action.direction is None:
            return args_within(action, {"point", "end_point"})
        return args_within(action, {"point", "direction"})
    if t == ActionType.ANSWER:
        return action.text != ""
    if t == ActionType.SYSTEM_BUTTON:
        return action.button in _BUTTONS
    if t == ActionType.TERMINATE:
        return action.status == "success"
    allowed = {
        ActionType.TYPE: {"text", "point"},
        ActionType.OPEN_APP: {"app"},
        ActionType.WAIT: {"duration"},
    }.get(t)
    return allowed is not None and args_within(action, allowed)


def _kwargs_text(pairs: list[tuple[str, Any]]) -> str:
    return ", ".join(f"{k}={py_literal(v)}" for k, v in pairs)


def render(action: Action, frame: CoordFrame, thinking: str | None, conclusion: str | None) -> str:
    t = action.type
    if t == ActionType.TERMINATE:
        return "finish()"
    if t == ActionType.ANSWER:
        return f"finish({_kwargs_text([('message', action.text)])})"
    name = action.button.capitalize() if t == ActionType.SYSTEM_BUTTON else _NATIVE_NAME[t]
    pairs: list[tuple[str, Any]] = [("action", name)]
    if t == ActionType.SWIPE and action.end_point is not None:
        pairs += [
            ("start", list(frame.from_grid(action.point))),
            ("end", list(frame.from_grid(action.end_point))),
        ]
    elif action.point is not None:
        pairs.append(("element", list(frame.from_grid(action.point))))
    if action.direction is not None:
        pairs.append(("direction", action.direction))
    if action.text is not None:
        pairs.append(("text", action.text))
    if action.app is not None:
        pairs.append(("app", action.app))
    if action.duration is not None:
        pairs.append(("duration", f"{duration_text(action.duration)} seconds"))
    return f"do({_kwargs_text(pairs)})"


FORMAT = ActionFormat(name="mobilerl", parse_fn=parse, render_fn=render, supports=supports)
