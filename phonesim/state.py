"""JSON state helpers: fast copy, canonical hashing, flattening and diffing for side-effect checks."""

from __future__ import annotations

import fnmatch
import hashlib
import json
import marshal
from typing import Any

JSON = Any


def copy_json(value: JSON) -> JSON:
    """Deep copy of a JSON tree; marshal round-trips plain containers ~20× faster than deepcopy."""
    return marshal.loads(marshal.dumps(value))


def canonical_json(value: JSON) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def state_hash(value: JSON) -> str:
    return hashlib.blake2b(canonical_json(value).encode(), digest_size=12).hexdigest()


def flatten(value: JSON, prefix: str = "") -> dict[str, JSON]:
    """Scalar leaf paths `a.b.c` -> value; list items are addressed by index (`a.0.b`).
    Empty containers have no leaves, so filling one reports only the new items."""
    out: dict[str, JSON] = {}
    if isinstance(value, dict):
        for k, v in value.items():
            out.update(flatten(v, f"{prefix}.{k}" if prefix else str(k)))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out.update(flatten(v, f"{prefix}.{i}" if prefix else str(i)))
    else:
        out[prefix] = value
    return out


def diff_paths(before: JSON, after: JSON) -> list[str]:
    """Sorted leaf paths whose value was added, removed or changed."""
    a, b = flatten(before), flatten(after)
    return sorted(p for p in a.keys() | b.keys() if a.get(p, _MISSING) != b.get(p, _MISSING))


def path_matches(path: str, patterns: list[str]) -> bool:
    """True if `path` equals/lies under a pattern (fnmatch wildcards allowed per segment)."""
    for pat in patterns:
        if fnmatch.fnmatchcase(path, pat) or fnmatch.fnmatchcase(path, pat + ".*"):
            return True
    return False


_MISSING = object()
