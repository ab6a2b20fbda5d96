"""Reading a model's JSON answer with bounded work: the JSON value in its text (fenced or not), validated
against the expected pydantic model, and the repair message a failed answer gets."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from itertools import islice
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from ops.actions.excerpt import EXCERPT_CHARS, clipped
from ops.actions.json_limits import JSONLimitError, NoJSONFound, check_json_limits, find_json

from ops.agent.llm_errors import ErrorKind

T = TypeVar("T", bound=BaseModel)

class OutputError(ValueError):
    """An answer that is not usable JSON for the requested model (before repair)."""

    def __init__(self, kind: ErrorKind, message: str) -> None:
        super().__init__(message)
        self.kind = kind


# Possessive whitespace: backtracking into it would rescan the rest of an unclosed fence once per
# whitespace character (12 s for a fence opened before 200,000 spaces).
_FENCE = re.compile(r"```(?:json|JSON)?\s*+(.*?)```", re.DOTALL)


MAX_ANSWER_CHARS = 200_000  # ~50,000 tokens: far past any answer's max_tokens; longer text is not read


MAX_FENCES = 8  # fenced blocks tried as a whole before searching the text for a JSON value


def extract_json(text: str) -> Any:
    """The JSON value in a model answer: the whole text, a fenced block, or the first JSON
    object/array embedded in prose. Raises `OutputError(INVALID_JSON)` when there is none, and
    when the answer is not text or is past the limits on length, nesting and digits
    (`ops.actions.json_limits`, `MAX_ANSWER_CHARS`), which are checked before anything is decoded."""
    if not isinstance(text, str):
        raise OutputError(ErrorKind.INVALID_JSON, f"the answer is {type(text).__name__}, not text")
    stripped = text.strip()
    if not stripped:
        raise OutputError(ErrorKind.INVALID_JSON, "the answer is empty")
    try:
        check_json_limits(text, max_chars=MAX_ANSWER_CHARS)
    except JSONLimitError as exc:
        raise OutputError(ErrorKind.INVALID_JSON, f"the answer cannot be read as JSON: {exc}") from None
    candidates = [stripped] + [m.group(1).strip() for m in islice(_FENCE.finditer(text), MAX_FENCES)]
    for candidate in candidates:
        try:
            return json.loads(candidate)
        except (ValueError, RecursionError):  # not JSON; or Python's own limits, as a backstop
            continue
    try:
        return find_json(text, (dict, list))
    except (NoJSONFound, JSONLimitError):
        raise OutputError(ErrorKind.INVALID_JSON, "no JSON object found in the answer") from None


def _describe_validation_error(exc: ValidationError, limit: int = 8) -> str:
    """The first `limit` errors, each naming where and what, clipped (an answer's keys can be long)."""
    parts = []
    for err in exc.errors(include_url=False, include_input=False)[:limit]:
        loc = ".".join(str(p) for p in err["loc"]) or "(root)"
        parts.append(f"{clipped(loc, EXCERPT_CHARS)}: {clipped(err['msg'])}")
    more = exc.error_count() - limit
    return "; ".join(parts) + (f"; and {more} more" if more > 0 else "")


def parse_json_output(text: str, schema: type[T], context: Mapping[str, Any] | None = None) -> T:
    """Extract and validate; raises `OutputError` with kind INVALID_JSON or SCHEMA, and nothing
    else, for any `text`."""
    data = extract_json(text)
    try:
        return schema.model_validate(data, context=dict(context) if context else None)
    except ValidationError as exc:
        raise OutputError(ErrorKind.SCHEMA, _describe_validation_error(exc)) from None
    except (ValueError, TypeError, RecursionError, OverflowError) as exc:  # raised by a validator itself
        raise OutputError(ErrorKind.SCHEMA, f"{type(exc).__name__}: {clipped(str(exc))}") from None


def repair_message(error: OutputError) -> str:
    return (
        f"Your previous answer could not be used: {error}. "
        "Reply again with only the corrected JSON object, including every required field."
    )
