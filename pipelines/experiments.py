"""Experiments: materializations with different config kept side by side as partitions.

Every stage asset is partitioned by the dynamic `experiment` dimension, so running an ablation
under a new experiment name writes new partitions and never overwrites another experiment's.
Per-app stages (exploration) add a second `app` dimension: `experiment_app_partitions(apps)`
(a MultiPartitionsDefinition; Dagster 1.13 accepts a named dynamic dimension there). An
experiment-level asset reading a per-app asset gets every app of its experiment through
`APPS_OF_EXPERIMENT`.
"""

from __future__ import annotations

import json
from typing import Any, Sequence

import dagster as dg
from pydantic import BaseModel

from resources.lineage import collect_lineage
from resources.storage import DEFAULT_EXPERIMENT, EXPERIMENT_DIMENSION, check_segment

APP_DIMENSION = "app"

experiment_partitions = dg.DynamicPartitionsDefinition(name=EXPERIMENT_DIMENSION)

# Maps experiment E of a per-experiment asset to every (E, app) partition of a per-app asset,
# and (E, app) back to E.
APPS_OF_EXPERIMENT = dg.MultiToSingleDimensionPartitionMapping(
    partition_dimension_name=EXPERIMENT_DIMENSION)


def experiment_app_partitions(apps: Sequence[str] | None = None) -> dg.MultiPartitionsDefinition:
    """experiment × app partitions; `apps` fixes the app list, None makes apps dynamic too
    (register them with `instance.add_dynamic_partitions("app", [...])`)."""
    app_def: dg.PartitionsDefinition = (
        dg.StaticPartitionsDefinition([check_segment(a, "app") for a in apps])
        if apps is not None else dg.DynamicPartitionsDefinition(name=APP_DIMENSION))
    return dg.MultiPartitionsDefinition(
        {EXPERIMENT_DIMENSION: experiment_partitions, APP_DIMENSION: app_def})


def register_experiment(instance: dg.DagsterInstance, name: str = DEFAULT_EXPERIMENT) -> bool:
    """Add experiment `name` as a partition; False if it already existed."""
    check_segment(name, "experiment")
    if name.startswith("_"):
        raise ValueError(f"experiment {name!r}: names starting with '_' are reserved")
    if instance.has_dynamic_partition(EXPERIMENT_DIMENSION, name):
        return False
    instance.add_dynamic_partitions(EXPERIMENT_DIMENSION, [name])
    return True


def experiment_of(context: dg.AssetExecutionContext) -> str:
    """The experiment this run materializes (the experiment dimension of its partition key)."""
    key = context.partition_key
    if isinstance(key, dg.MultiPartitionKey):
        return key.keys_by_dimension[EXPERIMENT_DIMENSION]
    return key


def _config_as_json(config: Any) -> Any:
    if config is None:
        return None
    if isinstance(config, BaseModel):
        return config.model_dump(mode="json")
    return json.loads(json.dumps(config, default=str))


def lineage_metadata(context: dg.AssetExecutionContext, config: Any = None,
                     asset_key: dg.AssetKey | None = None) -> dict[str, dg.MetadataValue]:
    """Metadata recording what this materialization was built from; attach it with
    `context.add_output_metadata(...)` or `MaterializeResult(metadata=...)`.

    `config` is the asset's Config object (or a JSON-able dict); None records the run config of
    the step. Upstream entries carry each parent's data version and materializing run id.
    The IO manager writes the same record into `_manifest.json`.
    """
    key = asset_key or context.asset_key
    lineage = collect_lineage(context.get_step_execution_context(), key)
    cfg = _config_as_json(config) if config is not None else lineage["config"]
    metadata = {
        "config": dg.MetadataValue.json(cfg if cfg is not None else {}),
        "upstream": dg.MetadataValue.json(lineage["upstream"]),
    }
    if lineage["code_version"] is not None:
        metadata["code_version"] = dg.MetadataValue.text(lineage["code_version"])
    return metadata
