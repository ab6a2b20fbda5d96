"""One line per pydantic validation error, the way every config check of the project reports them."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pydantic import ValidationError


def validation_problems(error: ValidationError, prefix: str) -> list[str]:
    """`prefix.field.path: message (got value)` for each error of `error` (no value shown when it
    is a whole mapping, as a model-level rule's is)."""
    return [f"{'.'.join(map(str, (prefix, *e['loc'])))}: {e['msg']}"
            + ("" if isinstance(e["input"], dict) else f" (got {e['input']!r:.80})") for e in error.errors()]
