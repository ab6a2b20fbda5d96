"""Qwen3-VL responses: `<thinking>…</thinking><tool_call>{mobile_use}</tool_call><conclusion>…`.

Coordinates are Qwen3-VL's relative ones (per-mille of the screen), i.e. the canonical grid,
unless the caller passes another frame. (MobileForge prompt 6)
"""

from __future__ import annotations

import re

from ops.actions.coords import CoordFrame
from ops.actions.formats import mobile_use
from ops.actions.formats.base import ActionFormat, FormatError, ParsedOutput, tagged
from phonesim.actions import Action

_LEADING_THINK = re.compile(r"\s*<(thinking|think)>(.*?)</\1>", re.DOTALL)


def after_leading_block(text: str) -> tuple[str | None, int]:
    """The leading `<thinking>`/`<think>` block's content and the index just past it."""
    match = _LEADING_THINK.match(text)
    if not match:
        return None, 0
    return match.group(2).strip(), match.end()


def action_after(text: str, start: int, frame: CoordFrame) -> tuple[Action, int]:
    """The action in the first `<tool_call>` at or after `start`, and where the tag began."""
    pos = text.find("<tool_call>", start)
    if pos < 0:
        raise FormatError("no <tool_call> block")
    args = mobile_use.tool_call_at(text, pos + len("<tool_call>"))
    return mobile_use.arguments_to_action(args, frame), pos


def parse(text: str, frame: CoordFrame) -> ParsedOutput:
    thinking, start = after_leading_block(text)
    action, _ = action_after(text, start, frame)
    conclusion = tagged(text[start:], "conclusion")
    envelope_ok = thinking is not None and conclusion is not None and "</tool_call>" in text
    return ParsedOutput(action, thinking, conclusion, envelope_ok)


def render(action: Action, frame: CoordFrame, thinking: str | None, conclusion: str | None) -> str:
    parts = []
    if thinking is not None:
        parts.append(f"<thinking>{thinking}</thinking>")
    parts.append(f"<tool_call>\n{mobile_use.tool_call_json(action, frame)}\n</tool_call>")
    if conclusion is not None:
        parts.append(f"<conclusion>{conclusion}</conclusion>")
    return "\n".join(parts)


FORMAT = ActionFormat(
    name="qwen3vl",
    parse_fn=parse,
    render_fn=render,
    supports=mobile_use.supports,
    holds_thinking=True,
    holds_conclusion=True,
)
