"""adagrpo_checkpoint materialized by Dagster on a tiny budget: the start checkpoint rolls out real
episodes; the reward is scripted (by attempt) so every group has a signal and the update path,
the stored checkpoint, the curves and the failure history are exercised. It starts from the RFT
checkpoint (MobileRL §2.1's order), here a copy of the bundled base with nudged weights, or with
start_from=base from the base. Also: without a signal the start is passed on unchanged, said so."""

import json
import shutil
import tempfile

from pathlib import Path

import dagster as dg
import polars as pl
import pytest
from safetensors.torch import load_file, save_file

from assets.base_policy import base_policy
from assets.methods import CHECKPOINT_ASSETS
from assets.training_services import STATE_DIR
from training.methods.adagrpo.method import HISTORY
from training.methods.checkpoint import Checkpoint
from ops.curriculum.model import CurriculumTask
from phonesim.tasks import instantiate
from pipelines.resources import resources_for
from resources.experiment import experiment_partitions, register_experiment
from resources.policy import PolicyResource
from resources.storage import ARTIFACT_MARKER, ArtifactStore
from training.trainers.manifest import read_manifest

adagrpo_checkpoint = CHECKPOINT_ASSETS["adagrpo"]

TEMPLATES = ("contacts.favorite", "notes.create", "sms.send")
TINY = {"epochs": 2, "tasks_per_epoch": 2, "group_size": 2, "per_device_train_batch_size": 8}


@dg.asset(partitions_def=experiment_partitions, name="curriculum_tasks")
def stub_curriculum() -> pl.DataFrame:
    """Three train-split template tasks, as the curriculum mines them (plus held-out ones that must be ignored)."""
    rows = []
    for tid in (*TEMPLATES, "notes.query_count", "todo.delete"):
        inst = instantiate(tid, 0)
        rows.append(CurriculumTask(task_id=inst.id, app=inst.apps[0], instruction=inst.instruction,
                                   step_budget=inst.step_budget, core_functionality=tid, variation_type="parameter_change",
                                   prerequisites=None, source_trace_id="t", verifiable=True, template_id=tid,
                                   template_seed=0, template_params=dict(inst.params)).to_row())
    return pl.DataFrame(rows)


@dg.asset(partitions_def=experiment_partitions, name="rft_checkpoint")
def nudged_rft(base_policy: Checkpoint, artifact_store: ArtifactStore) -> Checkpoint:
    """An RFT-like checkpoint: the base's weights, each float tensor shifted a little, stored anew."""
    with tempfile.TemporaryDirectory() as tmp:
        weights = Path(tmp) / "rft"
        shutil.copytree(artifact_store.local_path(base_policy.uri), weights,
                        ignore=shutil.ignore_patterns(ARTIFACT_MARKER))  # put_dir writes its own
        tensors = load_file(str(weights / "model.safetensors"))
        save_file({k: v + 1e-3 if v.is_floating_point() else v for k, v in tensors.items()},
                  str(weights / "model.safetensors"), metadata={"format": "pt"})
        return base_policy.trained_from("rft", "rft:nudged", artifact_store.put_dir(weights, "rl/rft/nudged"), 1)


@dg.asset(partitions_def=experiment_partitions, name="rft_checkpoint")
def unchanged_rft(base_policy: Checkpoint) -> Checkpoint:
    """RFT without a verified success: the base passed on."""
    return base_policy.unchanged("rft", "no verified-successful attempt to learn from")


def _materialize(tmp_path, monkeypatch, overrides, experiment="rl", rft=nudged_rft, start_from="rft"):
    """Materializes the asset; returns base, RFT and AdaGRPO checkpoints, its metadata and the
    checkpoints each epoch acted with, in order."""
    monkeypatch.setenv("MOBILEFORGE_STORAGE_ROOT", str(tmp_path / "storage"))
    acted: list[Checkpoint] = []
    acting_policy = PolicyResource.acting_policy

    def spy(self, checkpoint, *args, **kwargs):
        acted.append(checkpoint)
        return acting_policy(self, checkpoint, *args, **kwargs)

    monkeypatch.setattr(PolicyResource, "acting_policy", spy)
    instance = dg.DagsterInstance.ephemeral()
    register_experiment(instance, experiment)
    config = {"overrides": overrides, "start_from": start_from}
    result = dg.materialize([base_policy, rft, stub_curriculum, adagrpo_checkpoint], instance=instance,
                            resources=resources_for("local"), partition_key=experiment,
                            run_config={"ops": {"adagrpo_checkpoint": {"config": config}}})
    [event] = [e for e in result.get_asset_materialization_events() if e.asset_key == dg.AssetKey("adagrpo_checkpoint")]
    return result.output_for_node("base_policy"), result.output_for_node("rft_checkpoint"), \
        result.output_for_node("adagrpo_checkpoint"), event.materialization.metadata, acted


