"""Pass@k and diagnostics over benchmark episodes (seed 000 tables 1–3, seed 001 §4.3)."""

from __future__ import annotations

import polars as pl

from ops.episode import TaskSpec
from phonesim.tasks import instantiate, templates


def held_out_tasks(seeds_per_template: int, max_templates: int | None = None,
                   world_seed: int = 0) -> list[tuple[TaskSpec, str]]:
    """Test-split template instances as (task, difficulty stratum L1–L4); never seen in training."""
    return template_tasks("test", seeds_per_template, max_templates, world_seed)


def template_tasks(split: str, seeds_per_template: int, max_templates: int | None = None,
                   world_seed: int = 0) -> list[tuple[TaskSpec, str]]:
    """Instances of one split's templates as (task, difficulty stratum L1–L4)."""
    out = []
    for tmpl in templates(split=split)[:max_templates]:
        for seed in range(seeds_per_template):
            inst = instantiate(tmpl.id, seed, world_seed)
            out.append((TaskSpec(task_id=inst.id, instruction=inst.instruction, step_budget=inst.step_budget,
                                 app=inst.apps[0], template_id=tmpl.id, seed=seed), f"L{inst.difficulty}"))
    return out


def pass_at_k(results: pl.DataFrame, k_max: int) -> pl.DataFrame:
    """Per policy (and difficulty): Pass@1..k_max — a task passes @k if any of its first k attempts succeeded —
    plus mean progress, false-complete, side-effect and overdue rates over all episodes."""
    per_task = results.group_by("policy_id", "difficulty", "task_id").agg(
        *[(pl.col("success") & (pl.col("attempt") <= k)).any().alias(f"pass@{k}") for k in range(1, k_max + 1)])
    rates = results.group_by("policy_id", "difficulty").agg(
        pl.col("progress").mean().alias("progress"),
        pl.col("false_complete").mean().alias("false_complete"),
        (pl.col("side_effects") > 0).mean().alias("side_effects"),
        pl.col("overdue").mean().alias("overdue"),
        pl.col("steps").mean().alias("mean_steps"))
    by_difficulty = per_task.group_by("policy_id", "difficulty").agg(
        pl.len().alias("tasks"), *[pl.col(f"pass@{k}").mean() for k in range(1, k_max + 1)]
    ).join(rates, on=["policy_id", "difficulty"])
    overall_rates = results.group_by("policy_id").agg(
        pl.col("progress").mean(), pl.col("false_complete").mean(),
        (pl.col("side_effects") > 0).mean().alias("side_effects"), pl.col("overdue").mean(),
        pl.col("steps").mean().alias("mean_steps"))
    overall = per_task.group_by("policy_id").agg(
        pl.len().alias("tasks"), *[pl.col(f"pass@{k}").mean() for k in range(1, k_max + 1)]
    ).join(overall_rates, on="policy_id").with_columns(pl.lit("all").alias("difficulty"))
    return pl.concat([overall.select(by_difficulty.columns), by_difficulty]).sort("policy_id", "difficulty")
