"""The training data the methods read: step_datasets (HiFPO's filtered steps) and fork_pairs (GRSD's fork points)."""

import tempfile
from pathlib import Path
from typing import Any

import dagster as dg
import polars as pl
from pydantic import Field

from assets.methods import priority_tags
from assets.metadata import chart_md, md_table, tidy
from ops.samples.annotated_samples import AnnotationReport, annotate_samples
from ops.judging.judges import PROGRAMMATIC_CRITIC
from ops.judging.critic.reasoning_annotation import LLMAnnotator, ProgrammaticAnnotator, ReasoningAnnotator
from ops.curriculum import task_specs
from ops.samples.filtering import FINISH_AT_GOAL, HINT_FREE_COPIES, FilterConfig
from training.methods.grsd.fork_pairs import detect_fork_pairs
from training.methods.grsd.forks import ForkConfig
from ops.evaluation.plots import sr_histogram_chart
from ops.agent.policy_prompt import writes_structured_reasoning
from ops.samples.step_samples import build_step_samples, finish_response
from resources.experiment import experiment_of, experiment_partitions
from resources.environment import AdbDeviceResource, SimulatorResource
from resources.llm import LLMResource
from resources.policy import PolicyResource
from resources.storage import ArtifactStore
from resources.viewer_links import FORKS_PAGE, viewer_link

GROUP = "learning"
class StepDatasetConfig(dg.Config):
    sr_min: float = Field(default=0.0, ge=0, le=1, description="Keep tasks with SR(x) >= sr_min (MobileForge eq. 10).")
    sr_max: float = Field(default=0.9, ge=0, le=1, description="Keep tasks with SR(x) <= sr_max; 0.9 drops mastered tasks.")
    best_attempt: bool = Field(default=True, description="Train on the best attempt k* only (eq. 13).")
    reasonable_only: bool = Field(default=True, description="Keep only steps the critic marked reasonable (eq. 14).")
    hint_free_copies: bool = Field(default=True, description=HINT_FREE_COPIES)
    finish_at_goal: bool = Field(default=False, description=FINISH_AT_GOAL)


def reasoning_annotator(critic_feedback: pl.DataFrame, simulator: SimulatorResource | AdbDeviceResource,
                        llm: LLMResource) -> ReasoningAnnotator:
    """The annotator twin of the critic that labelled the steps (`critic_feedback.critic`)."""
    critics = set(critic_feedback["critic"])
    if critics == {PROGRAMMATIC_CRITIC}:
        return ProgrammaticAnnotator(simulator.world_seed)
    if critics and all(c.startswith("llm") for c in critics):
        return LLMAnnotator(llm.get_client(), name=f"llm:{llm.model}")
    raise ValueError(f"step_datasets: no reasoning annotator for the critic(s) {sorted(critics)}; the structured-"
                     "reasoning style needs steps labelled by the programmatic or an LLM critic")


def annotation_metadata(context: dg.AssetExecutionContext, annotated: AnnotationReport,
                        annotator: ReasoningAnnotator, steps: str) -> dict[str, Any]:
    """Logs one reasoning-annotation pass of `steps` ("kept", "remedial") and returns its metadata:
    annotator, annotated steps, failures by reason with examples, and the LLM annotator's calls."""
    context.log.info(f"reasoning annotation ({annotated.annotator}): {annotated.annotated} of {annotated.steps} "
                     f"{steps} steps annotated; not annotated: {dict(annotated.failures.most_common())}")
    return {
        "reasoning_annotator": annotated.annotator, "annotated_steps": annotated.annotated,
        "annotation_failures": dg.MetadataValue.json(dict(annotated.failures.most_common())),
        "annotation_failure_examples": md_table(["task", "attempt", "step", "reason", "detail"], annotated.examples),
        **({"annotator_calls": dg.MetadataValue.json(annotator.counts.summary())}
           if isinstance(annotator, LLMAnnotator) else {}),
    }


