"""Fork pairs of GRSD from stored rollouts: success vs failed attempts of the same task.

Success is the critic's decision (annotation-free), not the simulator's ground truth.
"""

from __future__ import annotations

import json

import polars as pl

from training.methods.grsd.forks import ForkConfig, Step, Trajectory, detect_group_fork_points
from ops.data.schemas import from_rows


def trajectories_of(steps: pl.DataFrame, attempts: pl.DataFrame) -> dict[str, list[Trajectory]]:
    """Per task, its attempts as fork-detection trajectories (element lists as trees)."""
    decided = {(r["task_id"], r["attempt"]): bool(r["critic_decision"])
               for r in attempts.iter_rows(named=True) if r["critic_decision"] is not None}
    grouped: dict[tuple[str, int], list[dict]] = {}
    for r in steps.sort("task_id", "attempt", "step").iter_rows(named=True):
        grouped.setdefault((r["task_id"], r["attempt"]), []).append(r)
    out: dict[str, list[Trajectory]] = {}
    for (task_id, attempt), rows in grouped.items():
        if (task_id, attempt) not in decided:
            continue
        traj = Trajectory(f"{task_id}#{attempt}", decided[(task_id, attempt)], [
            Step(r["screenshot_png"], json.loads(r["action"]) if r["action"] else None, json.loads(r["elements"]))
            for r in rows])
        out.setdefault(task_id, []).append(traj)
    return out


def detect_fork_pairs(steps: pl.DataFrame, attempts: pl.DataFrame,
                      config: ForkConfig = ForkConfig()) -> pl.DataFrame:
    """`fork_pairs` rows: the shortest successful attempt against each failed one, per task."""
    responses = {(r["task_id"], r["attempt"], r["step"]): r["raw_output"] for r in steps.iter_rows(named=True)}
    rows = []
    for task_id, trajs in trajectories_of(steps, attempts).items():
        if not any(t.success for t in trajs) or all(t.success for t in trajs):
            continue
        for pair in detect_group_fork_points(trajs, config, teachers="shortest"):
            success_attempt = int(pair.success_id.rsplit("#", 1)[1])
            failed_attempt = int(pair.failed_id.rsplit("#", 1)[1])
            for f in pair.forks:
                rows.append({
                    "task_id": task_id, "success_attempt": success_attempt, "failed_attempt": failed_attempt,
                    "success_step": f.success_step, "failed_step": f.failed_step,
                    "similarity": float(min(1.0, max(0.0, f.similarity))),
                    "teacher_response": responses[(task_id, success_attempt, f.success_step)],
                })
    return from_rows(rows, "fork_pairs")
