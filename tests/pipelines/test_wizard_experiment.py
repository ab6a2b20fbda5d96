"""The `wizard` experiment (MobileWizard's structured reasoning) materialized by Dagster on a small
graph: its named settings reach the policy and the trainer, the bundled tiny base runs every asset in
the structured style with its invalid outputs counted, and structured steps are annotated by the
critic's annotator and trained on with the format and reasoning rewards."""

import json

import dagster as dg
import polars as pl
import pytest

from assets.base_policy import base_policy
from assets.learning import step_datasets
from assets.methods import CHECKPOINT_ASSETS
from assets.rollouts import rollouts
from ops.data.attempt_store import collect_tables
from ops.judging.critic.programmatic import ProgrammaticCritic
from ops.curriculum import task_specs
from ops.judging.reward_columns import ANNOTATION_COLUMNS
from ops.rollout.engine import RolloutConfig, run_rollouts
from ops.data.schemas import empty
from pipelines.checks import schema_check
from pipelines.run.config_check import resource_run_config
from pipelines.start_point import ConfigError
from pipelines.resources import resources_for
from resources.environment import SimulatorResource
from resources.experiment import experiment_partitions, register_experiment
from resources.experiment_names import ablation_overrides, ablation_resources
from resources.storage import StorageLocation
from tests.support.curriculum import template_task_rows
from tests.support.scripted_policy import StructuredClickPolicy

hifpo_checkpoint = CHECKPOINT_ASSETS["hifpo"]

TEMPLATES = ("settings.connect_wifi", "contacts.favorite", "settings.airplane_on")
# HiFPO on small sizes: two rounds of one step, alignment after one evaluation without improvement
SMALL_HIFPO = {"max_steps": 2, "max_completion_length": 64,
               "history_alignment": {"rounds": 2, "stall_patience": 1, "temperatures": [1.0]}}


@dg.asset(partitions_def=experiment_partitions, name="curriculum_tasks")
def stub_curriculum() -> pl.DataFrame:
    """Template tasks, as the curriculum mines them."""
    return pl.DataFrame(template_task_rows(TEMPLATES))


@dg.asset(partitions_def=experiment_partitions, name="remedial_trajectories")
def no_remedial() -> pl.DataFrame:
    """No remedial trajectories (corrective teaching runs in test_remedial_asset.py): HiFPO says it skipped them."""
    return empty("training_samples")


@dg.multi_asset(outs={"rollout_attempts": dg.AssetOut(), "rollout_steps": dg.AssetOut(),
                      "critic_feedback": dg.AssetOut()}, partitions_def=experiment_partitions)
def structured_rollouts(context: dg.AssetExecutionContext, curriculum_tasks: pl.DataFrame,
                        simulator: SimulatorResource, storage: StorageLocation):
    """Structured-reasoning random clicks (a stand-in for a model that learned the format), two
    hint-guided attempts per task, judged by the programmatic critic."""
    tasks = task_specs(curriculum_tasks, True, None)
    store = storage.attempt_store(context.partition_key)
    run_rollouts(tasks, simulator.make_env, StructuredClickPolicy(seed=4, stop_prob=0.05, invalid_every=5),
                 ProgrammaticCritic(simulator.world_seed), store, RolloutConfig(attempts=2))
    return collect_tables(store, "structured", tasks)


def _wizard_run_config(resources: dict, ops: dict) -> dict:
    """The run config `mobileforge run --experiment wizard` gives a stage, with `ops` on top."""
    ablation = ablation_overrides("wizard")
    trainer = {**ablation["hifpo_checkpoint"]["overrides"], **ops.pop("hifpo_checkpoint", {})}
    return {"resources": resource_run_config(dg.Definitions(resources=resources), ablation_resources("wizard")),
            "ops": {name: {"config": fields} for name, fields in
                    {"hifpo_checkpoint": {**ablation["hifpo_checkpoint"], "overrides": trainer}, **ops}.items()}}


def _materialize(tmp_path, monkeypatch, experiment: str, assets: list, ops: dict) -> dg.ExecuteInProcessResult:
    monkeypatch.setenv("MOBILEFORGE_STORAGE_ROOT", str(tmp_path / "storage"))
    instance = dg.DagsterInstance.ephemeral()
    register_experiment(instance, experiment)
    # quarter-size screens: the structured style shows the tiny base the screenshot (~4 s a step on a busy CPU
    # at the profile's 540x1200)
    resources = {**resources_for("local"), "simulator": SimulatorResource(screen_width=270, screen_height=600)}
    checks = [schema_check("rollout_steps", "steps", experiment_partitions), schema_check(step_datasets,
                                                                                        "training_samples")]
    return dg.materialize([*assets, *checks], instance=instance, resources=resources, partition_key=experiment,
                          run_config=_wizard_run_config(resources, ops))


def _metadata(result: dg.ExecuteInProcessResult, key: str) -> dict:
    [event] = [e for e in result.get_asset_materialization_events() if e.asset_key == dg.AssetKey(key)]
    return event.materialization.metadata