@dg.asset(partitions_def=experiment_partitions, group_name=GROUP, code_version="step-datasets-6", op_tags=priority_tags("step_datasets"),
          description="One row per training step sample kept by the HiFPO filter: hint-contextualized prompt, "
                      "screenshot, target action (also saved as an HF dataset). With the structured-reasoning "
                      "prompt style, the critic's annotator also writes each kept step's four reasoning parts "
                      "(MobileWizard App. C.1), the reasoning reward's targets.")
def step_datasets(context: dg.AssetExecutionContext, config: StepDatasetConfig, curriculum_tasks: pl.DataFrame,
                  rollout_attempts: pl.DataFrame, rollout_steps: pl.DataFrame, critic_feedback: pl.DataFrame,
                  policy: PolicyResource, simulator: SimulatorResource, llm: LLMResource,
                  artifact_store: ArtifactStore) -> pl.DataFrame:
    from training.trainers.step_datasets import build_step_dataset

    samples, report = build_step_samples(rollout_attempts, rollout_steps, critic_feedback,
                                         FilterConfig(config.sr_min, config.sr_max, config.best_attempt,
                                                      config.reasonable_only, config.finish_at_goal),
                                         hint_free_copies=config.hint_free_copies,
                                         finish_response=finish_response(policy.prompt_style))
    annotation: dict[str, Any] = {}
    if writes_structured_reasoning(policy.prompt_style) and samples.height:
        annotator = reasoning_annotator(critic_feedback, simulator, llm)
        tasks = {t.task_id: t for t in task_specs(curriculum_tasks, False, None)}
        samples, annotated = annotate_samples(samples, rollout_attempts, rollout_steps, critic_feedback, tasks,
                                              annotator)
        annotation = annotation_metadata(context, annotated, annotator, "kept")
    with tempfile.TemporaryDirectory() as tmp:
        hf_uri = artifact_store.put_hf_dataset(build_step_dataset(samples), f"{experiment_of(context)}/step_datasets/"
                                               f"{context.run_id}", Path(tmp) / "ds") if samples.height else None
    sr = [s.success_rate for s in report.selections]
    context.add_output_metadata(tidy({
        "samples": samples.height, "hf_dataset": hf_uri or "",
        "tasks_kept": report.kept_tasks, "tasks_dropped": dg.MetadataValue.json(dict(report.dropped)),
        "samples_by_action_type": dg.MetadataValue.json(dict(report.samples_by_type)),
        "with_hint": int(samples["has_hint"].sum()) if samples.height else 0,
        "hint_free_copies": report.hint_free_copies, "finish_samples": report.finish_samples, **annotation,
        "sr_histogram": chart_md(sr_histogram_chart(sr, (config.sr_min, config.sr_max))),
    }))
    return samples


@dg.asset(partitions_def=experiment_partitions, group_name=GROUP, code_version="fork-pairs-1", op_tags=priority_tags("fork_pairs"),
          description="One row per GRSD fork point: the step where a failed attempt left a successful attempt's "
                      "path on the same task (UI-Voyager Alg. 1).")
def fork_pairs(context: dg.AssetExecutionContext, rollout_attempts: pl.DataFrame,
               rollout_steps: pl.DataFrame) -> pl.DataFrame:
    pairs = detect_fork_pairs(rollout_steps, rollout_attempts, ForkConfig())
    context.add_output_metadata(tidy({
        "fork_pairs": pairs.height,
        "tasks": pairs["task_id"].n_unique() if pairs.height else 0,
        "viewer": viewer_link(experiment_of(context), FORKS_PAGE),  # both attempts, the fork steps marked
        "sample": md_table(["task", "success@step", "failed@step", "ssim"],
                           [(r["task_id"], f"{r['success_attempt']}@{r['success_step']}",
                             f"{r['failed_attempt']}@{r['failed_step']}", f"{r['similarity']:.3f}")
                            for r in pairs.head(8).iter_rows(named=True)]),
    }))
    return pairs
