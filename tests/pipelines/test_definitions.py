import subprocess
from datetime import datetime
import sys
from pathlib import Path

import dagster as dg

from pipelines.definitions import defs, nightly_discovery

REPO = Path(__file__).resolve().parents[2]

EXPECTED_ASSETS = [
    "base_policy", "benchmark_results", "critic_calibration", "critic_feedback", "curriculum_tasks",
    "exploration_traces", "fork_pairs", "grsd_checkpoint", "hifpo_checkpoint", "rft_checkpoint",
    "rollout_attempts", "rollout_steps", "step_datasets",
]


def test_definitions_hold_exactly_the_expected_assets_in_stage_groups():
    graph = defs.resolve_asset_graph()
    keys = sorted(k.to_user_string() for k in graph.get_all_asset_keys())
    assert keys == EXPECTED_ASSETS
    groups = {k.to_user_string(): graph.get(k).group_name for k in graph.get_all_asset_keys()}
    assert groups["exploration_traces"] == groups["rollout_attempts"] == "interaction"
    assert groups["hifpo_checkpoint"] == "learning" and groups["benchmark_results"] == "evaluation"


def test_every_table_asset_has_a_schema_check():
    graph = defs.resolve_asset_graph()
    checked = {k.asset_key.to_user_string() for k in graph.asset_check_keys}
    assert checked == {"exploration_traces", "curriculum_tasks", "rollout_attempts", "rollout_steps",
                       "critic_feedback", "step_datasets", "fork_pairs", "benchmark_results"}


def test_nightly_schedule_explores_every_app_of_the_default_experiment():
    with dg.build_schedule_context(scheduled_execution_time=datetime(2026, 1, 2)) as ctx:
        requests = list(nightly_discovery(ctx))
    from phonesim.apps import load_apps

    assert sorted(r.partition_key.keys_by_dimension["app"] for r in requests) == sorted(load_apps())
    assert {r.partition_key.keys_by_dimension["experiment"] for r in requests} == {"default"}


def test_dagster_cli_validates_the_workspace():
    result = subprocess.run([sys.executable, "-m", "dagster", "definitions", "validate", "-w", "workspace.yaml"],
                            cwd=REPO, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
