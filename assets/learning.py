"""step_datasets, fork_pairs and the three adapted checkpoints: HiFPO, RFT and GRSD."""

import tempfile
from pathlib import Path
from typing import Any, ContextManager

import dagster as dg
import polars as pl
from pydantic import Field, model_validator

from assets.checkpoints import (NO_WEIGHTS, trained_checkpoint, trainer_settings, training_progress,
                                unchanged_checkpoint)
from assets.metadata import chart_md, md_table, tidy
from assets.training_priorities import GRSD_CHAIN, HIFPO_CHAIN, RFT_CHAIN
from ops.samples.annotated_samples import AnnotationReport, annotate_samples
from ops.data.attempt_store import collect_tables
from resources.config_bounds import MAX_ATTEMPTS, MAX_COUNT, MAX_SEED, MAX_TEMPERATURE
from training.methods.checkpoint import Checkpoint
from ops.evaluation.cpu_clock import CpuClock
from ops.judging.critic.programmatic import ProgrammaticCritic
from ops.judging.critic.reasoning_annotation import LLMAnnotator, ProgrammaticAnnotator, ReasoningAnnotator
from ops.curriculum import task_specs
from ops.agent.episode import Policy
from ops.samples.filtering import FilterConfig
from training.methods.grsd.fork_pairs import detect_fork_pairs
from training.methods.grsd.forks import ForkConfig
from ops.evaluation.plots import sr_histogram_chart
from ops.agent.policy_prompt import OUTPUT_FORMATS, PromptStyle, writes_structured_reasoning
from ops.rollout.engine import RolloutConfig, run_rollouts
from ops.data.schemas import conform
from ops.samples.step_samples import build_step_samples, finish_response
from resources.experiment import experiment_of, experiment_partitions, lineage_metadata
from resources.environment import AdbDeviceResource, SimulatorResource
from resources.llm import LLMResource
from resources.policy import PolicyResource
from resources.storage import ArtifactStore, StorageLocation

GROUP = "learning"
FINISH_AT_GOAL = (
    "End a successful attempt that acted on after its goal held (the critic labels it: `goal_held`) at its first "
    "such step, with 'finish the task' as that step's target (not in MobileForge or UI-Voyager). Off by default: with the "
    "tiny base, RFT trained this way declares success after a few steps of anything (held-out false complete "
    "0.95) and HiFPO still never terminates (README).")


class StepDatasetConfig(dg.Config):
    sr_min: float = Field(default=0.0, ge=0, le=1, description="Keep tasks with SR(x) >= sr_min (MobileForge eq. 10).")
    sr_max: float = Field(default=0.9, ge=0, le=1, description="Keep tasks with SR(x) <= sr_max; 0.9 drops mastered tasks.")
    best_attempt: bool = Field(default=True, description="Train on the best attempt k* only (eq. 13).")
    reasonable_only: bool = Field(default=True, description="Keep only steps the critic marked reasonable (eq. 14).")
    hint_free_copies: bool = Field(default=True, description=(
        "Also add each hinted step with its prompt as it would read without the hints, so training covers the "
        "hint-free prompts of test time (a policy that copies the hinted action learns nothing transferable from "
        "hinted prompts alone). false = hint-contextualized prompts only, exactly MobileForge's recipe."))
    finish_at_goal: bool = Field(default=False, description=FINISH_AT_GOAL)


def reasoning_annotator(critic_feedback: pl.DataFrame, simulator: SimulatorResource | AdbDeviceResource,
                        llm: LLMResource) -> ReasoningAnnotator:
    """The annotator twin of the critic that labelled the steps (`critic_feedback.critic`)."""
    critics = set(critic_feedback["critic"])
    if critics == {ProgrammaticCritic.name}:
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


@dg.asset(partitions_def=experiment_partitions, group_name=GROUP, code_version="step-datasets-6", op_tags=HIFPO_CHAIN,
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
        **lineage_metadata(context, config),
    }))
    return samples


HIFPO_SETTINGS = "training.methods.hifpo.trainer:HiFPOConfig"
SFT_SETTINGS = "training.trainers.sft:SFTTrainConfig"


