"""JSON read from untrusted text (model answers, dataset cells) with bounded work.

`check_json_limits` measures length, bracket nesting and digit runs with a few linear passes
(regular expressions that cannot backtrack, one loop over the brackets) before any parser sees
the text; `loads` checks and decodes; `find_json` finds the first JSON value embedded in prose
with bounded rescanning. Past a limit `JSONLimitError`
(a `ValueError`) names it, and callers turn it into their own parse failure. Unchecked, a
5,000-digit number makes `json` raise a bare ValueError, 100,000 nested brackets a
RecursionError, and a search that retries a decode at every bracket goes quadratic.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

MAX_CHARS = 1_000_000
MAX_DEPTH = 100  # critic answers nest 4 deep, actions 3
MAX_DIGITS = 1000  # Python's own int limit is 4,300 digits; no number a model writes comes close
MAX_STARTS = 1000  # brackets `find_json` decodes from before giving up (each costs a scan to its position)

# A string literal, closed or not: the optional closing quote means no start position fails,
# so the scan never backtracks over the rest of the text.
_STRING = re.compile(r'"[^"\\]*+(?:\\.[^"\\]*+)*+"?', re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_OPENERS = frozenset("[{")


class JSONLimitError(ValueError):
    """Text that is too long, too deeply nested or holds too long a number to decode."""


class NoJSONFound(ValueError):
    """`find_json` found no value of the wanted type; the message is the last decode error."""


def _nested_deeper_than(outside_strings: str, max_depth: int) -> bool:
    """Whether some stretch of `outside_strings` opens more than `max_depth` brackets than it closes,
    i.e. a decode starting in it could nest that deep (unbalanced closers in prose do not hide later
    depth). One pass over the brackets that stops at the first stretch past the limit."""
    depth = low = 0
    for bracket in _NOT_BRACKET.sub("", outside_strings):
        if bracket in _OPENERS:
            depth += 1
            if depth - low > max_depth:
                return True
        else:
            depth -= 1
            if depth < low:
                low = depth
    return False


def check_json_limits(text: str, *, max_chars: int = MAX_CHARS, max_depth: int = MAX_DEPTH,
                      max_digits: int = MAX_DIGITS) -> None:
    """Raise `JSONLimitError` when decoding `text` would exceed a limit."""
    if len(text) > max_chars:
        raise JSONLimitError(f"{len(text)} characters, over the {max_chars}-character limit")
    outside_strings = _STRING.sub('""', text)
    # Only at the start of a digit run, so that each run is scanned once (not once per digit).
    long_number = re.search(rf"(?<!\d)\d{{{max_digits + 1}}}", outside_strings)
    if long_number:
        raise JSONLimitError(f"a number with more than {max_digits} digits")
    if _nested_deeper_than(outside_strings, max_depth):
        raise JSONLimitError(f"brackets nested more than {max_depth} deep")


def loads(text: str, **limits: int) -> Any:
    """`json.loads` after `check_json_limits`; raises `JSONLimitError` or `json.JSONDecodeError`."""
    check_json_limits(text, **limits)
    return json.loads(text)


_DECODER = json.JSONDecoder()


def decode_at(text: str, pos: int) -> tuple[Any, int]:
    """`JSONDecoder.raw_decode(text, pos)` for text already checked by `check_json_limits`.

    Python's own bounds (its recursion limit; 4,300 digits per integer) still apply as a
    backstop and come back as `JSONLimitError`."""
    try:
        return _DECODER.raw_decode(text, pos)
    except json.JSONDecodeError:
        raise
    except (RecursionError, ValueError) as exc:
        raise JSONLimitError(f"{type(exc).__name__}: {str(exc)[:120]}") from None


_OBJECT_START = re.compile(r"\{")
_CONTAINER_START = re.compile(r"[\[{]")
RETRY_BUDGET = 4  # failed decodes may rescan this many times the text before spans are skipped


def find_json(text: str, want: type | tuple[type, ...] = (dict, list), *, max_starts: int = MAX_STARTS) -> Any:
    """The first JSON value of type `want` (dict and/or list) in `text`: decoded at a bracket
    that can start one, or nested in a container decoded there, in document order. Text must
    pass `check_json_limits` first.

    Bounded work: at most `max_starts` brackets are tried; a decoded container is not rescanned
    (its nested values are searched in memory); after a failed decode the next bracket tried is
    the next one in the text, as long as failed decodes have scanned less than `RETRY_BUDGET`
    times the text, and past its error position after that. Raises `NoJSONFound` (with the
    last decode error), or `JSONLimitError` from Python's own bounds."""
    wanted = want if isinstance(want, tuple) else (want,)
    opening = _CONTAINER_START if list in wanted else _OBJECT_START
    budget = RETRY_BUDGET * len(text) + 1000
    last_error = "no JSON object found"
    match = opening.search(text)
    for _ in range(max_starts):
        if match is None:
            break
        start = match.start()
        try:
            value, end = decode_at(text, start)
        except json.JSONDecodeError as exc:
            last_error = f"malformed JSON: {exc.msg}"
            budget -= exc.pos - start
            end = start + 1 if budget > 0 else max(exc.pos, start + 1)
        else:
            found = next(_values_of(value, wanted), None)
            if found is not None:
                return found
        match = opening.search(text, end)
    raise NoJSONFound(last_error)


def _values_of(value: Any, want: tuple[type, ...]) -> Iterator[Any]:
    """`value` and the containers nested in it that are of type `want`, in document order."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, want):
            yield item
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else ()
        stack.extend(reversed([c for c in children if isinstance(c, dict | list)]))
