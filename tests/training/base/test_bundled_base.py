"""The bundled base policy: usable, current with the prompt format, refused when stale; and
the base_policy asset from both sources."""

from __future__ import annotations

import json
import shutil

import dagster as dg
import pytest

from assets.base_policy import base_policy
from ops.actions import Action
from ops.evaluation.benchmark import held_out_tasks
from ops.agent.episode import PolicyRequest
from ops.environments.simulator import SimEnvironment
from resources.experiment import register_experiment
from resources.policy import PolicyResource
from resources.storage import ArtifactStore, StorageLocation
from training.base.bundled import BUNDLED_DIR, PROVENANCE_FILE, BundledBaseError, format_fingerprint, load_bundled
from training.inference.local_policy import GenerationSettings, LocalPolicy


def test_bundled_base_is_current_and_documented():
    # Fails after any change to prompts, answers, hint wording or history lines: rebuild the base
    # with the command in the error (training/base/bundled.py).
    provenance, report = load_bundled()
    assert provenance["format_fingerprint"] == format_fingerprint()
    assert provenance["command"].startswith("mobileforge base pretrain")
    assert report["steps"] == provenance["config"]["max_steps"]  # step-budgeted, not time-budgeted
    assert report["click_accuracy"] > 2 * report["click_chance"]


def test_stale_or_incomplete_bundle_is_refused_with_the_rebuild_command(tmp_path):
    stale = shutil.copytree(BUNDLED_DIR, tmp_path / "stale")
    record = json.loads((stale / PROVENANCE_FILE).read_text())
    (stale / PROVENANCE_FILE).write_text(json.dumps({**record, "format_fingerprint": "0" * 16}))
    with pytest.raises(BundledBaseError, match="mobileforge base pretrain --out training/base/checkpoint"):
        load_bundled(stale)
    (stale / "model.safetensors").unlink()
    with pytest.raises(BundledBaseError, match="lacks \\['model.safetensors'\\]"):
        load_bundled(stale)


def test_bundled_base_acts_on_a_simulator_screen():
    spec, _ = held_out_tasks(1, max_templates=1)[0]
    observation = SimEnvironment(size=(540, 1200)).reset(spec)
    policy = LocalPolicy(BUNDLED_DIR, "elements", generation=GenerationSettings(max_new_tokens=48, temperature=0))
    [out] = policy.act_batch([PolicyRequest(observation, "Open the Clock app", [], [])])
    assert isinstance(policy.parse(out.raw_text, observation).action, Action), out.raw_text


@pytest.mark.parametrize("source", ["bundled", "pretrain"])
def test_base_policy_asset_stores_a_loadable_checkpoint(tmp_path, source):
    store = ArtifactStore(location=StorageLocation(root=str(tmp_path / "storage")))
    config = {"source": source, "max_steps": 3, "eval_samples": 4}
    instance = dg.DagsterInstance.ephemeral()
    register_experiment(instance, "x")
    result = dg.materialize([base_policy], resources={"artifact_store": store, "policy": PolicyResource()},
                            run_config={"ops": {"base_policy": {"config": config}}}, instance=instance,
                            partition_key="x")
    assert result.success
    value = result.output_for_node("base_policy")
    local = store.local_path(value.uri)
    assert (value.method, value.prompt_style.value) == ("base", "elements")
    assert (local / "model.safetensors").is_file() and (local / PROVENANCE_FILE).is_file()
    meta = result.asset_materializations_for_node("base_policy")[0].metadata
    assert meta["source"].value == source
    if source == "pretrain":
        assert meta["steps"].value == 3


def test_base_check_command_prints_the_provenance():
    from click.testing import CliRunner

    from mobileforge.cli.base import base

    result = CliRunner().invoke(base, ["check"])
    assert result.exit_code == 0, result.output
    shown = json.loads(result.output)
    assert shown["format_fingerprint"] == format_fingerprint() and shown["steps"] > 0


def test_base_pretrain_command_sizes_the_model_and_records_the_command(tmp_path):
    from click.testing import CliRunner

    from mobileforge.cli.base import base

    out = tmp_path / "small"
    result = CliRunner().invoke(base, ["pretrain", "--out", str(out), "--max-steps", "2", "--text-hidden", "32",
                                       "--layers", "1", "--no-prompt-loss"])
    assert result.exit_code == 0, result.output
    config = json.loads((out / "config.json").read_text())["text_config"]
    assert (config["hidden_size"], config["num_hidden_layers"]) == (32, 1)
    provenance, report = load_bundled(out)
    assert "--text-hidden 32 --layers 1" in provenance["command"] and report["steps"] == 2
    assert provenance["command"].endswith("--no-prompt-loss") and report["config"]["prompt_loss"] is False
    for flag, value, says in (("--layers", "0", "layers"), ("--text-hidden", "66", "heads of even size")):
        bad = CliRunner().invoke(base, ["pretrain", "--out", str(tmp_path / "bad"), flag, value])
        assert bad.exit_code == 2 and says in bad.output, bad.output  # a usage error, before any work
        assert not (tmp_path / "bad").exists()


def test_a_configured_checkpoint_is_the_base_read_in_place(tmp_path):
    """policy.checkpoint replaces the bundled base: no copy, known by its weights' digest."""
    from training.methods.checkpoint import weights_digest

    own = tmp_path / "own"
    shutil.copytree(BUNDLED_DIR, own)
    (own / "model.safetensors").write_bytes((own / "model.safetensors").read_bytes()[:-8] + b"\0" * 8)
    store = ArtifactStore(location=StorageLocation(root=str(tmp_path / "storage")))
    instance = dg.DagsterInstance.ephemeral()
    register_experiment(instance, "x")
    result = dg.materialize([base_policy], instance=instance, partition_key="x", resources={
        "artifact_store": store, "policy": PolicyResource(checkpoint=str(own))})
    value = result.output_for_node("base_policy")
    assert value.uri == f"file://{own.resolve()}" and store.local_path(value.uri) == own.resolve()
    assert value.version == f"base:{weights_digest(own)}" != f"base:{weights_digest(BUNDLED_DIR)}"
    assert not (tmp_path / "storage" / "_artifacts").exists()
