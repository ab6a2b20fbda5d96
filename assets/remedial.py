"""remedial_trajectories: failed rollouts repaired by a teacher and re-verified (MobileWizard §3.4.4).

The critic's failing step splits each failed attempt; a teacher completes the task from there (the
simulator's solver by default, or the `teacher` policy resource), the graft is replayed from the
task's start and judged by the verifier, and only a pass becomes training rows, in the step-sample
schema RFT and HiFPO train on (`rft_checkpoint.remedial` and `hifpo_checkpoint.remedial` mix them in).
In the structured-reasoning style (MobileWizard §3.3) the teacher's steps are written with the four
parts by the programmatic annotator, and every row gets its reasoning targets from the annotator twin
of the verifier, as `step_datasets` annotates its kept steps. Every other failed attempt is counted
by reason. The solver teacher knows the simulator's tasks, so its rows are oracle help
(docs/corrective-teaching.md); a teacher policy is MobileWizard's own setting.
"""

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Literal

import dagster as dg
import polars as pl
from pydantic import Field

from assets.learning import annotation_metadata, reasoning_annotator
from assets.methods import priority_tags
from assets.metadata import md_table, tidy
from assets.placement import pool_tags
from ops.samples.annotated_samples import annotate_samples
from ops.config_bounds import MAX_COUNT
from training.methods.checkpoint import Checkpoint, weights_digest
from ops.remedial.corrective_teaching import (ScriptedPolicy, TeachingReport, failed_attempts, remedial_feedback,
                                     remedial_tables, teach)
from ops.judging.critic.reasoning_annotation import ProgrammaticAnnotator
from ops.curriculum import task_specs
from ops.rollout.progress import CountdownLog
from ops.agent.policy_prompt import PromptStyle
from ops.data.schemas import empty
from ops.samples.step_samples import with_hint_free_copies
from resources.deployment import LLM_ENDPOINT
from resources.environment import SimulatorResource
from resources.judging import rollout_critic
from ops.remedial.teachers import PolicyTeacher, Teacher
from ops.judging.critic.hint_settings import CorrectiveHintSettings
from resources.experiment import experiment_partitions
from resources.llm import LLMResource
from resources.policy import PolicyResource
from resources.storage import ArtifactStore

SHOWN_UNREPAIRED = 12  # failed attempts listed for manual annotation in the metadata


class RemedialConfig(dg.Config):
    teacher: Literal["solver", "policy"] = Field(default="solver", description=(
        "Who completes the task from the failing step: 'solver' (default), the simulator's shortest-plan "
        "solver (for navigation, toggle and entry tasks a greedy descent of the critic's goal distance); "
        "'policy', the `teacher` policy resource (MobileWizard's stronger teacher model: an endpoint, or a "
        "local checkpoint)."))
    verifier: Literal["programmatic", "llm"] = Field(default="programmatic", description=(
        "Who re-verifies the grafted trajectory: 'programmatic', the simulator's judge; 'llm', the LLM critic "
        "resource. The failing step itself is the one the rollouts' critic named."))
    hint_free_copies: bool = Field(default=True, description=(
        "Also add each hinted step with its prompt as it would read without hints (see step_datasets)."))
    max_attempts: int | None = Field(default=None, ge=1, le=MAX_COUNT, description="Graft only the first N failed attempts.")
    enabled: bool = Field(default=False, description=(
        "Repair failed attempts. Off by default, as are the two consumers of the rows (hifpo_checkpoint.remedial, "
        "rft_checkpoint.remedial): a run would spend a minute of solver grafts on rows nobody reads, and HiFPO "
        "waits for this asset. Turn it on with them (the `wizard` ablation does); off, the table is empty and "
        "its metadata says so."))


@contextmanager
def _teacher(config: RemedialConfig, teacher: PolicyResource, simulator: SimulatorResource,
             artifact_store: ArtifactStore) -> Iterator[Teacher]:
    from ops.remedial.solver_teacher import SolverTeacher  # the simulator's solver: imported on the simulator only

    if config.teacher == "solver":
        yield SolverTeacher(simulator.world_seed)
        return
    with teacher.acting_policy(_teacher_checkpoint(teacher), artifact_store) as policy:
        yield PolicyTeacher(policy, simulator.make_env)


