"""A trainer asset run under `accelerate launch --cpu` with 2 processes (gloo), as a GPU step runs
under its accelerate config: the same typed checkpoint as the single-process path, trained by two
processes."""

import dagster as dg
import polars as pl
import pytest

import assets.methods
from pipelines.resources import resources_for
from resources.deployment import Deployment, MethodPlacement
from resources.experiment import experiment_partitions, register_experiment
from tests.training.samples import step_frame
from training.base.bundled import BUNDLED_DIR
from training.methods.checkpoint import Checkpoint
from training.methods.launched import Launch, launch_command
from training.methods.registry import method_named
from training.trainers.manifest import read_manifest

METHOD = "hint_sft"


@dg.asset(partitions_def=experiment_partitions, name="step_datasets")
def stub_steps() -> pl.DataFrame:
    return step_frame(8).with_columns(task_id=pl.lit("t"), attempt=pl.lit(1), has_hint=pl.lit(False))


@dg.asset(partitions_def=experiment_partitions, name="rollout_attempts")
def stub_attempts() -> pl.DataFrame:
    return pl.DataFrame({"task_id": ["t"], "attempt": [1], "hints_used": [[]]})


@dg.asset(name="base_policy")
def stub_base() -> Checkpoint:
    return Checkpoint(version="bundled", uri=f"file://{BUNDLED_DIR}", prompt_style="elements", method="base")


def _train(monkeypatch, tmp_path, placement: MethodPlacement) -> tuple[Checkpoint, object]:
    monkeypatch.setattr(assets.methods, "DEPLOYMENT", Deployment(methods={METHOD: placement}))
    trainer = assets.methods.method_asset(method_named(METHOD))
    instance = dg.DagsterInstance.ephemeral()
    register_experiment(instance, "launch")
    config = {"enabled": True, "overrides": {"max_steps": 2, "num_train_epochs": 1, "per_device_train_batch_size": 2}}
    result = dg.materialize([stub_steps, stub_attempts, stub_base, trainer], instance=instance,
                            resources=resources_for("local"), partition_key="launch",
                            run_config={"ops": {f"{METHOD}_checkpoint": {"config": config}}})
    checkpoint = result.output_for_node(f"{METHOD}_checkpoint")
    weights = resources_for("local")["artifact_store"].local_path(checkpoint.uri)
    assert (weights / "model.safetensors").is_file() and (weights / "config.json").is_file()
    return checkpoint, read_manifest(weights)


def test_a_trainer_asset_under_accelerate_launch_with_two_cpu_processes_stores_the_same_checkpoint(
        monkeypatch, tmp_path):
    monkeypatch.setenv("MOBILEFORGE_STORAGE_ROOT", str(tmp_path / "storage"))
    single, single_manifest = _train(monkeypatch, tmp_path, MethodPlacement())
    launched, launched_manifest = _train(monkeypatch, tmp_path, MethodPlacement(processes=2))
    assert type(launched) is type(single) is Checkpoint
    for checkpoint in (single, launched):
        assert checkpoint.trained and checkpoint.method == METHOD and checkpoint.steps == 2
    assert (single_manifest.metrics["processes"], launched_manifest.metrics["processes"]) == (1, 2)
    assert launched_manifest.method == single_manifest.method == METHOD
    assert launched_manifest.dataset["fingerprint"] == single_manifest.dataset["fingerprint"]
    assert launched_manifest.config == single_manifest.config


def test_a_gpu_launch_uses_the_shipped_accelerate_config_with_one_process_per_gpu(tmp_path):
    placement = MethodPlacement(gpus=8, accelerate_config="zero3")
    launch = Launch(placement.process_count, placement.accelerate_file())
    command = launch_command(launch, "hifpo", "hifpo", tmp_path / "c.json", tmp_path / "b", tmp_path / "d",
                             tmp_path / "o", tmp_path / "r.json")
    flags = command[command.index("accelerate.commands.launch") + 1:command.index("-m", 3)]
    assert flags[:4] == ["--config_file", str(placement.accelerate_file()), "--num_processes", "8"]
    assert placement.accelerate_file().name == "zero3.yaml" and placement.accelerate_file().is_file()
    assert MethodPlacement(gpus=1).accelerate_file().name == "single_gpu.yaml"
    assert MethodPlacement(gpus=4).accelerate_file().name == "fsdp.yaml"
    assert not MethodPlacement().launched and MethodPlacement(gpus=1).launched
    with pytest.raises(ValueError):
        MethodPlacement(gpus=-1)
