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
    "SYSTEM_BUTTONS",
    "TERMINATE_STATUSES",
    "Action",
    "ActionError",
    "ActionFormat",
    "ActionType",
    "ParseFailure",
    "ParseResult",
    "ParsedOutput",
    "UnsupportedAction",
    "detect_format",
    "parse",
    "parse_with_context",
    "render",
    "supports",
]
