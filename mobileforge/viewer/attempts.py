"""The attempts page's data: every attempt of an experiment — the rollouts' K hint-guided attempts
of each curriculum task and the benchmark's episodes of each policy — with what it filters on
(stage, app, template, difficulty, split, outcome, judge, policy), grouped by task and policy.

A rollout attempt's verdict is its critic's decision (the judge is the critic's name); a benchmark
episode's is the task's own judge. Template facts (split, difficulty, app) come from the
simulator's template registry where a task has a simulator template; tasks on devices have none,
and their columns stay empty.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import polars as pl

from mobileforge.viewer.queries import AttemptFilters
from mobileforge.viewer.store import BENCHMARK_STAGE, ROLLOUT_STAGE, ViewerStore

BENCHMARK_JUDGE = "task judge"  # what judges a benchmark episode: the simulator's (or AndroidWorld's) task check
FILTER_COLUMNS = ("stage", "app", "template", "difficulty", "split", "outcome", "judge", "policy")
TASKS_PER_PAGE = 100
COLUMNS = {"stage": pl.String, "task_id": pl.String, "attempt": pl.Int64, "policy": pl.String, "app": pl.String,
           "template": pl.String, "difficulty": pl.String, "split": pl.String, "instruction": pl.String,
           "outcome": pl.String, "judge": pl.String, "ground_truth": pl.Boolean, "steps": pl.Int64,
           "end_reason": pl.String, "hints": pl.Int64}


@functools.cache
def template_facts() -> pl.DataFrame:
    """template, its first app, split and difficulty ("L1".."L4"), for every simulator template."""
    from phonesim.tasks import all_templates  # the registry loads every app: only when a page needs it

    rows = [{"template": t.id, "template_app": t.apps[0], "template_split": t.split,
             "template_difficulty": f"L{t.difficulty}"} for t in all_templates().values()]
    return pl.DataFrame(rows, schema={"template": pl.String, "template_app": pl.String,
                                      "template_split": pl.String, "template_difficulty": pl.String})


def _outcome(verdict: pl.Expr) -> pl.Expr:
    return pl.when(verdict.is_null()).then(pl.lit("no verdict")).when(verdict).then(pl.lit("success")) \
        .otherwise(pl.lit("failure"))


def _rollout_rows(store: ViewerStore, experiment: str) -> pl.DataFrame | None:
    attempts = store.table(experiment, "rollout_attempts", ["task_id", "attempt", "policy_version", "hints_used",
                                                            "end_reason", "n_steps", "critic_decision", "gt_success"])
    if attempts is None:
        return None
    feedback = store.table(experiment, "critic_feedback", ["task_id", "attempt", "critic"])
    tasks = store.table(experiment, "curriculum_tasks", ["task_id", "app", "instruction", "template_id"])
    frame = attempts
    if feedback is not None:
        frame = frame.join(feedback, on=["task_id", "attempt"], how="left")
    else:
        frame = frame.with_columns(pl.lit(None, pl.String).alias("critic"))
    if tasks is not None:
        frame = frame.join(tasks.unique("task_id"), on="task_id", how="left")
    else:
        frame = frame.with_columns(pl.lit(None, pl.String).alias(c) for c in ("app", "instruction", "template_id"))
    return frame.select(
        pl.lit(ROLLOUT_STAGE).alias("stage"), "task_id", "attempt", pl.col("policy_version").alias("policy"), "app",
        pl.col("template_id").alias("template"), pl.lit(None, pl.String).alias("difficulty"),
        pl.lit(None, pl.String).alias("split"), "instruction",
        _outcome(pl.col("critic_decision").cast(pl.Boolean)).alias("outcome"), pl.col("critic").alias("judge"),
        pl.col("gt_success").alias("ground_truth"), pl.col("n_steps").alias("steps"), "end_reason",
        pl.col("hints_used").list.len().cast(pl.Int64).alias("hints"))


def _benchmark_rows(store: ViewerStore, experiment: str) -> pl.DataFrame | None:
    results = store.table(experiment, "benchmark_results", ["policy_id", "task_id", "template_id", "difficulty",
                                                            "attempt", "success", "steps"])
    if results is None:
        return None
    return results.select(
        pl.lit(BENCHMARK_STAGE).alias("stage"), "task_id", "attempt", pl.col("policy_id").alias("policy"),
        pl.lit(None, pl.String).alias("app"), pl.col("template_id").alias("template"), "difficulty",
        pl.lit(None, pl.String).alias("split"), pl.lit(None, pl.String).alias("instruction"),
        _outcome(pl.col("success")).alias("outcome"), pl.lit(BENCHMARK_JUDGE).alias("judge"),
        pl.col("success").alias("ground_truth"), "steps", pl.lit(None, pl.String).alias("end_reason"),
        pl.lit(0, pl.Int64).alias("hints"))


def attempt_rows(store: ViewerStore, experiment: str) -> pl.DataFrame:
    """One row per attempt of the experiment's rollouts and benchmark (`COLUMNS`); empty when neither
    was materialized."""
    frames = [f for f in (_rollout_rows(store, experiment), _benchmark_rows(store, experiment)) if f is not None]
    if not frames:
        return pl.DataFrame(schema=COLUMNS)
    rows = pl.concat([f.cast(COLUMNS) for f in frames])
    facts = template_facts()
    return rows.join(facts, on="template", how="left").with_columns(
        pl.coalesce("app", "template_app").alias("app"), pl.coalesce("split", "template_split").alias("split"),
        pl.coalesce("difficulty", "template_difficulty").alias("difficulty"),
    ).select(list(COLUMNS))


@dataclass(frozen=True)
class TaskGroup:
    """One task of one stage and policy, with the attempts the filters kept."""

    stage: str
    task_id: str
    policy: str
    app: str | None
    template: str | None
    difficulty: str | None
    split: str | None
    instruction: str | None
    judge: str | None
    attempts: list[dict[str, Any]]  # attempt, outcome, ground_truth, steps, end_reason, hints


@dataclass(frozen=True)
class AttemptPage:
    groups: list[TaskGroup]
    options: dict[str, list[str]]  # every value each filter can take
    matching_tasks: int
    matching_attempts: int
    pages: int


def filter_attempts(rows: pl.DataFrame, filters: AttemptFilters) -> AttemptPage:
    """The page of task groups `filters` select, and the values each filter offers."""
    options = {c: sorted(v for v in rows[c].unique().to_list() if v is not None) for c in FILTER_COLUMNS}
    selected = rows
    for column in FILTER_COLUMNS:
        value = getattr(filters, column)
        if value is not None:
            selected = selected.filter(pl.col(column) == value)
    keys = ["stage", "task_id", "policy"]
    grouped = selected.sort("attempt").group_by(keys, maintain_order=True).agg(
        pl.col("app", "template", "difficulty", "split", "instruction", "judge").first(),
        pl.struct("attempt", "outcome", "ground_truth", "steps", "end_reason", "hints").alias("attempts"),
    ).sort(pl.col("stage") != ROLLOUT_STAGE, "task_id", "policy")
    pages = max(1, -(-grouped.height // TASKS_PER_PAGE))
    page = grouped.slice((filters.page - 1) * TASKS_PER_PAGE, TASKS_PER_PAGE)
    groups = [TaskGroup(**row) for row in page.iter_rows(named=True)]
    return AttemptPage(groups, options, grouped.height, selected.height, pages)