class HiFPOAssetConfig(dg.Config):
    preset: str = Field(default="cpu_tiny", pattern="^(cpu_tiny|gpu)$",
                        description="'cpu_tiny': the embedded CPU preset; 'gpu': MobileForge table 13 defaults.")
    overrides: dict[str, Any] = Field(default_factory=dict, description="HiFPOConfig fields to override.")
    remedial: bool = Field(default=False, description=(
        "After HiFPO's training (after the last history-alignment round when it is on), train one more epoch of the "
        "same GRPO training on the step dataset supplemented by the remedial trajectories (teacher-repaired failed "
        "attempts, MobileWizard §3.4.4, App. B's last epoch). Off by default until measured. With the default "
        "solver teacher those rows are the simulator's own plans, help a deployment would not have (report them "
        "beside the faithful result); a teacher policy is MobileWizard's setting."))

    @model_validator(mode="after")
    def _overrides_fit(self) -> "HiFPOAssetConfig":
        if self.overrides:  # checked before any work (importing the trainer costs seconds: only when set)
            trainer_settings(HIFPO_SETTINGS, self.preset, self.overrides)
        return self


@dg.asset(partitions_def=experiment_partitions, group_name=GROUP, code_version="hifpo-7", op_tags=HIFPO_CHAIN,
          description="One checkpoint (not a table): the base trained by step-level GRPO with the adaptive GUI "
                      "action reward on the step dataset (MobileForge §2.3.4); with history_alignment, in rounds "
                      "with MobileWizard's history self-alignment (§3.4.3), its record in `history_alignment`; with "
                      "remedial, one last epoch with the remedial trajectories added (§3.4.4), its record in "
                      "`remedial_epoch`.")
def hifpo_checkpoint(context: dg.AssetExecutionContext, config: HiFPOAssetConfig, step_datasets: pl.DataFrame,
                     remedial_trajectories: pl.DataFrame, base_policy: Checkpoint, policy: PolicyResource,
                     artifact_store: ArtifactStore) -> Checkpoint:
    clock = CpuClock()
    from datasets import Dataset

    from training.trainers.step_datasets import build_step_dataset
    from training.methods.hifpo.trainer import train_hifpo

    if base_policy.uri is None:
        return unchanged_checkpoint(context, "hifpo", base_policy, NO_WEIGHTS, clock, lineage_metadata(context, config))
    if step_datasets.height == 0:
        return unchanged_checkpoint(context, "hifpo", base_policy, "the step dataset is empty: every task was filtered out",
                                    clock, lineage_metadata(context, config))
    # responses are scored in the format the policy writes (overrides may still name another)
    overrides = {"action_format": OUTPUT_FORMATS[PromptStyle(policy.prompt_style)], **config.overrides}
    train_config = trainer_settings(HIFPO_SETTINGS, config.preset, overrides)
    remedial = None
    if config.remedial:  # an empty dataset: the trainer trains without the last epoch and records why
        rows = conform(remedial_trajectories, "training_samples")
        remedial = build_step_dataset(rows) if rows.height else Dataset.from_list([])
    with tempfile.TemporaryDirectory() as tmp:
        report = train_hifpo(artifact_store.local_path(base_policy.uri), build_step_dataset(step_datasets),
                             Path(tmp) / "hifpo", train_config, progress=training_progress(context, "hifpo"),
                             remedial=remedial)
        if "remedial_epoch" in report.details:
            context.log.info(f"hifpo remedial epoch: {report.details['remedial_epoch']}")
        # history alignment: validation reward per round, triggers, steps rewritten / labels kept, duplicates
        # dropped; remedial epoch: rows added, its optimizer steps, or why it was skipped
        records = {name: dg.MetadataValue.json(record) for name, record in report.details.items()}
        return trained_checkpoint(context, report, artifact_store, "hifpo", base_policy, clock,
                                  {**lineage_metadata(context, config), **records})


class SFTAssetConfig(dg.Config):
    preset: str = Field(default="cpu_tiny", pattern="^(cpu_tiny|gpu)$", description="Training preset.")
    overrides: dict[str, Any] = Field(default_factory=dict, description="SFTTrainConfig fields to override.")

    @model_validator(mode="after")
    def _overrides_fit(self) -> "SFTAssetConfig":
        if self.overrides:  # checked before any work (importing the trainer costs seconds: only when set)
            trainer_settings(SFT_SETTINGS, self.preset, self.overrides)
        return self


def _sft_config(config: SFTAssetConfig):
    return trainer_settings(SFT_SETTINGS, config.preset, config.overrides)


