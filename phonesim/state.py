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
    """Sorted leaf paths whose value was added, removed or changed: the paths of `flatten`
    whose values differ, found by descending only into subtrees that differ."""
    out: list[str] = []
    _diff(before, after, "", out)
    return sorted(out)


def _diff(a: JSON, b: JSON, prefix: str, out: list[str]) -> None:
    if a == b:  # one C-level comparison skips an unchanged subtree
        return
    if isinstance(a, dict) and isinstance(b, dict):
        pairs = [(str(k), a.get(k, _MISSING), b.get(k, _MISSING)) for k in a.keys() | b.keys()]
    elif isinstance(a, list) and isinstance(b, list):
        pairs = [(str(i), a[i] if i < len(a) else _MISSING, b[i] if i < len(b) else _MISSING)
                 for i in range(max(len(a), len(b)))]
    else:  # scalars, or containers of different kinds: compare their leaves
        fa = flatten(a, prefix) if a is not _MISSING else {}
        fb = flatten(b, prefix) if b is not _MISSING else {}
        out.extend(p for p in fa.keys() | fb.keys() if fa.get(p, _MISSING) != fb.get(p, _MISSING))
        return
    for key, x, y in pairs:
        _diff(x, y, f"{prefix}.{key}" if prefix else key, out)


def path_matches(path: str, patterns: list[str]) -> bool:
    """True if `path` equals/lies under a pattern (fnmatch wildcards allowed per segment)."""
    for pat in patterns:
        if fnmatch.fnmatchcase(path, pat) or fnmatch.fnmatchcase(path, pat + ".*"):
            return True
    return False


_MISSING = object()
