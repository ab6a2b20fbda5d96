"""Evaluate one policy on benchmark tasks: K judged, hint-free attempts per task, one row per
episode in the `benchmark_results` schema. The `benchmark_results` asset and
`benchmarks/policy_tasks.py` both call `evaluate_policy`, so they report the same figures.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import polars as pl

from ops.data.attempt_store import ParquetAttemptStore, collect_tables
from ops.evaluation.benchmark import answers_seen, first_app_right
from ops.judging.critic.programmatic import JudgeOnlyCritic
from ops.agent.episode import AttemptRecord, Environment, Policy, TaskSpec
from ops.rollout.engine import RolloutConfig, RolloutSummary, run_rollouts
from ops.data.schemas import from_rows
from phonesim.tasks import TaskInstance


@dataclass(frozen=True)
class Evaluation:
    """One policy's benchmark episodes and the rollout tables they came from."""

    results: pl.DataFrame  # `benchmark_results` rows
    attempts: pl.DataFrame
    steps: pl.DataFrame
    summary: RolloutSummary


def evaluate_policy(policy_id: str, agent: Policy, tasks: Sequence[tuple[TaskSpec, str]],
                    make_env: Callable[[], Environment], store: ParquetAttemptStore, k: int,
                    expected_apps: dict[str, tuple[TaskInstance, str]],
                    max_parallel_tasks: int = 64,
                    on_attempt: Callable[[AttemptRecord], None] | None = None) -> Evaluation:
    """Run `k` attempts of every (task, difficulty) with `agent`, judged by the simulator only
    (no critic, no hints), and tabulate them. `expected_apps` is `ops.evaluation.benchmark.first_apps` of the
    tasks (computed once for every policy). Attempts are staged in `store`, so a rerun resumes;
    `on_attempt` is called after each attempt run."""
    specs = [t for t, _ in tasks]
    difficulty = {t.task_id: d for t, d in tasks}
    summary = run_rollouts(specs, make_env, agent, JudgeOnlyCritic(), store,
                           RolloutConfig(attempts=k, use_hints=False, max_parallel_tasks=max_parallel_tasks), on_attempt)
    attempts, steps, _ = collect_tables(store, agent.version, specs)
    app_right = first_app_right(expected_apps, steps)
    seen = answers_seen(expected_apps, steps)
    rows = [{
        "policy_id": policy_id, "task_id": r["task_id"], "template_id": r["task_id"].split("#")[0],
        "difficulty": difficulty[r["task_id"]], "seed": int(r["task_id"].split("#")[1]),
        "attempt": r["attempt"], "success": r["gt_success"], "progress": r["gt_progress"],
        "false_complete": r["gt_false_complete"], "side_effects": r["gt_side_effects"],
        "overdue": r["gt_overdue"], "steps": r["n_steps"],
        "first_app_right": app_right.get((r["task_id"], r["attempt"]), False),
        "answer_seen": seen.get((r["task_id"], r["attempt"])),
    } for r in attempts.iter_rows(named=True)]
    return Evaluation(from_rows(rows, "benchmark_results"), attempts, steps, summary)
