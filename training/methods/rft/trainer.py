"""Iterative rejection fine-tuning (UI-Voyager §3.2): each round keeps the verified-successful
attempts, fine-tunes the base on every success so far, and lets that policy attempt fresh task
variants for the next round.

The caller supplies how a policy acts and how its attempts are run and judged (`act`,
`attempt`), so this loop knows nothing of Dagster, storage or the environment.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, ContextManager, Sequence

import polars as pl

from ops.agent.episode import Policy, TaskSpec
from ops.curriculum.variants import TaskVariants
from ops.samples.step_samples import goal_held_steps, with_hint_free_copies
from training.trainers.runs import TrainProgress, TrainReport
from training.trainers.sft import train_sft
from training.trainers.sft_config import SFTTrainConfig
from training.trainers.step_datasets import build_step_dataset, rft_samples

RolloutTables = tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]  # attempts, steps, critic feedback


@dataclass(frozen=True)
class RFTRoundsConfig:
    """How many rounds, and what each round after the first attempts."""

    rounds: int = 2
    max_tasks: int | None = 60  # fresh variants per round after the first
    hint_free_copies: bool = True  # also train on each hinted step's prompt without its hints
    finish_at_goal: bool = False  # end a success at its first goal-held step with "finish"
    sft: SFTTrainConfig = field(default_factory=SFTTrainConfig.cpu_tiny)


@dataclass
class RFTResult:
    """The last round's training run (None when no round had a success) and per-round counts."""

    report: TrainReport | None
    rounds: list[dict] = field(default_factory=list)


def solved_steps(steps: pl.DataFrame, attempts: pl.DataFrame) -> dict[str, list[str]]:
    """Task id -> the steps (the model's conclusion, else its action) of its first critic-verified success."""
    first = attempts.filter(pl.col("critic_decision") == 1).group_by("task_id").agg(pl.col("attempt").min())
    kept = steps.join(first, on=["task_id", "attempt"]).sort("task_id", "step")
    out: dict[str, list[str]] = {}
    for r in kept.iter_rows(named=True):
        out.setdefault(r["task_id"], []).append(r["conclusion"] or r["action"] or "(invalid output)")
    return out


def run_rft_rounds(pool: Sequence[TaskSpec], first_round: RolloutTables, config: RFTRoundsConfig, *,
                   base_dir: Path, workdir: Path, finish_response: str,
                   act: Callable[[Path | None, int], ContextManager[Policy]],
                   attempt: Callable[[list[TaskSpec], Policy], RolloutTables],
                   variants: TaskVariants,
                   log: Callable[[str], None] = print,
                   progress: Callable[[TrainProgress], None] | None = None,
                   remedial: pl.DataFrame | None = None,
                   train: Callable[..., TrainReport] | None = None) -> RFTResult:
    """Run `config.rounds` rounds of rejection fine-tuning from the checkpoint in `base_dir`.

    Round 1 learns from `first_round` (the curriculum's rollouts). Round r > 1 has `variants` build
    fresh variants of `pool`'s tasks (of those the previous round solved first: re-seeded templates on
    the simulator, instructions the LLM writes from the solved attempts on devices), has
    `act(checkpoint_dir, r)` (a context holding the policy of the previous round's checkpoint,
    None while it is still the base) attempt them through `attempt(tasks, policy)`, and learns from the critic-verified successes.
    Every round fine-tunes the base on all successes so far, so a round with a few new
    successes neither trains its handful of steps alone nor re-trains older ones.

    `remedial` (step samples of verified teacher-repaired trajectories, MobileWizard §3.4.4; None
    or empty: none) joins the final training run only: MobileWizard adds its remedial data in one last epoch (App. B),
    and since every round here trains the base afresh on everything so far, the last round's run
    on all successes plus the remedial rows is that epoch.
    """
    def sft(base, dataset, out, settings, *, method):  # `train` (where the step is placed), else in this process
        return train(base, dataset, out, settings, method=method) if train is not None else \
            train_sft(base, dataset, out, settings, method=method, progress=progress)

    attempts, steps, feedback = first_round
    remedial = remedial if remedial is not None and remedial.height else None
    tasks: list[TaskSpec] = list(pool)
    checkpoint: Path | None = None
    collected: list[pl.DataFrame] = []
    result = RFTResult(report=None)
    for r in range(1, config.rounds + 1):
        if r > 1:
            succeeded = set(attempts.filter(pl.col("critic_decision") == 1)["task_id"])
            tasks = variants.variants(pool, [t for t in tasks if t.task_id in succeeded], r, config.max_tasks,
                                      solved_steps(steps, attempts))
            if not tasks:
                log(f"RFT round {r}: no task variant to attempt; stopping")
                break
            with act(checkpoint, r) as agent:
                attempts, steps, feedback = attempt(tasks, agent)
        samples = rft_samples(steps, attempts, verdict="critic_decision",
                              goal_held=goal_held_steps(feedback) if config.finish_at_goal else None,
                              finish_response=finish_response)
        if config.hint_free_copies:
            samples = with_hint_free_copies(samples, attempts)
        result.rounds.append({
            "round": r, "attempts": attempts.height,
            "successful_attempts": int((attempts["critic_decision"] == 1).sum()), "samples": samples.height,
            "terminate_samples": int(samples["target_action"].str.contains('"terminate"').sum())})
        if samples.height == 0:  # the policy stays; the next round still samples fresh variants
            log(f"RFT round {r}: no successful attempt to learn from")
            continue
        collected.append(samples)
        if remedial is not None and r == config.rounds:
            break  # the final run below trains this round with the remedial rows
        result.report = sft(base_dir, build_step_dataset(pl.concat(collected), require_response=True),
                            workdir / f"rft_r{r}", config.sft, method="rft")
        checkpoint = result.report.checkpoint
    if remedial is not None:
        result.rounds.append({"round": "remedial", "samples": remedial.height})
        result.report = sft(base_dir, build_step_dataset(pl.concat([*collected, remedial]), require_response=True),
                            workdir / "rft_remedial", config.sft, method="rft")
    return result
