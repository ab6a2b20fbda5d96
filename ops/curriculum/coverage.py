"""Functional coverage of a curriculum (MobileForge table 7): task counts per core functionality
and app, for asset metadata and the grounding ablation."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import polars as pl

from ops.curriculum.model import CurriculumTask


def coverage(tasks: Sequence[CurriculumTask]) -> pl.DataFrame:
    """One row per core functionality: a count column per app (sorted), `total`, and `percent`
    of all tasks; rows by descending total, then name. Functionalities are compared after
    trimming and lowercasing, so an LLM's capitalisation does not split a row."""
    counts = Counter((t.core_functionality.strip().lower(), t.app) for t in tasks)
    apps = sorted({app for _, app in counts})
    functions = sorted({f for f, _ in counts})
    n = len(tasks)
    rows = []
    for f in functions:
        per_app = {app: counts.get((f, app), 0) for app in apps}
        total = sum(per_app.values())
        rows.append({"core_functionality": f, **per_app, "total": total, "percent": round(100.0 * total / n, 1)})
    rows.sort(key=lambda r: (-r["total"], r["core_functionality"]))
    schema = {"core_functionality": pl.String, **{a: pl.Int64 for a in apps}, "total": pl.Int64,
              "percent": pl.Float64}
    return pl.DataFrame(rows, schema=schema)
