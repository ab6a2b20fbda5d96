"""Every training method of `training.methods.registry` as a Dagster asset `<name>_checkpoint`, built
from its declaration: its inputs, priority, code version, and a config class of the shared trainer
fields (enabled, preset, overrides) plus the method's own options. What each does with its result:
store a trained checkpoint and describe it, or pass its start on unchanged (said loudly)."""

import copy
import tempfile
from pathlib import Path
from typing import Any, ClassVar

import dagster as dg
import polars as pl
from pydantic import Field, ValidationError, create_model, model_validator

from assets.metadata import chart_md, tidy
from assets.placement import DEPLOYMENT, trainer_pool, trainer_tags
from assets.training_services import AssetTrainingServices
from ops.evaluation.cpu_clock import CpuClock
from ops.evaluation.plots import training_curves_chart
from resources.experiment import experiment_of, experiment_partitions
from resources.storage import ArtifactStore
from resources.validation_messages import validation_problems
from training.methods.checkpoint import Checkpoint
from training.methods.method import Method, MethodRun
from training.methods.registry import METHODS, priority_of
from training.trainers.settings import Preset, TrainSettings

GROUP = "learning"
RESOURCES = {"policy", "simulator", "storage", "artifact_store", "llm"}


class TrainerAssetConfig(dg.Config):
    """The fields every training asset takes; a method's own options are added beside them."""

    SETTINGS: ClassVar[type[TrainSettings]] = TrainSettings

    enabled: bool = Field(default=True, description=(
        "Train this method in this run; false passes the base on, and the benchmark and the printed tables "
        "leave the method out."))
    preset: Preset = Field(default="cpu_tiny", description=(
        "'cpu_tiny': the embedded CPU preset for the tiny model; 'paper': the settings class's own defaults, the "
        "papers' full-size GPU settings (MobileForge table 13, MobileRL table 5)."))
    overrides: dict[str, Any] = Field(default_factory=dict, description=(
        "Fields of the method's trainer settings to override, e.g. {'max_steps': 100, 'learning_rate': 1e-4}, "
        "{'lora': {}}; checked before any work."))

    @model_validator(mode="after")
    def _overrides_fit(self) -> "TrainerAssetConfig":
        if self.overrides:
            try:
                self.SETTINGS.preset(self.preset, self.overrides)
            except ValidationError as error:
                raise ValueError("; ".join(validation_problems(error, "overrides"))) from None
        return self


def trained_checkpoint(context: dg.AssetExecutionContext, report: Any, artifact_store: ArtifactStore,
                       method: str, base: Checkpoint, clock: CpuClock, extra: dict | None = None) -> Checkpoint:
    """Store a trained checkpoint directory and describe it (URI, version, curves, TensorBoard, the
    CPU and wall seconds since `clock` started: the asset's cost) for the UI."""
    uri = artifact_store.put_dir(report.checkpoint, f"{experiment_of(context)}/{method}/{context.run_id}")
    last = {k: v[-1][1] for k, v in report.curves.items() if v}
    checkpoint = base.trained_from(method, f"{method}:{experiment_of(context)}:{context.run_id[:8]}", uri,
                                   report.steps, last)
    tensorboard = {"tensorboard": f"{uri}/{report.tensorboard_dir.relative_to(report.checkpoint)}"} \
        if report.tensorboard_dir else {}
    context.add_output_metadata(tidy({
        "weights": uri, "version": checkpoint.version, "base": base.version, "steps": report.steps,
        "train_seconds": report.runtime_s, **clock.figures(), "samples": report.samples,
        "dropped_samples": dg.MetadataValue.json(report.dropped),
        "final_metrics": dg.MetadataValue.json(last),
        **({"curves": chart_md(training_curves_chart(report.curves, method))} if last else {}),
        **tensorboard,
        **(extra or {}),
    }))
    return checkpoint