def _weights(checkpoint: Checkpoint) -> dict:
    return load_file(str(resources_for("local")["artifact_store"].local_path(checkpoint.uri) / "model.safetensors"))


def _differ(a: dict, b: dict) -> bool:
    return any((a[k] - b[k]).abs().max() > 0 for k in a)


def test_the_asset_trains_from_rft_stores_and_keeps_the_failure_history(tmp_path, monkeypatch):
    import training.methods.adagrpo.trainer as trainer

    # attempt 1 of each group "succeeds" by reward: every group has variance, so every epoch updates
    monkeypatch.setattr(trainer, "episode_reward", lambda record, shaped: float(record.attempt == 1))
    base, rft, trained, metadata, acted = _materialize(tmp_path, monkeypatch, TINY)
    assert _differ(_weights(base), _weights(rft))  # the start is not the base in disguise
    # epoch 1 acts with the RFT checkpoint, epoch 2 with weights trained from it
    assert acted[0] == rft and acted[1].base == rft.version and acted[1].uri.startswith("file://")
    assert trained.method == "adagrpo" and trained.trained and trained.base == rft.version
    assert trained.steps >= 2 and trained.uri not in (base.uri, rft.uri)
    resources = resources_for("local")
    parent = read_manifest(resources["artifact_store"].local_path(trained.uri)).base_checkpoint
    assert Path(parent).resolve() == resources["artifact_store"].local_path(rft.uri).resolve()
    assert _differ(_weights(rft), _weights(trained))
    assert metadata["ablation"].value["start_from"] == "rft" and metadata["base"].value == rft.version
    assert "RFT checkpoint rft:nudged" in metadata["start_checkpoint"].value
    assert metadata["episodes"].value == 2 * 2 * 2 and metadata["pool"].value == len(TEMPLATES)
    assert "curves" in metadata  # reward, success, episode length, buffer and pool size per epoch
    # what the asset cost: its episodes and updates, more than the trainer's own update seconds
    assert metadata["cpu_seconds"].value > 0 and metadata["wall_seconds"].value >= metadata["update_seconds"].value
    manifest = json.loads((resources["artifact_store"].local_path(trained.uri) / "manifest.json").read_text())
    assert {"reward", "success", "episode_length", "buffer_size", "pool_size"} <= set(manifest["curves"])
    assert len(manifest["curves"]["pool_size"]) == 2
    history = json.loads((tmp_path / "storage" / "rl" / f"{STATE_DIR}/{HISTORY}").read_text())
    assert history["epochs_seen"] == 2 and set(history["tasks"]) <= set(TEMPLATES)


def test_start_from_base_trains_the_base_whatever_rft_holds(tmp_path, monkeypatch):
    import training.methods.adagrpo.trainer as trainer

    monkeypatch.setattr(trainer, "episode_reward", lambda record, shaped: float(record.attempt == 1))
    base, rft, trained, metadata, acted = _materialize(tmp_path, monkeypatch, {**TINY, "epochs": 1},
                                                       experiment="frombase", start_from="base")
    assert acted == [base] and rft.trained
    assert trained.trained and trained.base == base.version
    parent = read_manifest(resources_for("local")["artifact_store"].local_path(trained.uri)).base_checkpoint
    assert Path(parent).resolve() == resources_for("local")["artifact_store"].local_path(base.uri).resolve()
    assert metadata["ablation"].value["start_from"] == "base"


def test_without_reward_variance_the_start_is_passed_on_unchanged(tmp_path, monkeypatch):
    import training.methods.adagrpo.trainer as trainer

    monkeypatch.setattr(trainer, "episode_reward", lambda record, shaped: 0.0)
    # RFT left the base unchanged: starting from it is starting from the base, said so
    base, rft, result, metadata, acted = _materialize(tmp_path, monkeypatch, {**TINY, "epochs": 3},
                                                      experiment="flat", rft=unchanged_rft)
    assert not rft.trained and acted[0] == base
    assert "RFT left it unchanged (no verified-successful attempt" in metadata["start_checkpoint"].value
    assert not result.trained and result.uri == base.uri and "reward variance" in result.reason
    assert result.base == base.version and metadata["cpu_seconds"].value > 0  # the episodes it ran to find out
    # all-zero groups: FCF counted them, and the history was stored for the next run
    history = json.loads((tmp_path / "storage" / "flat" / f"{STATE_DIR}/{HISTORY}").read_text())
    assert history["epochs_seen"] == 3
    assert any(t["failed_epochs"] >= 1 for t in history["tasks"].values())
