"""MobileWizard's unified action space (MobileWizard table 5) inside `<think>…</think>
<answer>…</answer>`: CLICK(x, y), LONG_PRESS(x, y), SWIPE((x1, y1), (x2, y2)),
TYPE(content=""), OPEN_APP(app=""), WAIT(second=""), System_Button(Back|Home|Enter|Recent),
Terminate(status=""), Answer(content=""). Names are matched case-insensitively.

MobileWizard is Qwen2.5-VL based, so its checkpoints emit pixels of the resized screenshot:
pass `coords.ResizedPixels(w, h)` as the frame for them; the default frame is the grid.

`parse` accepts free-text thinking and fills `ParsedOutput.reasoning` when the thinking is the
four-part structured reasoning (MobileWizard §3.3, `formats.reasoning`); `parse_structured`
requires it (and the exact `<think>`/`<answer>` envelope), and `render_structured` writes it.
"""

from __future__ import annotations

from typing import Any

from ops.actions.coords import GRID_1000, CoordFrame
from ops.actions.formats.base import (
    ActionFormat,
    Call,
    FormatError,
    ParsedOutput,
    ReasoningParts,
    args_within,
    duration_text,
    find_call,
    number,
    parse_guarded,
    point,
    py_literal,
    tagged,
    text_arg,
)
from ops.actions.formats.qwen3vl import after_leading_block
from ops.actions.formats.reasoning import read_layout, read_reasoning, render_reasoning
from phonesim.actions import Action, ActionType

_NAMES = {
    "OPEN_APP": ActionType.OPEN_APP,
    "CLICK": ActionType.CLICK,
    "LONG_PRESS": ActionType.LONG_PRESS,
    "SWIPE": ActionType.SWIPE,
    "TYPE": ActionType.TYPE,
    "WAIT": ActionType.WAIT,
    "SYSTEM_BUTTON": ActionType.SYSTEM_BUTTON,
    "TERMINATE": ActionType.TERMINATE,
    "ANSWER": ActionType.ANSWER,
}
_BUTTONS = ("back", "home", "enter", "recent")


def _one(call: Call, key: str) -> Any:
    """The single argument of a call, given positionally or as `key=`."""
    if key in call.kwargs:
        return call.kwargs[key]
    if len(call.args) == 1:
        return call.args[0]
    raise FormatError(f"{call.name}: expected one argument {key!r}")


def _xy(call: Call, frame: CoordFrame) -> tuple[float, float]:
    values = call.args[0] if len(call.args) == 1 else list(call.args)
    if "x" in call.kwargs or "y" in call.kwargs:
        values = [call.kwargs.get("x"), call.kwargs.get("y")]
    return point(values, frame, call.name)


def call_to_action(call: Call, frame: CoordFrame) -> Action:
    atype = _NAMES[call.name.upper()]
    if atype in (ActionType.CLICK, ActionType.LONG_PRESS):
        return Action(type=atype, point=_xy(call, frame))
    if atype == ActionType.SWIPE:
        if len(call.args) != 2:
            raise FormatError("SWIPE: expected two points SWIPE((x1, y1), (x2, y2))")
        return Action(
            type=atype,
            point=point(call.args[0], frame, "SWIPE start"),
            end_point=point(call.args[1], frame, "SWIPE end"),
        )
    if atype in (ActionType.TYPE, ActionType.ANSWER):
        return Action(type=atype, text=text_arg(_one(call, "content"), f"{call.name}.content"))
    if atype == ActionType.OPEN_APP:
        return Action(type=atype, app=text_arg(_one(call, "app"), "OPEN_APP.app"))
    if atype == ActionType.WAIT:
        if not call.args and not call.kwargs:
            return Action(type=atype)
        seconds = _one(call, "second")
        return Action(
            type=atype, duration=None if seconds == "" else number(seconds, "WAIT.second")
        )
    if atype == ActionType.SYSTEM_BUTTON:
        return Action(type=atype, button=text_arg(_one(call, "button"), "System_Button").lower())
    return Action(type=atype, status=text_arg(_one(call, "status"), "Terminate.status").lower())


