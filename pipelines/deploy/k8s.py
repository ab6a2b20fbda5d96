"""The Kubernetes jobs a cluster would run for the graph, built by dagster-k8s's own code without a
cluster: for each stage, the run worker's job (what `K8sRunLauncher` submits) and one job per step
(what the k8s executor's step handler submits), from the stage's op tags (`dagster-k8s/config`:
GPU limits of trainers, the pool label of device and LLM steps) and the deployment's k8s settings
(image, namespace, secrets by name). `mobileforge deploy k8s` prints them; tests validate them with
the kubernetes client's models."""

from __future__ import annotations

import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import dagster as dg
import kubernetes
import yaml
from dagster._core.code_pointer import ModuleCodePointer
from dagster._core.origin import JobPythonOrigin, RepositoryPythonOrigin
from dagster._grpc.types import ExecuteRunArgs, ExecuteStepArgs
from dagster_k8s import K8sRunLauncher
from dagster_k8s.container_context import K8sContainerContext
from dagster_k8s.job import construct_dagster_k8s_job, get_job_name_from_run_id, get_k8s_job_name, \
    get_user_defined_k8s_config

from resources.deployment import Deployment

PYTHON = "/usr/local/bin/python"  # in the image deploy/Dockerfile builds
WORKDIR = "/opt/mobileforge"
# a kubeconfig the launcher loads and never contacts: the jobs are built here, not submitted
_KUBECONFIG = {"apiVersion": "v1", "kind": "Config", "current-context": "render",
               "clusters": [{"name": "render", "cluster": {"server": "https://127.0.0.1:1"}}],
               "users": [{"name": "render", "user": {"token": "unused"}}],
               "contexts": [{"name": "render", "context": {"cluster": "render", "user": "render"}}]}


@dataclass(frozen=True)
class RenderedJob:
    stage: str
    step: str | None  # None: the run worker
    pool: str | None
    job: kubernetes.client.V1Job


@contextmanager
def run_launcher(deployment: Deployment) -> Iterator[K8sRunLauncher]:
    """dagster-k8s's run launcher with the deployment's k8s settings, as the Helm chart configures it."""
    k8s = deployment.k8s
    with tempfile.TemporaryDirectory() as tmp:
        kubeconfig = Path(tmp) / "kubeconfig"
        kubeconfig.write_text(yaml.safe_dump(_KUBECONFIG))
        yield K8sRunLauncher(service_account_name=k8s.service_account, instance_config_map=k8s.instance_config_map,
                             postgres_password_secret=k8s.postgres_password_secret, dagster_home=k8s.dagster_home,
                             job_image=k8s.image, image_pull_policy=k8s.image_pull_policy, load_incluster_config=False,
                             kubeconfig_file=str(kubeconfig), job_namespace=k8s.namespace,
                             env_config_maps=list(k8s.env_config_maps), env_secrets=list(k8s.env_secrets))


def render_jobs(defs: dg.Definitions, stages: list[str], deployment: Deployment) -> list[RenderedJob]:
    """The run worker's and every step's Kubernetes job of each stage."""
    k8s = deployment.k8s
    repository = RepositoryPythonOrigin(executable_path=PYTHON, code_pointer=ModuleCodePointer(
        "pipelines.definitions", "defs", working_directory=WORKDIR), container_image=k8s.image)
    rendered = []
    with run_launcher(deployment) as launcher:
        base = K8sContainerContext.create_from_config({}).merge(K8sContainerContext(
            namespace=k8s.namespace, env_secrets=list(k8s.env_secrets), env_config_maps=list(k8s.env_config_maps),
            service_account_name=k8s.service_account, image_pull_policy=k8s.image_pull_policy))
        job_config = base.get_k8s_job_config(k8s.image, launcher)
        for stage in stages:
            job = defs.resolve_job_def(stage)
            origin = JobPythonOrigin(stage, repository)
            run_id = str(uuid.uuid5(uuid.NAMESPACE_URL, f"mobileforge/{stage}"))  # stable, so output diffs
            labels = {"dagster/job": stage, "dagster/run-id": run_id, "dagster/code-location": "mobileforge"}
            rendered.append(RenderedJob(stage, None, None, construct_dagster_k8s_job(
                job_config, ExecuteRunArgs(origin, run_id, None).get_command_args(),
                get_job_name_from_run_id(run_id), base.run_k8s_config, component="run_worker", labels=labels)))
            for step, op in _steps(job):
                context = base.merge(K8sContainerContext(run_k8s_config=get_user_defined_k8s_config(op.tags)))
                name = f"dagster-step-{get_k8s_job_name(run_id, step)}"
                step_args = ExecuteStepArgs(origin, run_id, [step])
                env = [*step_args.get_command_env(), {"name": "DAGSTER_RUN_JOB_NAME", "value": stage},
                       {"name": "DAGSTER_RUN_STEP_KEY", "value": step}]
                rendered.append(RenderedJob(stage, step, op.pool, construct_dagster_k8s_job(
                    job_config, step_args.get_command_args(skip_serialized_namedtuple=True), name,
                    context.run_k8s_config, pod_name=name, component="step_worker",
                    labels={**labels, "dagster/op": step}, env_vars=env)))
    return rendered


def _steps(job: dg.JobDefinition) -> list[tuple[str, dg.OpDefinition]]:
    """Every step of `job` (its key, e.g. `rollouts.rollouts_shard_0` inside a sharded, graph-backed asset)
    and the op it runs: what the executor submits a job for."""
    graph = job.graph
    return [(str(handle), graph.get_node(handle).definition) for handle in graph.iterate_node_handles()
            if isinstance(graph.get_node(handle).definition, dg.OpDefinition)]


def validated(job: kubernetes.client.V1Job) -> dict:
    """The job as the API receives it, read back through the kubernetes client's V1Job model; a
    ValueError when a field does not survive the round trip (unknown, misspelt, wrongly typed)."""
    client = kubernetes.client.ApiClient()
    body = client.sanitize_for_serialization(job)
    model = client._ApiClient__deserialize(body, "V1Job")  # the client's own model construction, with validation
    if client.sanitize_for_serialization(model) != body:
        raise ValueError(f"job {job.metadata.name}: fields the V1Job model does not hold")
    return body


def render_yaml(rendered: list[RenderedJob]) -> str:
    """Every job as a YAML document, each headed by its stage, step and pool."""
    documents = []
    for item in rendered:
        head = f"# stage {item.stage}: " + (f"step {item.step}" + (f", pool {item.pool}" if item.pool else "")
                                            if item.step else "run worker")
        documents.append(head + "\n" + yaml.safe_dump(validated(item.job), sort_keys=False))
    return "---\n".join(documents)
