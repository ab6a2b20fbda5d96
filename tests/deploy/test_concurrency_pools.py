"""Concurrency pools and placement from the deployment settings: which steps hold which pool, the
tags a GPU trainer carries, the local instance's pool limits, and a limit that Dagster enforces."""

import json
import time
from pathlib import Path

import dagster as dg
import pytest

import assets.methods
from pipelines.definitions import defs
from pipelines.run.instance import INSTANCE_SETTINGS, apply_pool_limits
from resources.deployment import Deployment, load_deployment
from training.methods.registry import method_named

REPO = Path(__file__).resolve().parents[2]


def test_steps_hold_the_pool_of_what_they_use():
    pools = {key.to_user_string(): defs.resolve_assets_def(key).op.pool for key in defs.resolve_asset_graph().get_all_asset_keys()}
    assert {name for name, pool in pools.items() if pool == "devices"} == {
        "exploration_traces", "rollout_attempts", "rollout_steps", "critic_feedback", "benchmark_results"}
    assert {name for name, pool in pools.items() if pool == "llm_endpoint"} == {
        "curriculum_tasks", "critic_calibration", "remedial_trajectories"}
    # the local defaults request no GPU: every trainer trains on its step's CPU, in no pool
    assert all(pools[method.asset] is None for method in assets.methods.METHODS)


def test_a_trainer_placed_on_gpus_carries_its_pod_and_task_resources(monkeypatch):
    monkeypatch.setattr(assets.methods, "DEPLOYMENT", load_deployment(REPO / "deploy" / "cluster.yaml"))
    trainer = assets.methods.method_asset(method_named("hifpo"))
    tags = trainer.op.tags
    assert trainer.op.pool == "gpus" and tags["dagster/priority"] == "2"
    resources = json.loads(tags["dagster-k8s/config"])["container_config"]["resources"]
    assert resources["limits"]["nvidia.com/gpu"] == "4" and resources["requests"]["memory"] == "120Gi"
    assert json.loads(tags["ecs/container_overrides"]) == {"resourceRequirements": [{"type": "GPU", "value": "4"}]}
    assert (tags["ecs/cpu"], tags["ecs/memory"]) == ("16384", "122880")


def test_deployment_settings_are_checked_naming_the_file_and_field(tmp_path):
    assert Deployment().runs == 2 and load_deployment(None).pools["devices"] == 2
    bad = tmp_path / "bad.yaml"
    bad.write_text("runs: 0\nmethods: {hifpo: {gpu: 2}}\n")
    with pytest.raises(ValueError, match=r"bad.yaml: runs: .*greater than or equal to 1.*methods.hifpo.gpu: Extra"):
        load_deployment(bad)
    with pytest.raises(ValueError, match="no such file"):
        load_deployment(tmp_path / "missing.yaml")


@dg.asset(pool="devices")
def first_device_step() -> int:
    time.sleep(1.0)
    return 1


@dg.asset(pool="devices")
def second_device_step() -> int:
    time.sleep(1.0)
    return 2


def two_device_steps() -> dg.JobDefinition:
    """Two steps of the devices pool that the executor could run side by side."""
    job = dg.define_asset_job("two_device_steps", executor_def=dg.multiprocess_executor.configured({"max_concurrent": 2}))
    return dg.Definitions(assets=[first_device_step, second_device_step], jobs=[job]).resolve_job_def(job.name)


def test_a_pool_limit_on_the_local_instance_runs_its_steps_one_at_a_time(tmp_path):
    (tmp_path / "dagster.yaml").write_text(INSTANCE_SETTINGS)
    with dg.DagsterInstance.from_config(str(tmp_path)) as instance:
        assert apply_pool_limits(instance, Deployment(pools={"devices": 1})) == {"devices": 1}
        assert apply_pool_limits(instance, Deployment(pools={"devices": 1})) == {}  # already set
        result = dg.execute_job(dg.reconstructable(two_device_steps), instance=instance)
        assert result.success
        spans = {}
        for event in instance.all_logs(result.run_id):
            kind = event.dagster_event and event.dagster_event.event_type
            if kind in (dg.DagsterEventType.STEP_START, dg.DagsterEventType.STEP_SUCCESS):
                spans.setdefault(event.step_key, []).append(event.timestamp)
        (start_a, end_a), (start_b, end_b) = sorted(spans.values())
        assert end_a <= start_b
