"""Canonical action model, parsers and renderers for each model's native format."""

from ops.actions.model import (
    DIRECTIONS,
    GRID,
    SYSTEM_BUTTONS,
    TERMINATE_STATUSES,
    Action,
    ActionError,
    ActionType,
    ParseFailure,
    ParseResult,
)

__all__ = [
    "DIRECTIONS",
    "GRID",
    "SYSTEM_BUTTONS",
    "TERMINATE_STATUSES",
    "Action",
    "ActionError",
    "ActionType",
    "ParseFailure",
    "ParseResult",
]
