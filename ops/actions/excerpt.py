"""Bounded quotes of untrusted values (model output, dataset cells, critic answers) for error
messages: a message names what was wrong with an input and shows a short excerpt of it, never the
whole input back (a 99,000-character string, a 100,000-deep list, a 5,000-digit integer).

The work is bounded too: containers are walked a few levels and items deep (`reprlib`), strings
and bytes are cut before they are quoted, and an integer too long to print is described by its
size instead of being converted to decimal (quadratic in its length).
"""

from __future__ import annotations

import reprlib
from typing import Any

EXCERPT_CHARS = 80
MESSAGE_CHARS = 300  # an error message built from several excerpts stays under this
_PRINTABLE_INT_BITS = 256  # about 77 decimal digits


class _BoundedRepr(reprlib.Repr):
    def __init__(self, limit: int) -> None:
        super().__init__()
        self.maxstring = self.maxother = self.maxlong = limit
        self.maxlevel = 3

    def repr_int(self, x: int, level: int) -> str:
        if x.bit_length() > _PRINTABLE_INT_BITS:
            return f"<int of about {int(x.bit_length() * 0.30103) + 1} digits>"
        return super().repr_int(x, level)

    def repr_bytes(self, x: bytes, level: int) -> str:
        return repr(x[: self.maxstring]) + ("…" if len(x) > self.maxstring else "")

    def repr_str(self, x: str, level: int) -> str:
        return repr(x[: self.maxstring]) + ("…" if len(x) > self.maxstring else "")


def excerpt(value: Any, limit: int = EXCERPT_CHARS) -> str:
    """repr of a possibly huge or hostile value, cut to about `limit` characters (a cut ends in "…")."""
    text = _BoundedRepr(limit).repr(value)
    return text if len(text) <= limit else text[:limit] + "…"


def clipped(message: str, limit: int = MESSAGE_CHARS) -> str:
    """An error message built elsewhere (a library, the simulator's action model) cut to `limit`
    characters, for messages that may quote their input whole."""
    return message if len(message) <= limit else message[:limit] + f"… ({len(message) - limit} more characters)"
