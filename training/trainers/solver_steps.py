"""Step samples along the simulator solver's shortest solution of given tasks, in the agent's own words.

Each task is played from its start by the solver teacher (`ops.remedial.teachers.SolverTeacher`) the way corrective
teaching grafts a remedial trajectory onto a failed attempt that keeps no step (`ops.remedial.corrective_teaching.teach`):
the solver's actions are said in the policy's prompt style and output format, every step's prompt is the one the
policy would see there (its history or memory, no hints), the replayed trajectory is verified by the
programmatic critic, and the steps become `training_samples` rows as remedial trajectories do
(`rft_samples`): the prompt, the screenshot and the solver's next action as `target_action`. A task the solver
cannot finish, or whose actions the format cannot write, gives no rows and is counted by reason
(`ops.remedial.corrective_teaching.REASONS`). `benchmarks/hifpo_signal.py --prompts-from held-out` measures HiFPO's
reward signal on such rows of the benchmark's held-out templates.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import polars as pl

from ops.samples.annotated_samples import AnnotationReport, annotate_samples
from ops.remedial.corrective_teaching import (FailedAttempt, ScriptedPolicy, TeachingReport, remedial_feedback,
                                     remedial_tables, teach)
from ops.judging.critic.programmatic import ProgrammaticCritic
from ops.judging.critic.reasoning_annotation import ProgrammaticAnnotator
from ops.agent.episode import Environment, TaskSpec
from ops.agent.policy_prompt import PromptStyle
from ops.data.schemas import empty
from ops.remedial.solver_teacher import SolverTeacher
from training.trainers.step_datasets import rft_samples


@dataclass(frozen=True)
class SolverSteps:
    """The rows and what became of each task: `teaching.verified` tasks gave rows, `teaching.failures` counts
    the rest by reason and `teaching.unrepaired` holds them (`teacher_steps`: the solver's steps each left out,
    0 when it gave no plan that fits the task's budget); `annotation` is the reasoning-target pass of the structured style (None in the
    others)."""

    rows: pl.DataFrame
    teaching: TeachingReport
    annotation: AnnotationReport | None = None

    @property
    def skipped_steps(self) -> int:
        """Solver steps of the tasks that gave no rows (those whose plan fit the budget)."""
        return sum(g.teacher_steps for g in self.teaching.unrepaired)


def solver_step_samples(tasks: Sequence[TaskSpec], style: PromptStyle | str, env_factory: Callable[[], Environment],
                        world_seed: int = 0) -> SolverSteps:
    """`training_samples` rows of every step of the solver's solution of each of `tasks` (simulator tasks of
    `world_seed`, played on `env_factory`'s environments), said in prompt `style` without hints; in the
    structured-reasoning style with the four reasoning parts and the targets the programmatic annotator writes."""
    voice = ScriptedPolicy(style, version=f"solver:{PromptStyle(style).value}")
    writer = ProgrammaticAnnotator(world_seed) if voice.keeps_memory else None
    report = TeachingReport(failures_seen=len(tasks))
    from_start = [FailedAttempt(task, 0, voice.version, hints=[], steps=[], failure_step=0) for task in tasks]
    grafts = teach(from_start, SolverTeacher(world_seed), env_factory, voice, ProgrammaticCritic(world_seed), report,
                   writer=writer)
    if not grafts:
        return SolverSteps(empty("training_samples"), report)
    records = [g.record for g in grafts]
    attempts, steps = remedial_tables(records)
    samples = rft_samples(steps, attempts, verdict="critic_decision")
    if writer is None:
        return SolverSteps(samples, report)
    samples, annotated = annotate_samples(samples, attempts, steps, remedial_feedback(records),
                                          {t.task_id: t for t in tasks}, writer)
    return SolverSteps(samples, report, annotated)
