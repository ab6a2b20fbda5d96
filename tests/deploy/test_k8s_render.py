"""The Kubernetes jobs of the default graph, built by dagster-k8s's own code (`mobileforge deploy k8s`)
and read back by the kubernetes client's V1Job model: a run worker per stage, a job per step;
trainer steps carry their GPU limits on the CUDA image, device and LLM steps their pool, and every
secret comes from a Kubernetes secret by name."""

import os
import subprocess
import sys
from pathlib import Path

import kubernetes
import pytest
import yaml

from pipelines.definitions import STAGES, defs
from pipelines.deploy.k8s import render_jobs, validated
from resources.deployment import Deployment, load_deployment

REPO = Path(__file__).resolve().parents[2]
TRAINERS = {"hifpo_checkpoint", "rft_checkpoint", "grsd_checkpoint", "adagrpo_checkpoint"}
SHARDED = ("rollouts", "benchmark_results")  # steps of their graph-backed assets: <asset>.<asset>_shard_<i>, _merge
SHARDS = load_deployment(REPO / "deploy" / "cluster.yaml").shards
DEVICE_STEPS = {"exploration_traces", *(f"{asset}.{asset}_shard_{i}" for asset in SHARDED for i in range(SHARDS))}


@pytest.fixture(scope="module")
def cluster_jobs() -> list[dict]:
    """`mobileforge deploy k8s` with the shipped cluster settings, as printed."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "MOBILEFORGE_DEPLOYMENT": str(REPO / "deploy" / "cluster.yaml")}
    out = subprocess.run([sys.executable, "-m", "mobileforge.cli.main", "deploy", "k8s"], cwd=REPO, env=env,
                         capture_output=True, text=True, timeout=300, check=True).stdout
    return [document for document in yaml.safe_load_all(out)]


def _container(job: dict) -> dict:
    (container,) = job["spec"]["template"]["spec"]["containers"]
    return container


def _step(job: dict) -> str | None:
    return job["metadata"]["labels"].get("dagster/op")


def test_every_stage_has_a_run_worker_and_a_job_per_step_that_the_v1job_model_reads(cluster_jobs):
    client = kubernetes.client.ApiClient()
    for job in cluster_jobs:
        model = client._ApiClient__deserialize(job, "V1Job")
        assert isinstance(model, kubernetes.client.V1Job) and client.sanitize_for_serialization(model) == job
        assert len(job["metadata"]["name"]) <= 63
    workers = [job for job in cluster_jobs if job["metadata"]["labels"]["app.kubernetes.io/component"] == "run_worker"]
    assert sorted(job["metadata"]["labels"]["dagster/job"] for job in workers) == sorted(s.name for s in STAGES)
    steps = {_step(job) for job in cluster_jobs} - {None}
    assert TRAINERS | DEVICE_STEPS | {"curriculum_tasks", "step_datasets"} <= steps
    for job in cluster_jobs:
        if _step(job):
            assert _container(job)["args"][-3:] == ["dagster", "api", "execute_step"]
            env = {item["name"] for item in _container(job)["env"]}
            assert {"DAGSTER_RUN_STEP_KEY", "DAGSTER_COMPRESSED_EXECUTE_STEP_ARGS"} <= env


def test_trainer_steps_request_gpus_on_the_cuda_image_and_device_steps_carry_their_pool(cluster_jobs):
    by_step = {_step(job): job for job in cluster_jobs if _step(job)}
    for step in TRAINERS:
        container = _container(by_step[step])
        assert int(container["resources"]["limits"]["nvidia.com/gpu"]) >= 2, step
        assert container["image"] == "mobileforge:cuda"
        assert by_step[step]["spec"]["template"]["metadata"]["labels"]["mobileforge/pool"] == "gpus"
    for step in DEVICE_STEPS:
        assert by_step[step]["spec"]["template"]["metadata"]["labels"]["mobileforge/pool"] == "devices"
        assert "nvidia.com/gpu" not in (_container(by_step[step]).get("resources") or {}).get("limits", {})
        assert _container(by_step[step])["image"] == "mobileforge:latest"
    assert by_step["curriculum_tasks"]["spec"]["template"]["metadata"]["labels"]["mobileforge/pool"] == "llm_endpoint"


def test_rollouts_and_the_benchmark_are_a_job_per_shard_in_the_devices_pool_and_a_merge_job(cluster_jobs):
    assert SHARDS > 1  # the shipped cluster settings shard them
    by_step = {_step(job): job for job in cluster_jobs if _step(job)}
    for asset in SHARDED:
        shards = sorted(step for step in by_step if step.startswith(f"{asset}.{asset}_shard_"))
        assert shards == sorted(f"{asset}.{asset}_shard_{i}" for i in range(SHARDS))
        for step in shards:  # each pod executes its own step
            env = {item["name"]: item.get("value") for item in _container(by_step[step])["env"]}
            assert env["DAGSTER_RUN_STEP_KEY"] == step
        assert len({by_step[step]["metadata"]["name"] for step in shards}) == SHARDS
        merge = by_step[f"{asset}.{asset}_merge"]  # reads the staged attempts: holds no device
        assert "mobileforge/pool" not in merge["spec"]["template"]["metadata"]["labels"]
    assert not set(SHARDED) & set(by_step)  # no single step left


def test_secrets_come_from_kubernetes_secrets_by_name_never_by_value(cluster_jobs):
    for job in cluster_jobs:
        container = _container(job)
        assert {"secretRef": {"name": "mobileforge-secrets"}} in container["envFrom"]
        for item in container["env"]:
            if any(word in item["name"] for word in ("PASSWORD", "SECRET", "TOKEN", "API_KEY", "ACCESS_KEY", "DATABASE_URL")):
                assert "value" not in item and "secretKeyRef" in item["valueFrom"], item


def test_the_local_defaults_request_no_gpu():
    jobs = render_jobs(defs, ["training"], Deployment())
    for rendered in jobs:
        limits = (validated(rendered.job)["spec"]["template"]["spec"]["containers"][0].get("resources") or {}) \
            .get("limits", {})
        assert "nvidia.com/gpu" not in limits


def test_a_field_the_model_does_not_hold_is_refused():
    job = render_jobs(defs, ["policy"], Deployment())[0].job
    job.spec.template.spec.containers[0].resources = {"limitz": {"cpu": "1"}}
    with pytest.raises(ValueError, match="fields the V1Job model does not hold"):
        validated(job)
