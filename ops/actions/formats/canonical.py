"""The canonical JSON form itself: `{"type": "click", "args": {"point": [x, y]}}` (grid units)."""

from __future__ import annotations

from ops.actions.coords import CoordFrame
from ops.actions.formats.base import ActionFormat, ParsedOutput
from phonesim.actions import Action


def parse(text: str, frame: CoordFrame) -> ParsedOutput:
    return ParsedOutput(Action.from_json(text.strip()), envelope_ok=True)


def render(action: Action, frame: CoordFrame, thinking: str | None, conclusion: str | None) -> str:
    return action.to_json()


FORMAT = ActionFormat(
    name="canonical", parse_fn=parse, render_fn=render, supports=lambda action: True
)
