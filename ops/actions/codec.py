"""Parse model output into canonical actions and render them back, by format name.

`parse` never raises: anything that is not a valid action comes back as a `ParseFailure`
with a specific reason. `render` raises `UnsupportedAction` for an action the format cannot
write without loss (e.g. a drag in AndroidWorld).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ops.actions.coords import GRID_1000, CoordFrame
from ops.actions.formats import FORMATS, ParsedOutput, label_echo
from ops.actions.formats.base import first_json_object
from ops.actions.formats.mobilegym import ACTION_NAMES as MOBILEGYM_NAMES
from phonesim.actions import Action, ParseFailure

AUTO = "auto"
FORMAT_NAMES = tuple(FORMATS)

_GUIOWL_LINE = re.compile(r"^[ \t]*Action:", re.MULTILINE)
_MOBILERL_CALL = re.compile(r"(?<![\w.])(do|finish)\s*\(")
_WIZARD_CALL = re.compile(
    r"(?<![\w.])(CLICK|LONG_PRESS|SWIPE|TYPE|OPEN_APP|WAIT|System_Button|Terminate|Answer)\s*\(",
    re.IGNORECASE,
)
_GYM_COMPACT = re.compile(
    r"\b(" + "|".join(sorted(MOBILEGYM_NAMES)) + r")\b\s*(\[|$)", re.MULTILINE
)


def _json_format(text: str) -> str | None:
    try:
        obj = first_json_object(text)
    except (ValueError, RecursionError):  # FormatError, or json's own limits (huge integers)
        return None
    if "type" in obj:
        return "canonical"
    if "action_type" in obj:
        return "androidworld"
    if "action" in obj:
        return "mobilegym"
    return None


def detect_format(text: str) -> str | None:
    """The format name `text` looks like, or None when it matches none of them."""
    if not isinstance(text, str):
        return None
    if text.lstrip().startswith("{"):
        return _json_format(text)
    if "<tool_call>" in text:
        has_owl_line = _GUIOWL_LINE.search(text) and "<conclusion>" not in text
        return "guiowl" if has_owl_line else "qwen3vl"
    if _MOBILERL_CALL.search(text):
        return "mobilerl"
    if "<answer>" in text or _WIZARD_CALL.search(text):
        return "mobilewizard"
    if "{" in text:
        found = _json_format(text)
        if found:
            return found
    if _GYM_COMPACT.search(text):
        return "mobilegym"
    return None


def parse_with_context(text: str, fmt: str, *, frame: CoordFrame = GRID_1000,
                       labels: Sequence[str] | None = None) -> ParsedOutput:
    """Parse `text` written in format `fmt` (or "auto"), keeping thinking and conclusion text.

    `frame` says how the model's coordinates map to the grid (see `ops.actions.coords`);
    it is ignored by the canonical format, which is always in grid units. `labels` (the
    observation's element labels, as the prompt listed them) lets the label-echo format
    resolve the echoed row to its element, as rollouts do; other formats ignore them.
    """
    if fmt == label_echo.FORMAT_NAME and labels is not None:
        action = label_echo.parse_output(text, labels)
        return ParsedOutput(action, conclusion=label_echo.split_echo(text)[0],
                            envelope_ok=not isinstance(action, ParseFailure))
    if fmt == AUTO:
        detected = detect_format(text)
        if detected is None:
            return ParsedOutput(ParseFailure("could not detect the action format", str(text), AUTO))
        fmt = detected
    if fmt not in FORMATS:
        return ParsedOutput(ParseFailure(f"unknown format {fmt!r}", str(text), fmt))
    return FORMATS[fmt].parse(text, frame)


def parse(text: str, fmt: str, *, frame: CoordFrame = GRID_1000) -> Action | ParseFailure:
    """The canonical action in `text` (format `fmt` or "auto"), or a `ParseFailure`."""
    return parse_with_context(text, fmt, frame=frame).action


def render(
    action: Action,
    fmt: str,
    *,
    frame: CoordFrame = GRID_1000,
    thinking: str | None = None,
    conclusion: str | None = None,
) -> str:
    """`action` written in format `fmt`, optionally with the thinking/conclusion text the
    format holds (qwen3vl: both; guiowl: both, the conclusion is the `Action:` line;
    mobilewizard: thinking)."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; known: {', '.join(FORMAT_NAMES)}")
    return FORMATS[fmt].render(action, frame, thinking, conclusion)


def supports(action: Action, fmt: str) -> bool:
    """True when format `fmt` can write `action` and read the same action back."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; known: {', '.join(FORMAT_NAMES)}")
    return FORMATS[fmt].supports(action)
