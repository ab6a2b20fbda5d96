"""Which simulator this is: a digest of phonesim's own files (code and app data), for caches of
what it computes — a task's solution, the app a solution opens first — that must not outlive a
change to its apps, tasks or solver."""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path


@functools.cache
def source_digest() -> str:
    """16 hex digits of sha256 over every file of the phonesim package (path and bytes)."""
    root = Path(__file__).parent
    digest = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
        digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]