def unchanged_checkpoint(context: dg.AssetExecutionContext, method: str, base: Checkpoint, reason: str,
                         clock: CpuClock, extra: dict | None = None, *, disabled: bool = False) -> Checkpoint:
    """The method had no training signal, or was switched off (`disabled`): its result is the input
    policy, said so loudly (with what finding that out cost since `clock` started)."""
    if disabled:
        context.log.info(f"{method}: {reason}; the checkpoint is the input policy {base.version}")
    else:
        context.log.warning(f"{method}: no training data ({reason}); the checkpoint is the unchanged input policy "
                            f"{base.version}")
    context.add_output_metadata(tidy({"weights": base.uri or "", "version": base.version, "trained": False,
                                      "disabled": disabled, "reason": reason, **clock.figures(), **(extra or {})}))
    return base.unchanged(method, reason, disabled=disabled)


def priority_tags(asset: str) -> dict[str, str]:
    """The op tags that give an asset of the training stage its Dagster priority (`priority_of`): the stage
    runs two steps at a time, and when more are ready it starts the longest chain first and the asset checks
    (priority 0) last (measured: with only two chains tagged, the checks took the slots GRSD's chain needed)."""
    return {"dagster/priority": str(priority_of(asset))}


def asset_config_class(method: Method) -> type[TrainerAssetConfig]:
    """`TrainerAssetConfig` with the method's default `enabled` and its options as fields of their own."""
    options = {name: (field.annotation, copy.copy(field)) for name, field in method.options.model_fields.items()}
    enabled = copy.copy(TrainerAssetConfig.model_fields["enabled"])
    enabled.default = method.enabled
    config_class = create_model(f"{method.title.replace(' ', '').replace('-', '')}AssetConfig",
                                __base__=TrainerAssetConfig, enabled=(bool, enabled), **options)
    config_class.SETTINGS = method.settings
    return config_class


def asset_in(asset: str) -> dg.AssetIn:
    """An input read as what its asset holds: a `Checkpoint` for a policy-valued asset (`base_policy` and every
    `<method>_checkpoint`, as `training.methods.checkpoint` names them), else a table."""
    policy_valued = asset == "base_policy" or asset.endswith("_checkpoint")
    return dg.AssetIn(asset, dagster_type=Checkpoint if policy_valued else pl.DataFrame)


def method_asset(method: Method) -> dg.AssetsDefinition:
    """The Dagster asset that trains `method` and stores its checkpoint, on the GPUs its placement
    requests (resources.deployment), under `accelerate launch` when it asks for several processes."""
    config_class = asset_config_class(method)
    placement = DEPLOYMENT.method(method.name)

    @dg.asset(name=method.asset, partitions_def=experiment_partitions, group_name=GROUP,
              code_version=f"{method.name}-{method.code_version}",
              op_tags={"dagster/priority": str(method.priority), **trainer_tags(placement, DEPLOYMENT)},
              pool=trainer_pool(placement),
              ins={name: asset_in(name) for name in method.reads}, required_resource_keys=RESOURCES,
              description=f"One checkpoint (not a table), {method.source}: {method.summary}")
    def checkpoint(context: dg.AssetExecutionContext, config: config_class, **inputs: Any) -> Checkpoint:
        clock = CpuClock()
        if not config.enabled:
            return unchanged_checkpoint(context, method.name, inputs["base_policy"], "switched off (enabled=false)",
                                        clock, disabled=True)
        options = method.options(**{name: getattr(config, name) for name in method.options.model_fields})
        with tempfile.TemporaryDirectory() as tmp:
            services = AssetTrainingServices(context, Path(tmp), method.name, placement)
            result = method.train(MethodRun(inputs, config.preset, config.overrides, options, services, method.settings))
            extra = {name: value if isinstance(value, (str, int, float)) else dg.MetadataValue.json(value)
                     for name, value in result.details.items()}
            if result.report is None:
                curves = {"curves": chart_md(training_curves_chart(result.curves, method.name))} \
                    if any(result.curves.values()) else {}
                return unchanged_checkpoint(context, method.name, result.start, result.reason, clock,
                                            {**curves, **extra})
            return trained_checkpoint(context, result.report, context.resources.artifact_store, method.name,
                                      result.start, clock, extra)

    return checkpoint


CHECKPOINT_ASSETS: dict[str, dg.AssetsDefinition] = {method.name: method_asset(method) for method in METHODS}
METHOD_ASSETS = list(CHECKPOINT_ASSETS.values())
