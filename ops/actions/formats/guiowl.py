"""GUI-Owl responses: `Action: <short imperative>` then a `mobile_use` tool call.

An optional leading `<think>…</think>` block (the Think variants) is kept as thinking; the
`Action:` line is the conclusion. (MobileForge prompt 7)
"""

from __future__ import annotations

import re

from ops.actions.coords import CoordFrame
from ops.actions.formats import mobile_use
from ops.actions.formats.base import ActionFormat, ParsedOutput
from ops.actions.formats.qwen3vl import action_after, after_leading_block
from phonesim.actions import Action

_ACTION_LINE = re.compile(r"^[ \t]*Action:[ \t]*(.*)$", re.MULTILINE)


def parse(text: str, frame: CoordFrame) -> ParsedOutput:
    thinking, start = after_leading_block(text)
    action, call_pos = action_after(text, start, frame)
    line = _ACTION_LINE.search(text, start, call_pos)
    conclusion = line.group(1).strip() if line else None
    return ParsedOutput(action, thinking, conclusion, conclusion is not None)


def render(action: Action, frame: CoordFrame, thinking: str | None, conclusion: str | None) -> str:
    parts = []
    if thinking is not None:
        parts.append(f"<think>{thinking}</think>")
    if conclusion is not None:
        parts.append(f"Action: {conclusion}")
    parts.append(f"<tool_call>\n{mobile_use.tool_call_json(action, frame)}\n</tool_call>")
    return "\n".join(parts)


FORMAT = ActionFormat(
    name="guiowl",
    parse_fn=parse,
    render_fn=render,
    supports=mobile_use.supports,
    holds_thinking=True,
    holds_conclusion=True,
)
