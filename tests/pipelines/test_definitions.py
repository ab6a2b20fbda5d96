import subprocess
from datetime import datetime
import sys
from pathlib import Path

import dagster as dg
import pytest

from pipelines.definitions import STAGES, curriculum_refresh, defs, nightly_discovery
from pipelines.resources import resources_for

REPO = Path(__file__).resolve().parents[2]

EXPECTED_ASSETS = [
    "adagrpo_checkpoint", "base_policy", "benchmark_results", "critic_calibration", "critic_feedback", "curriculum_tasks",
    "exploration_traces", "fork_pairs", "grsd_checkpoint", "hifpo_checkpoint", "hint_sft_checkpoint",
    "no_hint_sft_checkpoint", "remedial_trajectories", "rft_checkpoint", "rollout_attempts", "rollout_steps",
    "step_datasets",
]


def test_definitions_hold_exactly_the_expected_assets_in_stage_groups():
    graph = defs.resolve_asset_graph()
    keys = sorted(k.to_user_string() for k in graph.get_all_asset_keys())
    assert keys == EXPECTED_ASSETS
    groups = {k.to_user_string(): graph.get(k).group_name for k in graph.get_all_asset_keys()}
    assert groups["exploration_traces"] == groups["curriculum_tasks"] == "discovery"
    assert groups["base_policy"] == "policy" and groups["rollout_attempts"] == "interaction"
    assert groups["hifpo_checkpoint"] == "learning" and groups["benchmark_results"] == "evaluation"


def test_groups_follow_the_data_flow():
    """No edge runs from a later group back to an earlier one, so the group view reads left to right."""
    order = ["policy", "discovery", "interaction", "learning", "evaluation"]
    graph = defs.resolve_asset_graph()
    for key in graph.get_all_asset_keys():
        for parent in graph.get(key).parent_keys:
            assert order.index(graph.get(parent).group_name) <= order.index(graph.get(key).group_name), (parent, key)


def test_every_asset_belongs_to_exactly_one_named_stage_job():
    assert [job.name for job in STAGES] == ["policy", "discovery", "interaction", "training", "evaluation"]
    owners: dict[str, list[str]] = {}
    for job in STAGES:
        for key in defs.resolve_job_def(job.name).asset_layer.executable_asset_keys:
            owners.setdefault(key.to_user_string(), []).append(job.name)
    assert sorted(owners) == EXPECTED_ASSETS and all(len(jobs) == 1 for jobs in owners.values())


def test_every_asset_says_what_a_row_is():
    graph = defs.resolve_asset_graph()
    for key in graph.get_all_asset_keys():
        description = graph.get(key).description or ""
        assert description.startswith(("One row per", "One checkpoint", "One report")), key


def test_every_table_asset_has_a_schema_check():
    graph = defs.resolve_asset_graph()
    checked = {k.asset_key.to_user_string() for k in graph.asset_check_keys if k.name.endswith("_schema")}
    assert checked == {"exploration_traces", "curriculum_tasks", "rollout_attempts", "rollout_steps",
                       "critic_feedback", "step_datasets", "fork_pairs", "remedial_trajectories", "benchmark_results"}


def test_the_nightly_refresh_is_on_by_default_and_reaches_the_curriculum():
    assert nightly_discovery.default_status == dg.DefaultScheduleStatus.RUNNING
    assert curriculum_refresh.default_status == dg.DefaultSensorStatus.RUNNING
    graph = defs.resolve_asset_graph()
    automated = {k.to_user_string() for k in graph.get_all_asset_keys() if graph.get(k).automation_condition}
    assert automated == {"curriculum_tasks"}
    assert {k.to_user_string() for k in curriculum_refresh.asset_selection.resolve(graph)} == automated


def test_nightly_schedule_skips_until_the_default_experiment_exists():
    with dg.instance_for_test() as instance:
        with dg.build_schedule_context(instance=instance, scheduled_execution_time=datetime(2026, 1, 2)) as ctx:
            assert isinstance(nightly_discovery(ctx), dg.SkipReason)


def test_nightly_schedule_explores_every_target_app_of_the_default_experiment():
    from phonesim.apps import load_apps
    from resources.experiment import sync_app_partitions

    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions("experiment", ["default"])
        sync_app_partitions(instance, resources_for("local")["simulator"].apps())  # as `mobileforge run` does
        with dg.build_schedule_context(instance=instance, scheduled_execution_time=datetime(2026, 1, 2)) as ctx:
            requests = list(nightly_discovery(ctx))
    # on the simulator the target apps are its apps
    assert sorted(r.partition_key.keys_by_dimension["app"] for r in requests) == sorted(load_apps())
    assert {r.partition_key.keys_by_dimension["experiment"] for r in requests} == {"default"}


def test_app_partitions_follow_the_target_apps_and_leave_removed_apps_traces_alone():
    from resources.experiment import sync_app_partitions

    with dg.instance_for_test() as instance:
        assert sync_app_partitions(instance, ["notes", "clock", "people"]) == (["clock", "notes", "people"], [])
        assert sync_app_partitions(instance, ["notes", "people", "ledger"]) == (["ledger"], ["clock"])
        assert sorted(instance.get_dynamic_partitions("app")) == ["ledger", "notes", "people"]
        with pytest.raises(ValueError, match="no target app"):
            sync_app_partitions(instance, [])


def test_the_simulators_target_apps_are_a_setting_checked_against_its_apps(monkeypatch):
    monkeypatch.setenv("MOBILEFORGE_SIM_APPS", "contacts, clock")
    simulator = resources_for("local")["simulator"]
    assert simulator.apps() == ["clock", "contacts"] and sorted(simulator.packages()) == ["clock", "contacts"]
    monkeypatch.setenv("MOBILEFORGE_SIM_APPS", "clock,ledger")
    with pytest.raises(ValueError, match=r"\['ledger'\]: not apps of the simulator, which has \['calendar'"):
        resources_for("local")["simulator"].apps()
    monkeypatch.setenv("MOBILEFORGE_SIM_APPS", " , ")
    with pytest.raises(ValueError, match="MOBILEFORGE_SIM_APPS=' , ': expected app names"):
        resources_for("local")
    monkeypatch.delenv("MOBILEFORGE_SIM_APPS")
    assert len(resources_for("local")["simulator"].apps()) == 11


def test_dagster_cli_validates_the_workspace():
    result = subprocess.run([sys.executable, "-m", "dagster", "definitions", "validate", "-w", "workspace.yaml"],
                            cwd=REPO, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