def parse(text: str, frame: CoordFrame) -> ParsedOutput:
    thinking, start = after_leading_block(text)
    answer_pos = text.find("<answer>", start)
    region = text[answer_pos + len("<answer>") :] if answer_pos >= 0 else text[start:]
    call = find_call(region, lambda name: name.upper() in _NAMES)
    answered = answer_pos >= 0 and tagged(text[start:], "answer") is not None
    reasoning = None if thinking is None else read_reasoning(thinking).parts
    return ParsedOutput(
        call_to_action(call, frame), thinking, None, thinking is not None and answered, reasoning
    )


def _parse_structured(text: str, frame: CoordFrame) -> ParsedOutput:
    layout = read_layout(text)
    problem = layout.envelope_problem or layout.sections.problem
    if problem:
        raise FormatError(f"structured reasoning: {problem}")
    return parse(text, frame)


def parse_structured(text: str, frame: CoordFrame = GRID_1000) -> ParsedOutput:
    """A structured response: `<think>` holding the four parts in order, then `<answer>`, nothing
    else. Anything less (a missing, repeated, empty or out-of-order part, no answer, free-text
    thinking) is a `ParseFailure` naming the first problem; never raises (`parse_guarded`)."""
    return parse_guarded(FORMAT.name, text, lambda checked: _parse_structured(checked, frame))


def supports(action: Action) -> bool:
    t = action.type
    if t in (ActionType.CLICK, ActionType.LONG_PRESS):
        return action.point is not None and args_within(action, {"point"})
    if t == ActionType.SWIPE:
        return action.end_point is not None and args_within(action, {"point", "end_point"})
    if t == ActionType.SYSTEM_BUTTON:
        return action.button in _BUTTONS
    allowed = {
        ActionType.TYPE: {"text"},
        ActionType.ANSWER: {"text"},
        ActionType.OPEN_APP: {"app"},
        ActionType.WAIT: {"duration"},
        ActionType.TERMINATE: {"status"},
    }.get(t)
    return allowed is not None and args_within(action, allowed)


def _call_text(action: Action, frame: CoordFrame) -> str:
    t = action.type
    if t in (ActionType.CLICK, ActionType.LONG_PRESS):
        x, y = frame.from_grid(action.point)
        return f"{t.value.upper()}({x}, {y})"
    if t == ActionType.SWIPE:
        (x1, y1), (x2, y2) = frame.from_grid(action.point), frame.from_grid(action.end_point)
        return f"SWIPE(({x1}, {y1}), ({x2}, {y2}))"
    if t == ActionType.TYPE:
        return f"TYPE(content={py_literal(action.text)})"
    if t == ActionType.ANSWER:
        return f"Answer(content={py_literal(action.text)})"
    if t == ActionType.OPEN_APP:
        return f"OPEN_APP(app={py_literal(action.app)})"
    if t == ActionType.WAIT:
        seconds = "" if action.duration is None else duration_text(action.duration)
        return f"WAIT(second={py_literal(seconds)})"
    if t == ActionType.SYSTEM_BUTTON:
        return f"System_Button({action.button.capitalize()})"
    return f"Terminate(status={py_literal(action.status)})"


def render(action: Action, frame: CoordFrame, thinking: str | None, conclusion: str | None) -> str:
    answer = f"<answer>{_call_text(action, frame)}</answer>"
    return answer if thinking is None else f"<think>{thinking}</think>\n{answer}"


FORMAT = ActionFormat(
    name="mobilewizard", parse_fn=parse, render_fn=render, supports=supports, holds_thinking=True
)


def render_structured(action: Action, parts: ReasoningParts, frame: CoordFrame = GRID_1000) -> str:
    """`action` with its four-part reasoning, as `parse_structured` reads it back."""
    return FORMAT.render(action, frame, thinking=render_reasoning(parts))
