"""adagrpo_checkpoint materialized by Dagster on a tiny budget: the bundled base rolls out real
episodes; the reward is scripted (by attempt) so every group has a signal and the update path,
the stored checkpoint, the curves and the failure history are exercised. Also: a base without a
signal is passed on unchanged, said so."""

import json

import dagster as dg
import polars as pl
import pytest
from safetensors.torch import load_file

from assets.base_policy import base_policy
from assets.online_rl import HISTORY_FILE, adagrpo_checkpoint
from ops.curriculum.model import CurriculumTask
from phonesim.tasks import instantiate
from pipelines.resources import resources_for
from resources.experiment import experiment_partitions, register_experiment

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


def _materialize(tmp_path, monkeypatch, overrides, experiment="rl"):
    monkeypatch.setenv("MOBILEFORGE_STORAGE_ROOT", str(tmp_path / "storage"))
    instance = dg.DagsterInstance.ephemeral()
    register_experiment(instance, experiment)
    result = dg.materialize([base_policy, stub_curriculum, adagrpo_checkpoint], instance=instance,
                            resources=resources_for("local"), partition_key=experiment,
                            run_config={"ops": {"adagrpo_checkpoint": {"config": {"overrides": overrides}}}})
    [event] = [e for e in result.get_asset_materialization_events() if e.asset_key == dg.AssetKey("adagrpo_checkpoint")]
    return result.output_for_node("base_policy"), result.output_for_node("adagrpo_checkpoint"), \
        event.materialization.metadata


def test_the_asset_trains_stores_and_keeps_the_failure_history(tmp_path, monkeypatch):
    import training.trainers.adagrpo as trainer

    # attempt 1 of each group "succeeds" by reward: every group has variance, so every epoch updates
    monkeypatch.setattr(trainer, "episode_reward", lambda record, start, shaped: float(record.attempt == 1))
    base, trained, metadata = _materialize(tmp_path, monkeypatch, TINY)
    assert trained.method == "adagrpo" and trained.trained and trained.base == base.version
    assert trained.steps >= 2 and trained.uri != base.uri
    resources = resources_for("local")
    before = load_file(str(resources["artifact_store"].local_path(base.uri) / "model.safetensors"))
    after = load_file(str(resources["artifact_store"].local_path(trained.uri) / "model.safetensors"))
    assert any((before[k] - after[k]).abs().max() > 0 for k in before)
    assert metadata["episodes"].value == 2 * 2 * 2 and metadata["pool"].value == len(TEMPLATES)
    assert "curves" in metadata  # reward, success, episode length, buffer and pool size per epoch
    manifest = json.loads((resources["artifact_store"].local_path(trained.uri) / "manifest.json").read_text())
    assert {"reward", "success", "episode_length", "buffer_size", "pool_size"} <= set(manifest["curves"])
    assert len(manifest["curves"]["pool_size"]) == 2
    history = json.loads((tmp_path / "storage" / "rl" / HISTORY_FILE).read_text())
    assert history["epochs_seen"] == 2 and set(history["tasks"]) <= set(TEMPLATES)


def test_without_reward_variance_the_base_is_passed_on_unchanged(tmp_path, monkeypatch):
    import training.trainers.adagrpo as trainer

    monkeypatch.setattr(trainer, "episode_reward", lambda record, start, shaped: 0.0)
    base, result, metadata = _materialize(tmp_path, monkeypatch, {**TINY, "epochs": 3}, experiment="flat")
    assert not result.trained and result.uri == base.uri and "reward variance" in result.reason
    # all-zero groups: FCF counted them, and the history was stored for the next run
    history = json.loads((tmp_path / "storage" / "flat" / HISTORY_FILE).read_text())
    assert history["epochs_seen"] == 3
    assert any(t["failed_epochs"] >= 1 for t in history["tasks"].values())
