"""adagrpo_checkpoint: the RFT checkpoint (or the base) trained online in the simulator by AdaGRPO
(MobileRL §2.2), in MobileRL's order (§2.1): supervised fine-tuning first, then online RL from that model."""

import tempfile
from pathlib import Path
from typing import Any, ContextManager, Literal

import dagster as dg
import polars as pl
import pyarrow.fs as pafs
from pydantic import Field, model_validator

from assets.checkpoints import NO_WEIGHTS, trained_checkpoint, trainer_settings, training_progress, unchanged_checkpoint
from assets.metadata import chart_md
from assets.training_priorities import RFT_CHAIN
from training.methods.adagrpo.rules import FailureCurriculum
from training.methods.checkpoint import Checkpoint
from ops.evaluation.cpu_clock import CpuClock
from ops.curriculum import task_specs
from ops.agent.episode import Policy
from ops.evaluation.plots import training_curves_chart
from phonesim.tasks import all_templates
from resources.environment import SimulatorResource
from resources.experiment import experiment_of, experiment_partitions, lineage_metadata
from resources.experiment_names import check_segment
from resources.policy import PolicyResource
from resources.storage import ArtifactStore, StorageLocation

HISTORY_FILE = "_state/adagrpo_failure_history.json"
ADAGRPO_SETTINGS = "training.methods.adagrpo.config:AdaGRPOConfig"


class AdaGRPOAssetConfig(dg.Config):
    preset: str = Field(default="cpu_tiny", pattern="^(cpu_tiny|paper)$", description=(
        "'cpu_tiny': the default run's small CPU budget; 'paper': MobileRL table 5 (G = 16, 20 epochs of 16 tasks)."))
    overrides: dict[str, Any] = Field(default_factory=dict, description=(
        "AdaGRPOConfig fields to override, e.g. {'epochs': 30}, {'spa': false} (ablations: spa, adapr, fcf), "
        "{'reward': 'shaped'}, {'structure_weight': 0.2, 'reasoning_weight': 0.2} (MobileWizard's terms)."))
    keep_history: bool = Field(default=True, description=(
        "Read and update the experiment's FCF failure history (MobileRL keeps it across training runs); "
        "false starts from none and stores nothing."))
    start_from: Literal["rft", "base"] = Field(default="rft", description=(
        "The checkpoint online RL starts from. 'rft': the RFT checkpoint, our supervised stage, as MobileRL §2.1 "
        "runs AdaGRPO on its SFT model (the base when RFT left it unchanged); 'base': the base policy, for "
        "comparing AdaGRPO with HiFPO from the same start."))

    @model_validator(mode="after")
    def _overrides_fit(self) -> "AdaGRPOAssetConfig":
        if self.overrides:  # checked before any work (importing the trainer costs seconds: only when set)
            trainer_settings(ADAGRPO_SETTINGS, self.preset, self.overrides)
        return self


def _history_path(storage: StorageLocation, experiment: str) -> tuple[pafs.FileSystem, str]:
    fs, root = storage.filesystem()
    return fs, f"{root}/{check_segment(experiment, 'experiment')}/{HISTORY_FILE}"


def _read_history(fs: pafs.FileSystem, path: str) -> str | None:
    if fs.get_file_info(path).type == pafs.FileType.NotFound:
        return None
    with fs.open_input_stream(path) as f:
        return f.read().decode()


def _write_history(fs: pafs.FileSystem, path: str, text: str) -> None:
    fs.create_dir(path.rsplit("/", 1)[0], recursive=True)
    with fs.open_output_stream(path) as f:
        f.write(text.encode())


def start_checkpoint(start_from: str, base_policy: Checkpoint, rft_checkpoint: Checkpoint) -> tuple[Checkpoint, str]:
    """The checkpoint AdaGRPO starts from and a line saying which. An RFT checkpoint that RFT left
    unchanged holds the base's weights, so the start is then the base itself (named as such, which
    also keeps a served base asked at its endpoint)."""
    if start_from == "base":
        return base_policy, f"the base policy {base_policy.version}"
    if not rft_checkpoint.trained:
        return base_policy, f"the base policy {base_policy.version}: RFT left it unchanged ({rft_checkpoint.reason})"
    return rft_checkpoint, f"the RFT checkpoint {rft_checkpoint.version}"


@dg.asset(partitions_def=experiment_partitions, group_name="learning", code_version="adagrpo-3", op_tags=RFT_CHAIN,
          description="One checkpoint (not a table): the RFT checkpoint (start_from: rft, MobileRL §2.1's SFT then "
                      "RL) or the base trained online by trajectory-level GRPO on the curriculum's train-split "
                      "templates at fresh seeds, with SPA, AdaPR and FCF (MobileRL §2.2).")
