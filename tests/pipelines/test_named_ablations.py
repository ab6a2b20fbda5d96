"""`mobileforge run --experiment NAME` applies a named ablation's config under explicit values."""

import inspect

import click
import dagster as dg
import pytest
from click.testing import CliRunner

import mobileforge.cli.run as run_cli
import pipelines.run.experiment
import pipelines.run.instance
from mobileforge.cli.run_config import experiment_config
from resources.experiment_names import NAMED_ABLATIONS, ablation_overrides, ablation_resources

ORACLE = {"hint_steps": 12, "direct_plans": True, "hint_from_start": True}


def test_oracle_plans_is_the_whole_plan_hint_and_other_names_change_nothing():
    assert ablation_overrides("oracle-plans") == {"rollouts": ORACLE}
    assert ablation_overrides("default") == {} and ablation_overrides("my-run") == {}
    ablation_overrides("oracle-plans")["rollouts"]["hint_steps"] = 1  # a copy: the table stays as it is
    assert NAMED_ABLATIONS["oracle-plans"]["rollouts"]["hint_steps"] == 12


def test_explicit_config_and_set_values_win_over_the_ablation():
    config, applied = experiment_config(
        "oracle-plans", {"rollouts": {"hint_steps": 5, "attempts": 2}, "benchmark_results": {"k": 2}},
        ("rollouts.direct_plans=false", "curriculum_tasks.max_tasks=4"))
    assert config == {"rollouts": {"hint_steps": 5, "direct_plans": False, "hint_from_start": True, "attempts": 2},
                      "benchmark_results": {"k": 2}, "curriculum_tasks": {"max_tasks": 4}}
    assert applied == ["rollouts.hint_from_start=true"]
    assert experiment_config("default", None, ("rollouts.attempts=2",)) == ({"rollouts": {"attempts": 2}}, [])


def test_a_config_file_that_is_not_a_mapping_of_mappings_is_refused():
    with pytest.raises(click.BadParameter, match="asset -> {field: value}"):
        experiment_config("default", {"rollouts": 3}, ())


@pytest.fixture
def run_arguments(monkeypatch, tmp_path) -> dict:
    """The arguments `mobileforge run` passes to `run_experiment` (which is not run), by name."""
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path))
    # the test's own storage (and its experiment locks): a `mobileforge run` in this checkout holds the default's
    monkeypatch.setenv("MOBILEFORGE_STORAGE_ROOT", str(tmp_path / "storage"))
    monkeypatch.setattr(pipelines.run.instance, "default_instance", dg.DagsterInstance.ephemeral, raising=False)
    monkeypatch.setattr(pipelines.run.instance, "instance_exists", lambda: True)
    monkeypatch.setattr(pipelines.run.experiment, "refuse_missing_inputs", lambda *args: None)  # nothing is stored
    seen = {}
    signature = inspect.signature(pipelines.run.experiment.run_experiment)

    def fake_run(*args, **kwargs):
        seen.update(signature.bind(*args, **kwargs).arguments)
        return {"all": 0.0}

    monkeypatch.setattr(pipelines.run.experiment, "run_experiment", fake_run)
    monkeypatch.setattr(run_cli, "print_benchmark", lambda *args: None)
    return seen


def test_run_prints_and_passes_the_ablation(run_arguments):
    seen = run_arguments
    result = CliRunner().invoke(run_cli.run, ["--experiment", "oracle-plans", "--set", "rollouts.hint_steps=3"])
    assert result.exit_code == 0, result.output
    assert (seen["experiment"], seen["config"]) == ("oracle-plans", {"rollouts": {**ORACLE, "hint_steps": 3}})
    assert ("experiment 'oracle-plans' is a named ablation; applying rollouts.direct_plans=true "
            "rollouts.hint_from_start=true") in result.output
    result = CliRunner().invoke(run_cli.run, ["--experiment", "plain"])
    assert result.exit_code == 0 and "named ablation" not in result.output and seen["config"] == {}


def test_wizard_sets_the_policy_resource_and_the_trainer_rewards(run_arguments):
    seen = run_arguments
    result = CliRunner().invoke(run_cli.run, ["--experiment", "wizard"])
    assert result.exit_code == 0, result.output
    assert seen["resources"] == ablation_resources("wizard") == {
        "policy": {"prompt_style": "mobilewizard", "max_new_tokens": 256}}
    assert seen["config"]["hifpo_checkpoint"]["overrides"]["reward_options"] == {"structure_weight": 0.2,
                                                                                 "reasoning_weight": 0.2}
    assert 'policy.prompt_style="mobilewizard"' in result.output
    # MobileWizard's last epoch with the remedial trajectories (App. B), in HiFPO and RFT
    config = seen["config"]
    assert (config["hifpo_checkpoint"]["remedial"], config["rft_checkpoint"]["remedial"]) == (True, True)
    assert config["remedial_trajectories"] == {"enabled": True}  # the rows both consumers read
    assert "hifpo_checkpoint.remedial=true" in result.output
    assert ablation_resources("oracle-plans") == {} and ablation_resources("my-run") == {}


def test_stage_runs_get_the_resource_section_only_when_there_is_one():
    from pipelines.run.config_check import stage_run_config

    stub = type("Job", (), {"has_node_named": staticmethod(lambda name: name == "rollouts")})()
    plain = stage_run_config(stub, {"rollouts": {"attempts": 2}, "other": {"x": 1}})
    assert plain["ops"] == {"rollouts": {"config": {"attempts": 2}}} and "resources" not in plain
    section = {"policy": {"config": {"prompt_style": "mobilewizard"}}}
    assert stage_run_config(stub, {}, section)["resources"] == section