@dg.asset(partitions_def=experiment_partitions, group_name=GROUP, code_version="fork-pairs-1", op_tags=GRSD_CHAIN,
          description="One row per GRSD fork point: the step where a failed attempt left a successful attempt's "
                      "path on the same task (UI-Voyager Alg. 1).")
def fork_pairs(context: dg.AssetExecutionContext, rollout_attempts: pl.DataFrame,
               rollout_steps: pl.DataFrame) -> pl.DataFrame:
    pairs = detect_fork_pairs(rollout_steps, rollout_attempts, ForkConfig())
    context.add_output_metadata(tidy({
        "fork_pairs": pairs.height,
        "tasks": pairs["task_id"].n_unique() if pairs.height else 0,
        "sample": md_table(["task", "success@step", "failed@step", "ssim"],
                           [(r["task_id"], f"{r['success_attempt']}@{r['success_step']}",
                             f"{r['failed_attempt']}@{r['failed_step']}", f"{r['similarity']:.3f}")
                            for r in pairs.head(8).iter_rows(named=True)]),
        **lineage_metadata(context),
    }))
    return pairs


@dg.asset(partitions_def=experiment_partitions, group_name=GROUP, code_version="grsd-3", op_tags=GRSD_CHAIN,
          description="One checkpoint (not a table): the base trained by SFT of each fork point's failed context "
                      "on the successful attempt's response (UI-Voyager §3.3).")
def grsd_checkpoint(context: dg.AssetExecutionContext, config: SFTAssetConfig, fork_pairs: pl.DataFrame,
                    rollout_steps: pl.DataFrame, base_policy: Checkpoint, artifact_store: ArtifactStore) -> Checkpoint:
    clock = CpuClock()
    from training.trainers.step_datasets import build_step_dataset, grsd_samples
    from training.trainers.sft import train_sft

    if base_policy.uri is None:
        return unchanged_checkpoint(context, "grsd", base_policy, NO_WEIGHTS, clock, lineage_metadata(context, config))
    samples = grsd_samples(fork_pairs, rollout_steps)
    if samples.height == 0:
        return unchanged_checkpoint(context, "grsd", base_policy, "no fork pairs: no task had both a successful and a "
                          "failed attempt", clock, lineage_metadata(context, config))
    with tempfile.TemporaryDirectory() as tmp:
        report = train_sft(artifact_store.local_path(base_policy.uri),
                           build_step_dataset(samples, require_response=True), Path(tmp) / "grsd",
                           _sft_config(config), method="grsd", progress=training_progress(context, "grsd"))
        return trained_checkpoint(context, report, artifact_store, "grsd", base_policy, clock,
                                  lineage_metadata(context, config))


class RFTAssetConfig(SFTAssetConfig):
    rounds: int = Field(default=2, ge=1, le=MAX_ATTEMPTS, description=(
        "Rejection fine-tuning rounds (UI-Voyager §3.2); a round without a success leaves the policy as it was."))
    variant_seed_offset: int = Field(default=1000, ge=1, le=MAX_SEED,
                                     description="Round r re-instantiates template tasks with seed + r * offset (fresh variants).")
    attempts: int = Field(default=3, ge=1, le=MAX_ATTEMPTS, description="Attempts per task in rounds after the first.")
    temperature: float = Field(default=1.0, gt=0, le=MAX_TEMPERATURE, description=(
        "Sampling temperature of those attempts (greedy decoding would repeat one hint-free attempt K times)."))
    use_hints: bool = Field(default=False, description=(
        "Run those attempts hint-guided like `rollouts` (attempt k reads the programmatic critic's hints of "
        "attempts 1..k-1); UI-Voyager samples them without hints. hint_free_copies adds hint-free prompts."))
    hint_steps: int = Field(default=1, ge=1, le=MAX_ATTEMPTS, description=(
        "With use_hints: actions of a shortest solution a hint names; 1 (default): the paper-faithful "
        "corrective hint, more: part of the oracle-plan ablation (see rollouts)."))
    direct_plans: bool = Field(default=False, description=(
        "With use_hints: hint actions without long presses and searches (see rollouts; False by default)."))
    hint_from_start: bool = Field(default=False, description=(
        "With use_hints: hints also name the attempt's steps before the mistake; False (default): "
        "paper-faithful, True: oracle-plan ablation (see rollouts)."))
    sampling_seed: int = Field(default=0, ge=0, le=MAX_SEED, description="torch seed of the sampling, for reproducible rounds.")
    max_tasks: int | None = Field(default=60, ge=1, le=MAX_COUNT, description=(
        "Fresh task variants per round after the first: variants of the templates the previous round solved "
        "first, then of the others."))
    hint_free_copies: bool = Field(default=True, description=(
        "Also train on each hinted step's prompt as it would read without hints (see step_datasets)."))
    finish_at_goal: bool = Field(default=False, description=FINISH_AT_GOAL)
    remedial: bool = Field(default=False, description=(
        "Mix the remedial trajectories (teacher-repaired failed attempts, MobileWizard §3.4.4) into the final "
        "training run, as MobileWizard adds them in one last epoch. Off by default until measured. With the "
        "default solver teacher those rows are the simulator's own plans, help a deployment would not have "
        "(report them beside the faithful result); a teacher policy is MobileWizard's setting."))


