"""Parse model output into canonical actions and render them back, by format name.

`parse` and `parse_with_context` never raise, whatever the input (any type, any size): anything
that is not a valid action comes back as a `ParseFailure` with a specific reason, after bounded
work (the shared contract is `formats.base.parse_guarded`). `render` raises `UnsupportedAction`
for an action the format cannot write without loss (e.g. a drag in AndroidWorld).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ops.actions.coords import GRID_1000, CoordFrame
from ops.actions.formats import FORMATS, ParsedOutput, label_echo
from ops.actions.formats.base import MAX_OUTPUT_CHARS, FormatError, first_json_object, parse_guarded
from ops.actions.formats.mobilegym import ACTION_NAMES as MOBILEGYM_NAMES
from ops.actions.json_limits import check_json_limits
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
        check_json_limits(text)
        obj = first_json_object(text)
    except ValueError:  # FormatError, or past the limits on size, depth or digits
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
    if not isinstance(text, str) or len(text) > MAX_OUTPUT_CHARS:
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
        return label_echo.parse_labelled(text, labels)
    if fmt == AUTO:
        detected = detect_format(text)
        if detected is None:  # the shared checks name a limit or a wrong type before this
            return parse_guarded(AUTO, text, _undetected)
        fmt = detected
    if fmt not in FORMATS:
        return ParsedOutput(ParseFailure(f"unknown format {fmt!r}", text if isinstance(text, str) else "", str(fmt)))
    return FORMATS[fmt].parse(text, frame)


def _undetected(text: str) -> ParsedOutput:
    raise FormatError("could not detect the action format")


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
