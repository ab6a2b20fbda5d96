"""Where a step runs, said by op tags and pools only (never by branches in asset code): the deployment
settings (resources.deployment) as the tags Dagster's executors read. The k8s executor (dagster-k8s)
reads `dagster-k8s/config` for the step's pod; the ECS executor (dagster-aws) reads
`ecs/container_overrides` for the step's task; the local executors read neither."""

from __future__ import annotations

import json

from resources.deployment import GPUS, Deployment, MethodPlacement, load_deployment

DEPLOYMENT: Deployment = load_deployment()


POOL_LABEL = "mobileforge/pool"


def pool_tags(pool: str) -> dict[str, str]:
    """The op tags of a step in `pool`: its pod labelled with the pool (Dagster enforces the pool's limit;
    the label lets a cluster's operators and node affinities see it)."""
    return {"dagster-k8s/config": json.dumps({"pod_template_spec_metadata": {"labels": {POOL_LABEL: pool}}})}


def trainer_tags(placement: MethodPlacement, deployment: Deployment) -> dict[str, str]:
    """The op tags of a trainer step: its GPUs (and CPU/memory) as the k8s pod's resources, on the CUDA
    image, and as the ECS container's resource requirements; nothing for a trainer on its step's CPU."""
    requests = {key: value for key, value in (("cpu", placement.cpu), ("memory", placement.memory)) if value}
    limits = {deployment.gpu_resource: str(placement.gpus)} if placement.gpus else {}
    if not requests and not limits:
        return {}
    container = {"resources": {**({"requests": requests} if requests else {}),
                               **({"limits": {**requests, **limits}} if limits else {})}}
    if placement.gpus:
        container["image"] = deployment.k8s.gpu_image
    k8s = {"container_config": container,
           **({"pod_template_spec_metadata": {"labels": {POOL_LABEL: GPUS}}} if placement.gpus else {})}
    tags = {"dagster-k8s/config": json.dumps(k8s)}
    if placement.gpus:
        tags["ecs/container_overrides"] = json.dumps(
            {"resourceRequirements": [{"type": "GPU", "value": str(placement.gpus)}]})
    if placement.cpu:
        tags["ecs/cpu"] = str(int(float(placement.cpu) * 1024))  # ECS counts CPU units, 1024 per vCPU
    if placement.memory:
        tags["ecs/memory"] = str(_mebibytes(placement.memory))
    return tags


def trainer_pool(placement: MethodPlacement) -> str | None:
    """The pool of a trainer step: `gpus` when it requests any; a CPU trainer takes no pool."""
    return GPUS if placement.gpus else None


def _mebibytes(quantity: str) -> int:
    units = {"Ki": 1 / 1024, "Mi": 1, "Gi": 1024, "Ti": 1024 * 1024}
    for suffix, factor in units.items():
        if quantity.endswith(suffix):
            return int(float(quantity[: -len(suffix)]) * factor)
    raise ValueError(f"memory {quantity!r}: expected a quantity in Ki, Mi, Gi or Ti, e.g. '64Gi'")