def adagrpo_checkpoint(context: dg.AssetExecutionContext, config: AdaGRPOAssetConfig,
                       curriculum_tasks: pl.DataFrame, base_policy: Checkpoint, rft_checkpoint: Checkpoint,
                       simulator: SimulatorResource, policy: PolicyResource, storage: StorageLocation,
                       artifact_store: ArtifactStore) -> Checkpoint:
    clock = CpuClock()
    from training.methods.adagrpo.trainer import run_adagrpo

    start, started = start_checkpoint(config.start_from, base_policy, rft_checkpoint)
    context.log.info(f"adagrpo starts from {started}")
    described = {"start_checkpoint": started, **lineage_metadata(context, config)}
    if start.uri is None:
        return unchanged_checkpoint(context, "adagrpo", start, NO_WEIGHTS, clock, described)
    known = all_templates()
    pool = sorted({t.template_id for t in task_specs(curriculum_tasks, True, None)
                   if t.template_id and known[t.template_id].split == "train"})
    if not pool:
        return unchanged_checkpoint(context, "adagrpo", start, "the curriculum has no train-split template task",
                                    clock, described)
    train_config = trainer_settings(ADAGRPO_SETTINGS, config.preset, config.overrides)
    experiment, run = experiment_of(context), context.run_id
    fs, history_path = _history_path(storage, experiment)
    failures = FailureCurriculum.from_json(_read_history(fs, history_path) if config.keep_history else None,
                                           train_config.fcf_fail_epochs, train_config.fcf_cooldown_epochs)

    def act(checkpoint_dir: Path | None, epoch: int) -> ContextManager[Policy]:
        """Epoch e's policy: the start checkpoint, then the previous epoch's weights read in place, sampling
        at the config's temperature."""
        acting = start if checkpoint_dir is None else start.trained_from(
            "adagrpo", f"adagrpo-e{epoch - 1}:{run[:8]}", f"file://{checkpoint_dir}", 0)
        return policy.acting_policy(acting, artifact_store, temperature=train_config.temperature,
                                    seed=train_config.seed + epoch, version=f"adagrpo-e{epoch - 1}:{run[:8]}")

    with tempfile.TemporaryDirectory() as tmp:
        # training loads the start's weights, and so does TRL's KL reference (GRPOTrainer rebuilds it from the
        # same directory; with LoRA, the model with its adapters off): the KL term keeps the policy near the
        # model RL started from (the RFT model under start_from=rft), MobileRL §2.2's "prior distribution"
        result = run_adagrpo(pool, base_dir=artifact_store.local_path(start.uri), workdir=Path(tmp),
                             config=train_config, act=act, failures=failures, world_seed=simulator.world_seed,
                             screen_size=(simulator.screen_width, simulator.screen_height), log=context.log.info,
                             progress=training_progress(context, "adagrpo"))
        if config.keep_history:
            _write_history(fs, history_path, failures.to_json())
        extra = {"pool": len(pool), "episodes": result.episodes,
                 "rollout_seconds": result.rollout_seconds, "update_seconds": result.update_seconds,
                 "episode_errors": len(result.episode_errors),
                 "epochs_run": len(result.curves["reward"]),
                 "ended": result.stopped or f"after all {train_config.epochs} epochs",
                 "failure_history": dg.MetadataValue.json({**failures.counts(), "epochs_seen": failures.epochs_seen}),
                 "ablation": dg.MetadataValue.json({"start_from": config.start_from, **{k: getattr(train_config, k)
                                                    for k in ("spa", "adapr", "fcf", "reward", "structure_weight",
                                                              "reasoning_weight")}}),
                 "unscored_reasoning_steps": dg.MetadataValue.json(result.unscored_steps),
                 "final_epoch": dg.MetadataValue.json({k: v[-1][1] for k, v in result.curves.items() if v}),
                 **described}
        if result.report is None:  # the curves still show what the episodes did
            curves = {"curves": chart_md(training_curves_chart(result.curves, "adagrpo"))} \
                if any(result.curves.values()) else {}
            return unchanged_checkpoint(context, "adagrpo", start, "no trajectory group had reward variance: every "
                                        "group's G episodes scored alike, so every advantage was 0", clock, {**curves, **extra})
        return trained_checkpoint(context, result.report, artifact_store, "adagrpo", start, clock, extra)
