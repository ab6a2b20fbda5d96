"""The method registry is the one place a training method is declared: the training stage, the
benchmark's inputs, the priorities, the config schema and the training server's preload follow from it;
and MobileForge's SFT ablation (hint SFT, no-hint SFT), added through it, trains when switched on."""

from __future__ import annotations

import json

import dagster as dg
import polars as pl
import pytest

from assets.benchmark import BenchmarkConfig
from assets.methods import CHECKPOINT_ASSETS, TrainerAssetConfig
from ops.agent.policy_prompt import HINTS_FOOTER, HINTS_HEADER
from ops.samples.step_samples import with_hint_free_copies
from pipelines.definitions import FORKSERVER_PRELOAD, defs
from pipelines.resources import resources_for
from resources.experiment import experiment_partitions, register_experiment
from resources.stage_config import load_snapshot
from tests.training.samples import step_frame
from training.methods.checkpoint import Checkpoint
from training.methods.registry import METHODS, method_named, priority_of
from training.methods.step_sft.samples import as_rolled_out, hint_sft_samples, no_hint_sft_samples
from training.trainers.manifest import read_manifest


def test_every_method_is_an_asset_of_the_training_stage_reading_what_it_declares():
    training = defs.resolve_job_def("training")
    graph = defs.resolve_asset_graph()
    for method in METHODS:
        key = dg.AssetKey(method.asset)
        assert key in training.asset_layer.executable_asset_keys, method.name
        assert {k.to_user_string() for k in graph.get(key).parent_keys} == set(method.reads), method.name
        node = training.graph.node_named(method.asset)
        assert node.definition.tags["dagster/priority"] == str(method.priority)
    # data only methods read inherits the highest priority of its readers: longest chain first
    assert priority_of("remedial_trajectories") == method_named("rft").priority > priority_of("step_datasets")


def test_the_benchmark_reads_the_base_and_every_benchmarked_method():
    graph = defs.resolve_asset_graph()
    parents = {k.to_user_string() for k in graph.get(dg.AssetKey("benchmark_results")).parent_keys}
    assert parents == {"base_policy", *(m.asset for m in METHODS if m.benchmarked)}
    assert BenchmarkConfig(policies=["base", "no_hint_sft"]).policies == ["base", "no_hint_sft"]
    with pytest.raises(ValueError, match="sft9 not among"):
        BenchmarkConfig(policies=["base", "sft9"])


def test_each_method_config_is_the_shared_fields_plus_its_options_checked_against_its_settings():
    snapshot = load_snapshot()
    for method in METHODS:
        fields = CHECKPOINT_ASSETS[method.name].op.config_schema.config_type.fields
        assert set(fields) == {"enabled", "preset", "overrides", *method.options.model_fields}, method.name
        assert fields["enabled"].default_value is method.enabled
        assert set(snapshot[method.asset]["properties"]) == set(fields), "stale stage_config_schema.json"
    with pytest.raises(ValueError, match="overrides.epochs"):
        _config_class("adagrpo")(overrides={"epochs": "many"})
    assert _config_class("rft")(rounds=3).rounds == 3 and _config_class("rft").SETTINGS is method_named("rft").settings


def _config_class(name: str) -> type[TrainerAssetConfig]:
    compute = CHECKPOINT_ASSETS[name].op.compute_fn.decorated_fn
    return compute.__annotations__["config"]


def test_the_training_server_preloads_every_methods_trainer():
    for method in METHODS:
        assert set(method.preload) <= set(FORKSERVER_PRELOAD), method.name


def _hinted_prompt(task: str) -> str:
    text = f"Open {task}\n\n{HINTS_HEADER}\nnotes\n\n--- Hint from Attempt #1 ---\nSummary: tap it\n\n{HINTS_FOOTER}"
    return json.dumps([{"role": "user", "content": [{"type": "image"}, {"type": "text", "text": text}]}])


def _steps_with_copies() -> tuple[pl.DataFrame, pl.DataFrame]:
    """Step samples as step_datasets stores them by default: attempt 1 unhinted, attempt 2 hinted, plus the
    hint-free copies of attempt 2's steps."""
    rows = step_frame(4).with_columns(attempt=pl.Series([1, 1, 2, 2]), step=pl.Series([0, 1, 0, 1]),
                                      task_id=pl.lit("t"), has_hint=pl.Series([False, False, True, True]))
    rows = rows.with_columns(prompt=pl.when(pl.col("has_hint")).then(pl.lit(_hinted_prompt("t")))
                             .otherwise(pl.col("prompt")))
    attempts = pl.DataFrame({"task_id": ["t", "t"], "attempt": [1, 2], "hints_used": [[], [1]]})
    return with_hint_free_copies(rows, attempts), attempts


def test_hint_sft_trains_on_the_steps_as_rolled_out_and_no_hint_sft_on_their_hint_free_prompts():
    samples, attempts = _steps_with_copies()
    assert samples.height == 6
    rolled_out = as_rolled_out(samples)
    assert rolled_out.height == 4 and rolled_out["has_hint"].to_list() == [False, False, True, True]
    assert hint_sft_samples(samples).equals(rolled_out)
    no_hint = no_hint_sft_samples(samples, attempts)
    assert no_hint.height == 4 and not no_hint["has_hint"].any()
    assert not any(HINTS_HEADER in p for p in no_hint["prompt"])
    assert no_hint.select("task_id", "attempt", "step").equals(rolled_out.select("task_id", "attempt", "step"))


@pytest.fixture
def sft_ablation_run(tmp_path, monkeypatch, warm_base):
    """hint_sft and no_hint_sft materialized on a small step dataset, switched on, a few steps each."""
    samples, attempts = _steps_with_copies()
    monkeypatch.setenv("MOBILEFORGE_STORAGE_ROOT", str(tmp_path / "storage"))

    @dg.asset(partitions_def=experiment_partitions, name="step_datasets")
    def stub_steps() -> pl.DataFrame:
        return samples

    @dg.asset(partitions_def=experiment_partitions, name="rollout_attempts")
    def stub_attempts() -> pl.DataFrame:
        return attempts

    @dg.asset(name="base_policy")
    def stub_base() -> Checkpoint:
        return Checkpoint(version="warm", uri=f"file://{warm_base}", prompt_style="elements", method="base")

    def run(enabled: bool):
        instance = dg.DagsterInstance.ephemeral()
        register_experiment(instance, "sft")
        config = {"enabled": enabled, "overrides": {"max_steps": 2, "num_train_epochs": 1}}
        return dg.materialize(
            [stub_steps, stub_attempts, stub_base, CHECKPOINT_ASSETS["hint_sft"], CHECKPOINT_ASSETS["no_hint_sft"]],
            instance=instance, resources=resources_for("local"), partition_key="sft",
            run_config={"ops": {"hint_sft_checkpoint": {"config": config},
                                "no_hint_sft_checkpoint": {"config": config}}})
    return run


def test_the_sft_ablation_is_off_by_default_and_trains_when_switched_on(sft_ablation_run):
    off = sft_ablation_run(False)
    for name in ("hint_sft", "no_hint_sft"):
        checkpoint = off.output_for_node(f"{name}_checkpoint")
        assert checkpoint.disabled and not checkpoint.trained and checkpoint.version == "warm"
    on = sft_ablation_run(True)
    for name in ("hint_sft", "no_hint_sft"):
        checkpoint = on.output_for_node(f"{name}_checkpoint")
        assert checkpoint.trained and not checkpoint.disabled and checkpoint.method == name and checkpoint.steps == 2
        assert read_manifest(resources_for("local")["artifact_store"].local_path(checkpoint.uri)).method == name