@dg.asset(partitions_def=experiment_partitions, group_name=GROUP, code_version="rft-11", op_tags=RFT_CHAIN,
          description="One checkpoint (not a table): the base after iterative rejection fine-tuning on "
                      "verified-successful trajectories (UI-Voyager §3.2).")
def rft_checkpoint(context: dg.AssetExecutionContext, config: RFTAssetConfig, curriculum_tasks: pl.DataFrame,
                   rollout_attempts: pl.DataFrame, rollout_steps: pl.DataFrame, critic_feedback: pl.DataFrame,
                   remedial_trajectories: pl.DataFrame, base_policy: Checkpoint, simulator: SimulatorResource,
                   policy: PolicyResource, storage: StorageLocation, artifact_store: ArtifactStore) -> Checkpoint:
    clock = CpuClock()
    from training.methods.rft.trainer import RFTRoundsConfig, run_rft_rounds

    if base_policy.uri is None:
        return unchanged_checkpoint(context, "rft", base_policy, NO_WEIGHTS, clock, lineage_metadata(context, config))
    experiment, run = experiment_of(context), context.run_id
    store = storage.attempt_store(experiment, "rft")
    critic = ProgrammaticCritic(simulator.world_seed, config.hint_steps, config.direct_plans, config.hint_from_start)

    def act(checkpoint_dir: Path | None, round_index: int) -> ContextManager[Policy]:
        """Round r's policy: the previous round's checkpoint (stored, so it is a checkpoint like any other)."""
        acting = base_policy if checkpoint_dir is None else base_policy.trained_from(
            "rft", f"rft-r{round_index - 1}:{run[:8]}",
            artifact_store.put_dir(checkpoint_dir, f"{experiment}/rft_rounds/{run}/round{round_index - 1}"), 0)
        return policy.acting_policy(acting, artifact_store, temperature=config.temperature,
                                    seed=config.sampling_seed, version=f"rft-r{round_index - 1}:{run[:8]}")

    def attempt(tasks, agent):
        run_rollouts(tasks, simulator.make_env, agent, critic, store,
                     RolloutConfig(attempts=config.attempts, use_hints=config.use_hints))
        return collect_tables(store, agent.version, tasks)

    rounds = RFTRoundsConfig(rounds=config.rounds, variant_seed_offset=config.variant_seed_offset,
                             world_seed=simulator.world_seed,
                             max_tasks=config.max_tasks, hint_free_copies=config.hint_free_copies,
                             finish_at_goal=config.finish_at_goal, sft=_sft_config(config))
    with tempfile.TemporaryDirectory() as tmp:
        result = run_rft_rounds(task_specs(curriculum_tasks, True, None),
                                (rollout_attempts, rollout_steps, critic_feedback), rounds,
                                base_dir=artifact_store.local_path(base_policy.uri), workdir=Path(tmp),
                                finish_response=finish_response(policy.prompt_style), act=act, attempt=attempt,
                                log=context.log.warning, progress=training_progress(context, "rft"),
                                remedial=conform(remedial_trajectories, "training_samples") if config.remedial else None)
        extra = {"rounds": dg.MetadataValue.json(result.rounds), **lineage_metadata(context, config)}
        if result.report is None:
            return unchanged_checkpoint(context, "rft", base_policy, "no verified-successful attempt to learn from",
                                        clock, extra)
        return trained_checkpoint(context, result.report, artifact_store, "rft", base_policy, clock, extra)
