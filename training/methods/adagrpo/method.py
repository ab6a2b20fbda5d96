"""AdaGRPO as a registered method: the RFT checkpoint (or the base) trained online by trajectory-level
GRPO with SPA, AdaPR and FCF (MobileRL §2.2), in MobileRL's order (§2.1): supervised fine-tuning
first, then online RL from that model."""

from __future__ import annotations

from contextlib import AbstractContextManager
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from ops.agent.episode import Policy
from ops.curriculum import task_specs
from training.methods.adagrpo.config import AdaGRPOConfig
from training.methods.adagrpo.rules import FailureCurriculum
from training.methods.checkpoint import Checkpoint
from training.methods.method import NO_WEIGHTS, Method, MethodResult, MethodRun

HISTORY = "adagrpo_failure_history.json"  # the experiment's FCF history, kept across training runs
ABLATION_FIELDS = ("spa", "adapr", "fcf", "reward", "structure_weight", "reasoning_weight")


class AdaGRPOOptions(BaseModel):
    keep_history: bool = Field(default=True, description=(
        "Read and update the experiment's FCF failure history (MobileRL keeps it across training runs); "
        "false starts from none and stores nothing."))
    start_from: Literal["rft", "base"] = Field(default="rft", description=(
        "The checkpoint online RL starts from. 'rft': the RFT checkpoint, our supervised stage, as MobileRL §2.1 "
        "runs AdaGRPO on its SFT model (the base when RFT left it unchanged); 'base': the base policy, for "
        "comparing AdaGRPO with HiFPO from the same start."))


def start_checkpoint(start_from: str, base_policy: Checkpoint, rft_checkpoint: Checkpoint) -> tuple[Checkpoint, str]:
    """The checkpoint AdaGRPO starts from and a line saying which. An RFT checkpoint that RFT left
    unchanged holds the base's weights, so the start is then the base itself (named as such, which
    also keeps a served base asked at its endpoint)."""
    if start_from == "base":
        return base_policy, f"the base policy {base_policy.version}"
    if not rft_checkpoint.trained:
        return base_policy, f"the base policy {base_policy.version}: RFT left it unchanged ({rft_checkpoint.reason})"
    return rft_checkpoint, f"the RFT checkpoint {rft_checkpoint.version}"


def train(run: MethodRun) -> MethodResult:
    from training.methods.adagrpo.trainer import run_adagrpo

    services, options = run.services, run.options
    start, started = start_checkpoint(options.start_from, run.inputs["base_policy"], run.inputs["rft_checkpoint"])
    services.log(f"adagrpo starts from {started}")
    described = {"start_checkpoint": started}
    if start.uri is None:
        return MethodResult.unchanged(start, NO_WEIGHTS, **described)
    variants = services.task_variants(0)  # instances are drawn at the epochs' own seeds
    pool = variants.rl_pool(task_specs(run.inputs["curriculum_tasks"], False, None))
    if not pool:
        return MethodResult.unchanged(start, "the curriculum has no task online RL can train on (on the simulator: "
                                             "a train-split template task)", **described)
    settings = run.settings()
    failures = FailureCurriculum.from_json(services.read_state(HISTORY) if options.keep_history else None,
                                           settings.fcf_fail_epochs, settings.fcf_cooldown_epochs)
    tag = services.run_id[:8]

    def act(checkpoint_dir: Path | None, epoch: int) -> AbstractContextManager[Policy]:
        """Epoch e's policy: the start checkpoint, then the previous epoch's weights read in place, sampling
        at the settings' temperature."""
        version = f"adagrpo-e{epoch - 1}:{tag}"
        acting = start if checkpoint_dir is None else start.trained_from("adagrpo", version, f"file://{checkpoint_dir}", 0)
        return services.acting_policy(acting, temperature=settings.temperature, seed=settings.seed + epoch,
                                      version=version)

    # training loads the start's weights, and so does TRL's KL reference (GRPOTrainer rebuilds it from the
    # same directory; with LoRA, the model with its adapters off): the KL term keeps the policy near the
    # model RL started from (the RFT model under start_from=rft), MobileRL §2.2's "prior distribution"
    result = run_adagrpo(pool, base_dir=services.weights_dir(start), workdir=services.workdir, config=settings,
                         act=act, failures=failures, judge=services.judge(), variants=variants,
                         group_envs=services.group_environment_factory, world_seed=services.world_seed,
                         log=services.log, progress=services.progress)
    if options.keep_history:
        services.write_state(HISTORY, failures.to_json())
    details = {"pool": len({variants.key(t) for t in pool}), "judge": services.judge().name, "episodes": result.episodes, "rollout_seconds": result.rollout_seconds,
               "update_seconds": result.update_seconds, "episode_errors": len(result.episode_errors),
               "epochs_run": len(result.curves["reward"]),
               "ended": result.stopped or f"after all {settings.epochs} epochs",
               "failure_history": {**failures.counts(), "epochs_seen": failures.epochs_seen},
               "ablation": {"start_from": options.start_from, **{k: getattr(settings, k) for k in ABLATION_FIELDS}},
               "unscored_reasoning_steps": result.unscored_steps,
               "final_epoch": {k: v[-1][1] for k, v in result.curves.items() if v}, **described}
    if result.report is None:  # the curves still show what the episodes did
        return MethodResult(start, reason="no trajectory group had reward variance: every group's G episodes scored "
                            "alike, so every advantage was 0", details=details, curves=result.curves)
    return MethodResult(start, report=result.report, details=details)


ADAGRPO = Method(
    name="adagrpo", title="AdaGRPO", source="MobileRL §2.2",
    summary="The RFT checkpoint (start_from: rft, MobileRL §2.1's SFT then RL) or the base trained online by "
            "trajectory-level GRPO on the curriculum's train-split templates at fresh seeds, with SPA, AdaPR and FCF "
            "(MobileRL §2.2).",
    settings=AdaGRPOConfig, options=AdaGRPOOptions, train=train,
    reads=("curriculum_tasks", "base_policy", "rft_checkpoint"),
    preload=("training.methods.adagrpo.trainer",), priority=3, code_version="3")