def _teacher_checkpoint(teacher: PolicyResource) -> Checkpoint:
    """The teacher resource's model as a checkpoint that acts (never trained)."""
    style = PromptStyle(teacher.prompt_style)
    if teacher.kind == "endpoint":
        return Checkpoint(version=f"teacher:endpoint:{teacher.model}", uri=None, prompt_style=style, method="base")
    weights = teacher.configured_weights()
    if weights is None:
        raise ValueError("remedial_trajectories.teacher='policy' needs a teacher model: set the teacher resource's "
                         "checkpoint (MOBILEFORGE_TEACHER_CHECKPOINT) or its endpoint (MOBILEFORGE_TEACHER_MODEL)")
    return Checkpoint(version=f"teacher:{weights_digest(weights)}", uri=f"file://{weights}", prompt_style=style,
                      method="base")


@dg.asset(partitions_def=experiment_partitions, group_name="learning", code_version="remedial-4",
          op_tags={**priority_tags("remedial_trajectories"), **pool_tags(LLM_ENDPOINT)}, pool=LLM_ENDPOINT,
          description="One row per step sample of a remedial trajectory: a failed attempt's steps before the "
                      "critic's failing step plus a teacher's completion, replayed and verified "
                      "(MobileWizard §3.4.4).")
def remedial_trajectories(context: dg.AssetExecutionContext, config: RemedialConfig, curriculum_tasks: pl.DataFrame,
                          rollout_attempts: pl.DataFrame, rollout_steps: pl.DataFrame, critic_feedback: pl.DataFrame,
                          simulator: SimulatorResource, policy: PolicyResource, teacher: PolicyResource,
                          llm: LLMResource, artifact_store: ArtifactStore) -> pl.DataFrame:
    from training.trainers.step_datasets import rft_samples

    if not config.enabled:
        context.add_output_metadata({"rows": 0, "skipped": "remedial_trajectories.enabled is false"})
        return empty("training_samples")
    report = TeachingReport()
    tasks = {t.task_id: t for t in task_specs(curriculum_tasks, False, None)}
    failed = failed_attempts(rollout_attempts, rollout_steps, critic_feedback, tasks, report)
    if config.max_attempts is not None and len(failed) > config.max_attempts:
        report.failures["beyond_max_attempts"] += len(failed) - config.max_attempts
        failed = failed[:config.max_attempts]
    verifier = rollout_critic(config.verifier, simulator, llm, CorrectiveHintSettings())
    voice = ScriptedPolicy(policy.prompt_style, version=f"voice:{policy.prompt_style}")
    # the structured style says the teacher's actions with the four parts, written from simulator state
    writer = ProgrammaticAnnotator(simulator.world_seed) if voice.keeps_memory else None
    with _teacher(config, teacher, simulator, artifact_store) as acting_teacher:
        grafts = teach(failed, acting_teacher, simulator.make_env, voice, verifier, report,
                       on_graft=CountdownLog("grafts", len(failed), context.log.info), writer=writer)
        teacher_name = acting_teacher.name
    records = [g.record for g in grafts]
    attempts, steps = remedial_tables(records)
    samples = rft_samples(steps, attempts, verdict="critic_decision") if grafts else empty("training_samples")
    copies = 0
    if config.hint_free_copies and samples.height:
        twinned = with_hint_free_copies(samples, attempts)
        copies, samples = twinned.height - samples.height, twinned
    annotation: dict = {}
    if voice.keeps_memory and samples.height:
        feedback = remedial_feedback(records)
        annotator = reasoning_annotator(feedback, simulator, llm)
        samples, annotated = annotate_samples(samples, attempts, steps, feedback, tasks, annotator)
        annotation = annotation_metadata(context, annotated, annotator, "remedial")
    context.log.info(f"remedial trajectories: {report.verified} of {report.failures_seen} failed attempts repaired "
                     f"and verified; not repaired: {dict(report.failures.most_common())}")
    context.add_output_metadata(tidy({
        "rows": samples.height, "hint_free_copies": copies, "teacher": teacher_name, "verifier": verifier.name,
        "failures_seen": report.failures_seen, "repaired": report.repaired, "verified": report.verified,
        "yield": report.yield_rate,
        "failures_by_reason": dg.MetadataValue.json(dict(report.failures.most_common())),
        "tasks_repaired": attempts["task_id"].n_unique() if attempts.height else 0,
        "mean_kept_steps": sum(g.kept_steps for g in grafts) / len(grafts) if grafts else 0.0,
        "mean_teacher_steps": sum(g.teacher_steps for g in grafts) / len(grafts) if grafts else 0.0,
        "needs_annotation": md_table(["task", "attempt", "kept steps", "reason", "detail"],
                                     [(g.task_id, g.attempt, g.kept_steps, g.failure, g.detail)
                                      for g in report.unrepaired[:SHOWN_UNREPAIRED]]),
        **annotation,
    }))
    return samples