def test_the_named_settings_reach_the_policy_and_keep_the_configured_ones():
    resources = resources_for("local")
    section = resource_run_config(dg.Definitions(resources=resources), ablation_resources("wizard"))
    policy = section["policy"]["config"]
    assert (policy["prompt_style"], policy["max_new_tokens"]) == ("mobilewizard", 256)
    assert policy["batch_size"] == resources["policy"].batch_size == 32  # the profile's value, not the class default
    rewards = ablation_overrides("wizard")["hifpo_checkpoint"]["overrides"]["reward_options"]
    assert rewards == {"structure_weight": 0.2, "reasoning_weight": 0.2}
    assert ablation_overrides("wizard")["hifpo_checkpoint"]["overrides"]["history_alignment"] == {}  # its defaults
    with pytest.raises(ConfigError, match="policy.prompt_style"):
        resource_run_config(dg.Definitions(resources=resources), {"policy": {"prompt_style": "free-form"}})
    with pytest.raises(ConfigError, match="policy.style: PolicyResource has no such field"):
        resource_run_config(dg.Definitions(resources=resources), {"policy": {"style": "mobilewizard"}})
    with pytest.raises(ConfigError, match="critic: no configurable resource"):
        resource_run_config(dg.Definitions(resources=resources), {"critic": {"model": "x"}})


@pytest.mark.timeout(1200)  # the tiny base reads a screenshot per step in this style: slow on a loaded machine
def test_the_tiny_base_runs_every_asset_in_the_structured_style_and_its_invalid_outputs_are_counted(
        tmp_path, monkeypatch):
    result = _materialize(tmp_path, monkeypatch, "wizard", [stub_curriculum, base_policy, rollouts, step_datasets,
                                                            no_remedial, hifpo_checkpoint],
                          {"rollouts": {"attempts": 1, "max_tasks": 1}, "hifpo_checkpoint": SMALL_HIFPO})
    assert result.success and all(c.passed for c in result.get_asset_check_evaluations())
    base = result.output_for_node("base_policy")
    assert base.prompt_style.value == "mobilewizard" and base.version.endswith("+mobilewizard")
    steps = result.output_for_node("rollouts", "rollout_steps")
    assert steps["prompt"].str.contains("Memory of earlier steps").all()
    meta = _metadata(result, "rollout_steps")
    invalid = steps["parse_error"].drop_nulls()
    assert sum(meta["invalid_outputs_by_reason"].value.values()) == invalid.len()
    assert _metadata(result, "rollout_attempts")["invalid_actions"].value == invalid.len()
    print(f"tiny base, structured style: {invalid.len()} invalid of {steps.height} steps; "
          f"{json.dumps(meta['invalid_outputs_by_reason'].value)}")
    samples = result.output_for_node("step_datasets")
    assert samples.height == 0 or samples.select(pl.col(ANNOTATION_COLUMNS[0]).is_not_null().all()).item()


def test_structured_steps_are_annotated_and_hifpo_trains_with_both_rewards(tmp_path, monkeypatch):
    result = _materialize(tmp_path, monkeypatch, "wizard-annotated",
                          [stub_curriculum, structured_rollouts, base_policy, step_datasets, no_remedial,
                           hifpo_checkpoint],
                          # random clicks rarely move closer to a goal: every parsed step of the best attempts
                          {"step_datasets": {"reasonable_only": False}, "hifpo_checkpoint": SMALL_HIFPO})
    assert result.success and all(c.passed for c in result.get_asset_check_evaluations())
    samples = result.output_for_node("step_datasets")
    assert samples.height > 0
    assert samples.select(pl.all_horizontal(pl.col(ANNOTATION_COLUMNS).is_not_null())).to_series().all()
    meta = _metadata(result, "step_datasets")
    distinct = samples.select("task_id", "attempt", "step").unique().height
    assert meta["reasoning_annotator"].value == "programmatic" and meta["annotated_steps"].value == distinct
    first = samples.sort("task_id", "attempt", "step").row(0, named=True)
    assert first["target_planning"].endswith(".") and "toward the task:" in first["target_planning"]
    hifpo = _metadata(result, "hifpo_checkpoint")
    assert {"structure", "reasoning", "overall"} <= set(hifpo["final_metrics"].value)
    assert hifpo["dropped_samples"].value["no_reasoning_annotation"] == 0
    alignment = hifpo["history_alignment"].value
    print(f"history alignment in the wizard experiment: {json.dumps(alignment)}")
    assert alignment["rounds"] == 2 and len(alignment["validation_reward"]) == 3  # before round 1, after each
    assert alignment["steps_rewritten"] + alignment["labels_kept"] == alignment["steps_regenerated"]
    assert alignment["steps_regenerated"] > 0 or alignment["triggers"] == []
    assert hifpo["remedial_epoch"].value == {"skipped": "no remedial rows"}  # the ablation's remedial is on
