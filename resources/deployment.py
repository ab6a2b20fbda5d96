"""Where the graph's work runs and how much of it at once: the deployment settings, read once where the
code location loads (as MOBILEFORGE_ENV is) from the YAML file MOBILEFORGE_DEPLOYMENT names, else the
local defaults, which are what `mobileforge run` on one machine always did.

- `runs`: runs of one stage launched at once (the local runner; the Helm chart's and deploy/dagster.yaml's
  run queue are set from the same file).
- `pools`: Dagster concurrency pools and their limits. Steps that hold a device (exploration, rollouts,
  benchmark) are in `devices`, trainer steps that request GPUs in `gpus`, steps whose work is LLM calls
  (LLM curriculum mining, critic calibration, the corrective teacher) in `llm_endpoint`.
- `shards`: steps the rollouts and the benchmark are each split into (`assets.sharding`): that many steps
  side by side, each rolling out its share of the tasks, then one step merging them into the assets.
- `methods`: per training method, the GPUs its step requests (k8s resource limits, ECS resource
  requirements) and the accelerate config (training/trainers/accelerate/) its trainer runs under, with
  one process per GPU.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

DEPLOYMENT_ENV = "MOBILEFORGE_DEPLOYMENT"
DEVICES, GPUS, LLM_ENDPOINT = "devices", "gpus", "llm_endpoint"
MAX_SHARDS = 256
ACCELERATE_DIR = Path(__file__).resolve().parents[1] / "training" / "trainers" / "accelerate"


class MethodPlacement(BaseModel):
    model_config = ConfigDict(extra="forbid")

    gpus: int = Field(default=0, ge=0, le=64, description=(
        "GPUs the method's trainer step requests; 0 trains in the step's own process on its CPU."))
    processes: int | None = Field(default=None, ge=1, le=64, description=(
        "Training processes under `accelerate launch`; default one per GPU. Set with gpus 0 it runs "
        "`accelerate launch --cpu` with that many processes (gloo), as the tests do."))
    accelerate_config: Literal["single_gpu", "fsdp", "zero3"] | None = Field(default=None, description=(
        "The accelerate config of training/trainers/accelerate/ the trainer launches with; default: "
        "single_gpu for one GPU, fsdp for more."))
    cpu: str | None = Field(default=None, description="CPU request of the step's pod, e.g. '8'.")
    memory: str | None = Field(default=None, description="Memory request of the step's pod, e.g. '64Gi'.")

    @property
    def launched(self) -> bool:
        """Whether the trainer runs under `accelerate launch` (several processes or a GPU)."""
        return self.gpus > 0 or (self.processes or 1) > 1

    @property
    def process_count(self) -> int:
        return self.processes or max(1, self.gpus)

    def accelerate_file(self) -> Path | None:
        """The accelerate config to launch with (None for a CPU launch, which takes its flags instead)."""
        if self.gpus == 0:
            return None
        name = self.accelerate_config or ("single_gpu" if self.gpus == 1 else "fsdp")
        return ACCELERATE_DIR / f"{name}.yaml"


class K8sSettings(BaseModel):
    """Where the k8s executor's pods run and what they read; names of secrets and config maps, never values."""

    model_config = ConfigDict(extra="forbid")

    image: str = Field(default="mobileforge:latest", description="The code location's image (deploy/Dockerfile).")
    gpu_image: str = Field(default="mobileforge:cuda", description=(
        "The image of steps that request GPUs (deploy/Dockerfile.cuda: CUDA torch, vLLM)."))
    namespace: str = Field(default="mobileforge", description="Namespace of the run and step jobs.")
    service_account: str = Field(default="dagster", description="Service account of the run and step pods.")
    instance_config_map: str = Field(default="dagster-instance", description=(
        "Config map holding the instance's dagster.yaml (the Helm chart's <release>-instance)."))
    postgres_password_secret: str = Field(default="dagster-postgresql-secret", description=(
        "Secret with the instance database's password (the Helm chart's)."))
    dagster_home: str = Field(default="/opt/dagster/dagster_home", description="DAGSTER_HOME in the pods.")
    env_config_maps: list[str] = Field(default_factory=lambda: ["dagster-pipeline-env"], description=(
        "Config maps whose keys become environment variables of every pod."))
    env_secrets: list[str] = Field(default_factory=lambda: ["mobileforge-secrets"], description=(
        "Secrets whose keys become environment variables of every pod: the lease database URL, storage and "
        "model endpoint credentials (docs/deploy.md lists the keys)."))
    image_pull_policy: Literal["Always", "IfNotPresent", "Never"] = Field(default="IfNotPresent")


class Deployment(BaseModel):
    model_config = ConfigDict(extra="forbid")

    executor: Literal["local", "k8s", "ecs"] = Field(default="local", description=(
        "Where steps run: 'local' (processes of the run, as `mobileforge run` on one machine), 'k8s' (a pod per "
        "step, dagster-k8s's k8s_job_executor), 'ecs' (a task per step, dagster-aws's ecs_executor)."))
    k8s: K8sSettings = Field(default_factory=K8sSettings)

    runs: int = Field(default=2, ge=1, le=1000, description=(
        "Runs of one stage launched at once (one per core on the 2-core machine the defaults were measured on)."))
    pools: dict[str, Annotated[int, Field(ge=1)]] = Field(default_factory=lambda: {DEVICES: 2, GPUS: 1, LLM_ENDPOINT: 4}, description=(
        "Concurrency pool -> steps holding it at once."))
    shards: int = Field(default=1, ge=1, le=MAX_SHARDS, description=(
        "Steps the rollouts and the benchmark are each split into, run side by side (a pod or task each in a "
        "cluster, processes of the run on one machine), each rolling out its share of the tasks and resuming its "
        "own staged attempts, then merged by one more step into the same assets. 1: one step each (its tasks "
        "split over worker processes inside it), as on one machine."))
    methods: dict[str, MethodPlacement] = Field(default_factory=dict, description=(
        "Training method name -> its placement; a method not named trains on its step's CPU."))
    gpu_resource: str = Field(default="nvidia.com/gpu", description="The Kubernetes extended resource of a GPU.")

    def method(self, name: str) -> MethodPlacement:
        return self.methods.get(name, MethodPlacement())


def load_deployment(path: str | Path | None = None) -> Deployment:
    """The settings in `path` (default: $MOBILEFORGE_DEPLOYMENT; neither: the local defaults); a
    ValueError naming the file and the field when they are wrong."""
    path = path or os.environ.get(DEPLOYMENT_ENV)
    if not path:
        return Deployment()
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"{DEPLOYMENT_ENV}={path}: no such file")
    data = yaml.safe_load(path.read_text()) or {}
    try:
        return Deployment.model_validate(data)
    except ValidationError as error:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in error.errors())
        raise ValueError(f"{path}: {problems}") from None
