"""Evaluate one policy on benchmark tasks: K judged, hint-free attempts per task, one row per
episode in the `benchmark_results` schema. The `benchmark_results` asset and
`benchmarks/policy_tasks.py` both call `evaluate_policy`, so they report the same figures.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Sequence

import polars as pl

from ops.data.attempt_store import ParquetAttemptStore, collect_tables
from ops.evaluation.benchmark import answers_seen, first_app_right
from ops.agent.episode import SIMULATOR_JUDGE, AttemptRecord, Critic, Environment, Policy, TaskSpec
from ops.judging.judges import EnvironmentJudge, VerdictCritic
from ops.rollout.engine import RolloutConfig, RolloutSummary, run_rollouts
from ops.data.schemas import from_rows

if TYPE_CHECKING:
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
                    on_attempt: Callable[[AttemptRecord], None] | None = None,
                    critic: Critic | None = None) -> Evaluation:
    """Run `k` attempts of every (task, difficulty) with `agent`, hint-free, judged by `critic` (a judge's
    verdict, `ops.judging.judges.verdict_critic`; default: the simulator's judges), and tabulate them.
    `expected_apps` is `ops.evaluation.benchmark.first_apps` of the simulator's tasks (computed once for
    every policy); a task without an entry (a user's own task) is judged for its first app by the app it
    names. Attempts are staged in `store`, so a rerun resumes; `on_attempt` is called after each attempt run."""
    specs = [t for t, _ in tasks]
    difficulty = {t.task_id: d for t, d in tasks}
    critic = critic or VerdictCritic(EnvironmentJudge(SIMULATOR_JUDGE))
    summary = run_rollouts(specs, make_env, agent, critic, store,
                           RolloutConfig(attempts=k, use_hints=False, max_parallel_tasks=max_parallel_tasks), on_attempt)
    attempts, steps, _ = collect_tables(store, agent.version, specs)
    simulated = steps.filter(pl.col("task_id").is_in(list(expected_apps)))
    app_right = first_app_right(expected_apps, simulated) | named_app_first({t.task_id: t.app for t in specs
                                                                             if t.task_id not in expected_apps}, steps)
    seen = answers_seen(expected_apps, simulated)
    claimed = claimed_success(steps)
    rows = [{
        "policy_id": policy_id, "task_id": r["task_id"], "template_id": r["task_id"].split("#")[0],
        "difficulty": difficulty[r["task_id"]], "seed": int(r["task_id"].split("#")[1]),
        "attempt": r["attempt"], "success": r["critic_decision"] == 1, "judge": r["judge"],
        "progress": r["gt_progress"],
        "false_complete": r["gt_false_complete"] if r["gt_success"] is not None
        else claimed.get((r["task_id"], r["attempt"]), False) and r["critic_decision"] != 1,
        "side_effects": r["gt_side_effects"], "overdue": r["gt_overdue"], "steps": r["n_steps"],
        "first_app_right": app_right.get((r["task_id"], r["attempt"]), False),
        "answer_seen": seen.get((r["task_id"], r["attempt"])),
    } for r in attempts.iter_rows(named=True)]
    return Evaluation(from_rows(rows, "benchmark_results"), attempts, steps, summary)


def claimed_success(steps: pl.DataFrame) -> dict[tuple[str, int], bool]:
    """Per (task_id, attempt): did the attempt end by declaring success (`terminate` with status success)?"""
    out: dict[tuple[str, int], bool] = {}
    for r in steps.filter(pl.col("action").is_not_null()).iter_rows(named=True):
        action = json.loads(r["action"])
        if action.get("type") == "terminate":
            out[(r["task_id"], r["attempt"])] = action.get("args", {}).get("status") == "success"
    return out


def named_app_first(app_of: dict[str, str], steps: pl.DataFrame) -> dict[tuple[str, int], bool]:
    """Per (task_id, attempt) of the tasks in `app_of`: was the first action opening the app the task names?"""
    out = {}
    for r in steps.filter((pl.col("step") == 0) & pl.col("task_id").is_in(list(app_of))).iter_rows(named=True):
        action = json.loads(r["action"]) if r["action"] else {}
        opened = str(action.get("args", {}).get("app", "")).strip().lower() if action.get("type") == "open_app" else ""
        out[(r["task_id"], r["attempt"])] = bool(opened) and opened == app_of[r["task_id"]].strip().lower()
    return out
