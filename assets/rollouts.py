"""rollout_attempts + rollout_steps + critic_feedback: K hint-guided attempts per task, judged.

One multi-asset, because hints must flow from the critic of attempt k-1 into the prompt of
attempt k. Attempts are staged per attempt under the experiment's storage as they finish, so
a rerun after a crash resumes instead of starting over. On the embedded simulator with the
programmatic critic the tasks are split over `workers` processes (each task's K attempts stay in
one), as the benchmark splits its policies. With the deployment's `shards` > 1 the same work runs as
that many steps side by side (`assets.rollout_shards`), through the functions below.
"""

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

import dagster as dg
import polars as pl
from pydantic import Field

from assets.metadata import chart_md, counts, md_table, thumbnail_md, tidy
from assets.placement import pool_tags
from assets.worker_pool import run_in_workers
from ops.data.attempt_store import ParquetAttemptStore, collect_tables
from ops.config_bounds import MAX_ATTEMPTS, MAX_COUNT, MAX_PARALLEL, MAX_TEMPERATURE, MAX_WORKERS
from training.methods.checkpoint import Checkpoint
from ops.judging.critic.llm_critic import LLMCritic
from ops.judging.judges import PROGRAMMATIC_CRITIC
from ops.curriculum import task_specs
from ops.agent.episode import Critic, Environment, TaskSpec
from ops.evaluation.plots import sr_histogram_chart, success_by_attempt_chart
from ops.agent.policy_prompt import writes_structured_reasoning
from ops.rollout.progress import CountdownLog
from ops.rollout.engine import RolloutConfig, RolloutSummary, attempts_to_run, run_rollouts
from resources.deployment import DEVICES
from resources.experiment import config_key, experiment_of, experiment_partitions
from ops.judging.critic.hint_settings import CorrectiveHintSettings
from resources.environment import SimulatorResource
from resources.judging import CriticKind, rollout_critic
from resources.llm import LLMResource
from resources.policy import PolicyResource
from resources.portable import PortableResource
from resources.storage import ArtifactStore, StorageLocation
from resources.viewer_links import ATTEMPTS_PAGE, viewer_link


class RolloutAssetConfig(dg.Config, CorrectiveHintSettings):
    attempts: int = Field(default=3, ge=1, le=MAX_ATTEMPTS, description="K attempts per task (MobileForge §2.3.1).")
    use_hints: bool = Field(default=True, description="Append hints of attempts 1..k-1 to attempt k.")
    max_parallel_tasks: int = Field(default=32, ge=1, le=MAX_PARALLEL, description="Tasks stepped together in one policy batch.")
    loop_window: int = Field(default=4, ge=2, le=MAX_ATTEMPTS, description="Identical (screen, output) steps in a row that end an attempt.")
    critic: CriticKind = Field(default="auto", description=(
        "'programmatic': the simulator's judge + navigation distance (simulator only); 'llm': the LLM critic "
        "resource; 'auto': programmatic where the environment is the simulator, else the LLM critic."))
    max_tasks: int | None = Field(default=None, ge=1, le=MAX_COUNT, description="Run only the first N curriculum tasks.")
    verifiable_only: bool = Field(default=True, description=(
        "On the simulator, skip tasks its judges cannot check. Outside it nothing is skipped: the critic "
        "judges every task."))
    temperature: float | None = Field(
        default=None, ge=0, le=MAX_TEMPERATURE, description="Sampling temperature of the attempts; None: the policy resource's "
        "(greedy in the embedded profile, where attempts differ through their hints).")
    workers: int = Field(default=2, ge=1, le=MAX_WORKERS, description=(
        "Worker processes the tasks are split over (every other task to each; one torch thread each by default, "
        "policy.torch_threads), on the embedded simulator with the programmatic critic; devices and the LLM "
        "critic run in the step's process. Sampled attempts (temperature > 0) depend on the split."))


@dataclass(frozen=True)
class RolloutPart:
    """Some of the curriculum's tasks, rolled out by one process."""

    label: str
    tasks: list[TaskSpec]
    checkpoint: Checkpoint
    temperature: float
    conditions: str
    critic: Critic
    store: ParquetAttemptStore
    config: RolloutConfig


