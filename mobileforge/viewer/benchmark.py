"""The benchmark page's data: per held-out task, the base's attempts beside each adapted policy's,
with the tasks a policy gained (it passes at Pass@k, the base does not) or lost (the reverse), and
the paired summary of `ops.evaluation.benchmark.versus_baseline` above them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import polars as pl

from mobileforge.viewer.attempts import TASKS_PER_PAGE, template_facts
from ops.evaluation.benchmark import passed_by_task, versus_baseline

BASELINE = "base"


@dataclass(frozen=True)
class PolicyCell:
    """One policy on one task: its attempts' outcomes, whether it passed, and against the base."""

    policy: str
    passed: bool
    attempts: list[dict[str, Any]]  # attempt, success, steps
    change: str  # "gained", "lost" or "" (same as the base, or the base itself)


@dataclass(frozen=True)
class BenchmarkTask:
    task_id: str
    template: str
    difficulty: str
    split: str | None
    cells: list[PolicyCell]  # the base first, then the adapted policies by name


@dataclass(frozen=True)
class BenchmarkPage:
    k: int
    policies: list[str]
    versus: list[dict[str, Any]]  # versus_baseline rows; empty without a base
    tasks: list[BenchmarkTask]
    counts: dict[str, int]  # tasks each `show` choice lists
    pages: int


def _changes(passed: pl.DataFrame) -> pl.DataFrame:
    base = passed.filter(pl.col("policy_id") == BASELINE).select("task_id", pl.col("passed").alias("base_passed"))
    return passed.join(base, on="task_id", how="left").with_columns(
        pl.when(pl.col("policy_id") == BASELINE).then(pl.lit(""))
        .when(pl.col("passed") & ~pl.col("base_passed")).then(pl.lit("gained"))
        .when(~pl.col("passed") & pl.col("base_passed")).then(pl.lit("lost"))
        .otherwise(pl.lit("")).alias("change"))


def benchmark_page(results: pl.DataFrame, show: str, page: int) -> BenchmarkPage:
    """The page of tasks `show` selects ("all", "changed": gained or lost by some policy, "gained",
    "lost") from `benchmark_results` rows."""
    k = int(results["attempt"].max() or 1)
    policies = sorted(results["policy_id"].unique().to_list(), key=lambda p: (p != BASELINE, p))
    changes = _changes(passed_by_task(results, k))
    try:
        versus = versus_baseline(results, k, BASELINE).to_dicts() if BASELINE in policies else []
    except ValueError:  # the policies ran different tasks: no paired summary, the per-task rows stay
        versus = []
    by_task = changes.group_by("task_id").agg(pl.col("change").alias("changes"))
    selections = {
        "all": by_task["task_id"],
        "changed": by_task.filter(pl.col("changes").list.eval(pl.element() != "").list.any())["task_id"],
        "gained": by_task.filter(pl.col("changes").list.contains("gained"))["task_id"],
        "lost": by_task.filter(pl.col("changes").list.contains("lost"))["task_id"],
    }
    chosen = sorted(selections[show].to_list())
    shown = chosen[(page - 1) * TASKS_PER_PAGE: page * TASKS_PER_PAGE]
    episodes = results.filter(pl.col("task_id").is_in(shown)).sort("attempt")
    attempts = {(r["policy_id"], r["task_id"]): r["attempts"] for r in episodes.group_by("policy_id", "task_id").agg(
        pl.struct("attempt", "success", "steps").alias("attempts")).iter_rows(named=True)}
    cells = {(r["policy_id"], r["task_id"]): r for r in changes.filter(pl.col("task_id").is_in(shown)).iter_rows(named=True)}
    facts = template_facts()
    split_of = dict(zip(facts["template"], facts["template_split"]))
    meta = {r["task_id"]: r for r in episodes.unique("task_id").iter_rows(named=True)}
    tasks = [BenchmarkTask(task, meta[task]["template_id"], meta[task]["difficulty"], split_of.get(meta[task]["template_id"]),
                           [PolicyCell(p, cells[(p, task)]["passed"], attempts[(p, task)], cells[(p, task)]["change"])
                            for p in policies if (p, task) in cells])
             for task in shown]
    return BenchmarkPage(k, policies, versus, tasks, {name: len(ids) for name, ids in selections.items()},
                         max(1, -(-len(chosen) // TASKS_PER_PAGE)))
