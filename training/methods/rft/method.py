"""RFT as a registered method: iterative rejection fine-tuning on verified-successful trajectories
(UI-Voyager §3.2): round 1 learns from the curriculum's rollouts, each later round from a fresh
variant set attempted by the previous round's policy."""

from __future__ import annotations

from contextlib import AbstractContextManager
from pathlib import Path

from pydantic import Field

from ops.agent.episode import Policy
from ops.config_bounds import MAX_ATTEMPTS, MAX_COUNT, MAX_SEED, MAX_TEMPERATURE
from ops.curriculum import task_specs
from ops.data.attempt_store import collect_tables
from ops.data.schemas import conform
from ops.judging.critic.hint_settings import CorrectiveHintSettings
from ops.judging.judges import ENVIRONMENT_JUDGES
from ops.rollout.engine import RolloutConfig, run_rollouts
from ops.samples.filtering import FINISH_AT_GOAL, HINT_FREE_COPIES
from ops.samples.step_samples import finish_response
from training.methods.method import NO_WEIGHTS, Method, MethodResult, MethodRun, base_start
from training.trainers.sft_config import SFTTrainConfig

class RFTOptions(CorrectiveHintSettings):
    rounds: int = Field(default=2, ge=1, le=MAX_ATTEMPTS, description=(
        "Rejection fine-tuning rounds (UI-Voyager §3.2); a round without a success leaves the policy as it was."))
    variant_seed_offset: int = Field(default=1000, ge=1, le=MAX_SEED, description=(
        "On the simulator, round r re-instantiates template tasks with seed + r * offset (fresh variants); on "
        "devices the critic LLM writes new instructions from the solved attempts instead (UI-Voyager §3.2)."))
    attempts: int = Field(default=3, ge=1, le=MAX_ATTEMPTS, description="Attempts per task in rounds after the first.")
    temperature: float = Field(default=1.0, gt=0, le=MAX_TEMPERATURE, allow_inf_nan=False, description=(
        "Sampling temperature of those attempts (greedy decoding would repeat one hint-free attempt K times)."))
    use_hints: bool = Field(default=False, description=(
        "Run those attempts hint-guided like `rollouts` (attempt k reads the programmatic critic's hints of "
        "attempts 1..k-1, as hint_steps / direct_plans / hint_from_start say); UI-Voyager samples them without "
        "hints. hint_free_copies adds hint-free prompts."))
    sampling_seed: int = Field(default=0, ge=0, le=MAX_SEED, description="torch seed of the sampling, for reproducible rounds.")
    max_tasks: int | None = Field(default=60, ge=1, le=MAX_COUNT, description=(
        "Fresh task variants per round after the first: variants of the templates the previous round solved "
        "first, then of the others."))
    hint_free_copies: bool = Field(default=True, description=HINT_FREE_COPIES)
    finish_at_goal: bool = Field(default=False, description=FINISH_AT_GOAL)
    remedial: bool = Field(default=False, description=(
        "Mix the remedial trajectories (teacher-repaired failed attempts, MobileWizard §3.4.4) into the final "
        "training run, as MobileWizard adds them in one last epoch. Off by default until measured. With the "
        "default solver teacher those rows are the simulator's own plans, help a deployment would not have "
        "(report them beside the faithful result); a teacher policy is MobileWizard's setting."))


def train(run: MethodRun) -> MethodResult:
    from training.methods.rft.trainer import RFTRoundsConfig, run_rft_rounds

    start, services, options = base_start(run), run.services, run.options
    if start.uri is None:
        return MethodResult.unchanged(start, NO_WEIGHTS)
    store = services.attempt_store("rft")
    critic = services.rollout_critic(options)
    tag = services.run_id[:8]

    def act(checkpoint_dir: Path | None, round_index: int) -> AbstractContextManager[Policy]:
        """Round r's policy: the previous round's checkpoint (stored, so it is a checkpoint like any other)."""
        version = f"rft-r{round_index - 1}:{tag}"
        acting = start if checkpoint_dir is None else start.trained_from(
            "rft", version, services.store_weights(checkpoint_dir, f"rft_rounds/round{round_index - 1}"), 0)
        return services.acting_policy(acting, temperature=options.temperature, seed=options.sampling_seed,
                                      version=version)

    def attempt(tasks, agent):
        run_rollouts(tasks, services.environment_factory(), agent, critic, store,
                     RolloutConfig(attempts=options.attempts, use_hints=options.use_hints))
        return collect_tables(store, agent.version, tasks)

    inputs = run.inputs
    rounds = RFTRoundsConfig(rounds=options.rounds, max_tasks=options.max_tasks,
                             hint_free_copies=options.hint_free_copies, finish_at_goal=options.finish_at_goal,
                             sft=run.settings())
    result = run_rft_rounds(task_specs(inputs["curriculum_tasks"], services.judge().name in ENVIRONMENT_JUDGES, None),
                            (inputs["rollout_attempts"], inputs["rollout_steps"], inputs["critic_feedback"]), rounds,
                            base_dir=services.weights_dir(start), workdir=services.workdir,
                            finish_response=finish_response(services.prompt_style), act=act, attempt=attempt,
                            variants=services.task_variants(options.variant_seed_offset),
                            log=services.warn, progress=services.progress, train=services.train_sft,
                            remedial=conform(inputs["remedial_trajectories"], "training_samples")
                            if options.remedial else None)
    if result.report is None:
        return MethodResult(start, reason="no verified-successful attempt to learn from", details={"rounds": result.rounds})
    return MethodResult(start, report=result.report, details={"rounds": result.rounds})


RFT = Method(
    name="rft", title="RFT", source="UI-Voyager §3.2",
    summary="The base after iterative rejection fine-tuning on verified-successful trajectories (UI-Voyager §3.2).",
    settings=SFTTrainConfig, options=RFTOptions, train=train,
    reads=("curriculum_tasks", "rollout_attempts", "rollout_steps", "critic_feedback", "remedial_trajectories",
           "base_policy"),
    preload=("training.methods.rft.trainer",), priority=3, code_version="11")