def roll_out(part: RolloutPart, policy: PortableResource[PolicyResource],
             artifact_store: PortableResource[ArtifactStore], make_env: Callable[[], Environment],
             log: Callable[[str], None]) -> tuple[RolloutSummary, str]:
    """Run (or resume) `part`'s attempts; its summary and the policy version they are staged under."""
    with policy.rebuild().acting_policy(part.checkpoint, artifact_store.rebuild(), temperature=part.temperature,
                                        conditions=part.conditions) as agent:
        to_run = attempts_to_run(part.store, part.tasks, agent.version, part.config.attempts)
        summary = run_rollouts(part.tasks, make_env, agent, part.critic, part.store, part.config,
                               on_attempt=CountdownLog(part.label, to_run, log))
        return summary, agent.version


@dataclass(frozen=True)
class RolloutPlan:
    """What a rollouts step (the single one, a shard or the merge) derives alike from the config and inputs."""

    experiment: str
    tasks: list[TaskSpec]
    temperature: float
    conditions: str  # staged attempts' policy version suffix: settings that shape an attempt
    critic: Critic
    store: ParquetAttemptStore
    run_config: RolloutConfig
    parallel: bool  # the embedded simulator with the programmatic critic: tasks split over worker processes


@dataclass(frozen=True)
class RolloutDone:
    """What rolling out some tasks did: its summary, the policy version its attempts are staged under, and
    the LLM critic's call counts (None for another critic)."""

    summary: RolloutSummary
    version: str
    critic_calls: dict[str, int] | None


def plan_rollouts(experiment: str, config: RolloutAssetConfig, curriculum_tasks: pl.DataFrame,
                  simulator: SimulatorResource, policy: PolicyResource, llm: LLMResource,
                  storage: StorageLocation) -> RolloutPlan:
    temperature = policy.temperature if config.temperature is None else config.temperature
    if not config.use_hints and config.attempts > 1 and temperature == 0:
        raise ValueError("rollouts: use_hints=false with a greedy policy (temperature 0) makes all "
                         f"{config.attempts} attempts of a task identical; set rollouts.temperature > 0 "
                         "(e.g. --set rollouts.temperature=1.0) or rollouts.attempts=1")
    tasks = task_specs(curriculum_tasks, config.verifiable_only and simulator.judge_name is not None, config.max_tasks)
    critic = rollout_critic(config.critic, simulator, llm, config)
    run_config = RolloutConfig(attempts=config.attempts, use_hints=config.use_hints,
                               max_parallel_tasks=config.max_parallel_tasks, loop_window=config.loop_window)
    # attempts are staged by policy version: one made under other rollout settings is not resumed
    conditions = "~" + config_key({
        "use_hints": config.use_hints, "loop_window": config.loop_window, "temperature": temperature,
        "critic": critic.name, "hint_steps": config.hint_steps, "direct_plans": config.direct_plans,
        "hint_from_start": config.hint_from_start})
    parallel = isinstance(simulator, SimulatorResource) and critic.name == PROGRAMMATIC_CRITIC
    return RolloutPlan(experiment, tasks, temperature, conditions, critic, storage.attempt_store(experiment),
                       run_config, parallel)


def roll_out_tasks(plan: RolloutPlan, tasks: list[TaskSpec], label: str, workers: int, checkpoint: Checkpoint,
                   simulator: SimulatorResource, policy: PolicyResource, artifact_store: ArtifactStore,
                   log: Callable[[str], None]) -> RolloutDone:
    """Run (or resume) `tasks`' attempts, split over up to `workers` processes where the plan allows."""
    workers = max(1, min(workers, len(tasks))) if plan.parallel else 1
    parts = [RolloutPart(label if workers == 1 else f"{label} ({i + 1}/{workers})", tasks[i::workers], checkpoint,
                         plan.temperature, plan.conditions, plan.critic, plan.store, plan.run_config)
             for i in range(workers)]
    make_env = simulator.env_factory() if plan.parallel else simulator.make_env
    done = run_in_workers(roll_out, parts, workers, log, PortableResource.of(policy),
                          PortableResource.of(artifact_store), make_env)
    calls = plan.critic.counts.summary() if isinstance(plan.critic, LLMCritic) else None
    return RolloutDone(RolloutSummary.combined([summary for summary, _ in done]), done[0][1], calls)


def merged(parts: list[RolloutDone]) -> RolloutDone:
    """The parts' summaries and critic calls added up; their attempts are staged under one policy version."""
    versions = {part.version for part in parts}
    if len(versions) != 1:
        raise ValueError(f"rollouts: shards staged their attempts under different policy versions {sorted(versions)}")
    calls = [part.critic_calls for part in parts if part.critic_calls is not None]
    return RolloutDone(RolloutSummary.combined([part.summary for part in parts]), versions.pop(),
                       dict(sum((Counter(c) for c in calls), Counter())) if calls else None)


