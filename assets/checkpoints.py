"""What every training asset does with its result: store a trained checkpoint and describe it, or
pass the base on unchanged (said loudly), and report progress while training."""

import importlib
from typing import Any

import dagster as dg
from pydantic import ValidationError

from assets.metadata import chart_md, tidy
from training.methods.checkpoint import Checkpoint, Method
from ops.evaluation.cpu_clock import CpuClock
from ops.evaluation.plots import training_curves_chart
from resources.experiment import experiment_of
from resources.storage import ArtifactStore
from resources.validation_messages import validation_problems

NO_WEIGHTS = "the base has no weights to train from: set policy.checkpoint to the weights the endpoint serves"


def trained_checkpoint(context: dg.AssetExecutionContext, report: Any, artifact_store: ArtifactStore,
                       method: Method, base: Checkpoint, clock: CpuClock, extra: dict | None = None) -> Checkpoint:
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


def training_progress(context: dg.AssetExecutionContext, method: Method):
    """Where a trainer reports step/total, loss and reward while it trains: the run's log."""
    return lambda progress: context.log.info(f"{method} training: {progress}")


def unchanged_checkpoint(context: dg.AssetExecutionContext, method: Method, base: Checkpoint, reason: str,
                         clock: CpuClock, extra: dict | None = None) -> Checkpoint:
    """The method had no training signal: its result is the input policy, said so loudly (with what
    finding that out cost since `clock` started)."""
    context.log.warning(f"{method}: no training data ({reason}); the checkpoint is the unchanged input policy "
                        f"{base.version}")
    context.add_output_metadata(tidy({"weights": base.uri or "", "version": base.version, "trained": False,
                                      "reason": reason, **clock.figures(), **(extra or {})}))
    return base.unchanged(method, reason)


def trainer_settings(settings: str, preset: str, overrides: dict[str, Any]) -> Any:
    """The trainer settings class `settings` ("module:Class" under training/, imported here so that
    loading the graph does not import torch): its CPU preset (`cpu_tiny`) or its own defaults, under
    `overrides`. A bad override raises ValueError naming `overrides.<field>`."""
    module, name = settings.split(":")
    cls = getattr(importlib.import_module(module), name)
    try:
        return cls.cpu_tiny(**overrides) if preset == "cpu_tiny" else cls(**overrides)
    except ValidationError as error:
        raise ValueError("; ".join(validation_problems(error, "overrides"))) from None
