"""Canonical action model, parsers and renderers for each model's native format."""

from ops.actions.codec import (
    AUTO,
    FORMAT_NAMES,
    detect_format,
    parse,
    parse_with_context,
    render,
    supports,
)
from ops.actions.formats import FORMATS, ActionFormat, ParsedOutput, UnsupportedAction
from ops.actions.formats.base import REASONING_PARTS, ReasoningParts
from ops.actions.formats.mobilewizard import parse_structured, render_structured
from phonesim.actions import (
    DIRECTIONS,
    GRID,
    POINTED_TYPES,
    SYSTEM_BUTTONS,
    TERMINATE_STATUSES,
    Action,
    ActionError,
    ActionType,
    ParseFailure,
    ParseResult,
)

__all__ = [
    "AUTO",
    "DIRECTIONS",
    "FORMATS",
    "FORMAT_NAMES",
    "GRID",
    "POINTED_TYPES",
    "REASONING_PARTS",
    "SYSTEM_BUTTONS",
    "TERMINATE_STATUSES",
    "Action",
    "ActionError",
    "ActionFormat",
    "ActionType",
    "ParseFailure",
    "ParseResult",
    "ParsedOutput",
    "ReasoningParts",
    "UnsupportedAction",
    "detect_format",
    "parse",
    "parse_structured",
    "parse_with_context",
    "render",
    "render_structured",
    "supports",
]