def rollout_outputs(plan: RolloutPlan, done: RolloutDone, prompt_style: str, log: Callable[[str], None]):
    """The three tables of every attempt staged for the plan's tasks, with their metadata, as outputs."""
    summary, version = done.summary, done.version
    attempts, steps, feedback = collect_tables(plan.store, version, plan.tasks)
    log(f"rollouts: {summary.attempts_run} run, {summary.attempts_resumed} resumed, "
        f"{summary.attempts_failed} lost to errors, {summary.infrastructure_failures} interrupted by "
        f"their environment and run again, {summary.invalid_actions} invalid actions")
    sr = attempts.group_by("task_id").agg(pl.col("critic_decision").mean().alias("sr"))
    by_attempt = attempts.group_by("attempt").agg(pl.col("critic_decision").mean().alias("critic_sr"),
                                                  pl.col("gt_success").mean().alias("gt_sr")).sort("attempt")
    meta_attempts = tidy({
        "policy_version": version,
        "tasks": len(plan.tasks), "attempts": attempts.height,
        "attempts_run": summary.attempts_run, "attempts_resumed": summary.attempts_resumed,
        "attempts_failed": summary.attempts_failed, "infrastructure_failures": summary.infrastructure_failures,
        "invalid_actions": summary.invalid_actions,
        "errors": dg.MetadataValue.json(summary.errors[:20]),
        "mean_steps": float(attempts["n_steps"].mean() or 0.0),
        "end_reasons": counts(attempts["end_reason"]),
        "success_by_attempt": chart_md(success_by_attempt_chart(
            by_attempt["attempt"].to_list(), by_attempt["critic_sr"].to_list(), by_attempt["gt_sr"].to_list())),
        "sr_histogram": chart_md(sr_histogram_chart(sr["sr"].to_list())),
        "viewer": viewer_link(plan.experiment, ATTEMPTS_PAGE, stage="rollouts"),  # each attempt, step by step
    })
    sample = steps.head(6)
    structured = {"structured_reasoning_steps": int(steps["planning"].is_not_null().sum()),
                  "invalid_outputs_by_reason": counts(steps["parse_error"].drop_nulls()),
                  "verified_outcomes": counts(steps["verified_outcome"].drop_nulls())} if writes_structured_reasoning(prompt_style) else {}
    meta_steps = tidy({"steps": steps.height, **structured,
                       "sample": md_table(["screen", "output", "parse error"],
                                          [(thumbnail_md(r["screenshot_png"]), r["raw_output"], r["parse_error"] or "")
                                           for r in sample.iter_rows(named=True)])})
    meta_feedback = tidy({"critic": plan.critic.name,
                          **({"critic_calls": dg.MetadataValue.json(done.critic_calls)}
                             if done.critic_calls is not None else {}), "decisions": counts(feedback["decision"]),
                          "with_hint": int(feedback["hint_summary"].is_not_null().sum())})
    return (dg.Output(attempts, metadata=meta_attempts), dg.Output(steps, metadata=meta_steps),
            dg.Output(feedback, metadata=meta_feedback))


ROLLOUT_OUTS = {
    "rollout_attempts": dg.AssetOut(description="One row per attempt: outcome, critic decision, ground truth.",
                                    code_version="rollouts-10"),
    "rollout_steps": dg.AssetOut(description="One row per step: screenshot, prompt, raw output, action.",
                                 code_version="rollouts-10"),
    "critic_feedback": dg.AssetOut(description="One row per attempt's hierarchical critic feedback: decision, step "
                                               "labels, hint.", code_version="rollouts-10"),
}


@dg.multi_asset(outs=ROLLOUT_OUTS, partitions_def=experiment_partitions, group_name="interaction",
                pool=DEVICES, op_tags=pool_tags(DEVICES))
def rollouts(context: dg.AssetExecutionContext, config: RolloutAssetConfig, curriculum_tasks: pl.DataFrame,
             base_policy: Checkpoint, simulator: SimulatorResource, policy: PolicyResource, llm: LLMResource,
             storage: StorageLocation, artifact_store: ArtifactStore):
    plan = plan_rollouts(experiment_of(context), config, curriculum_tasks, simulator, policy, llm, storage)
    done = roll_out_tasks(plan, plan.tasks, "rollout attempts", config.workers, base_policy, simulator, policy,
                          artifact_store, context.log.info)
    return rollout_outputs(plan, done, policy.prompt_style, context.log.info)
