"""Experiments: materializations with different config kept side by side.

What the "experiment" concept means to Dagster lives here (its name rules and the named ablations
are plain data in `resources.experiment_names`, which the CLI checks before importing Dagster): the partitions
(every stage asset is partitioned by the dynamic `experiment` dimension; per-app stages add an
`app` dimension), where an experiment's data lives under the storage root (including the staging
area of finished attempts), and the lineage record each materialization carries.

Layout under the storage root (local and S3 alike):

    <root>/<experiment>/<asset/key/path>/<partition>/data.parquet   (or data.json)
    <root>/<experiment>/_staging/<stage>/...                          (finished attempts)
    <root>/_shared/<asset/key/path>/_/...                             (assets without experiment)
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Sequence

import dagster as dg
from dagster._core.definitions.data_version import DATA_VERSION_TAG
from pydantic import BaseModel

from resources.experiment_names import check_experiment_name, check_segment

if TYPE_CHECKING:
    from dagster._core.execution.context.system import StepExecutionContext

EXPERIMENT_DIMENSION = "experiment"
APP_DIMENSION = "app"
DEFAULT_EXPERIMENT = "default"
SHARED_EXPERIMENT = "_shared"  # directory of assets that have no experiment dimension
UNPARTITIONED = "_"  # partition directory of assets without a second dimension
STAGING_DIR = "_staging"
MAX_RECORDED_PARTITIONS = 256  # per upstream asset; beyond it only the combined hash is kept

# --- partitions ---------------------------------------------------------------------------

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


def sync_app_partitions(instance: dg.DagsterInstance, apps: Sequence[str]) -> tuple[list[str], list[str]]:
    """Make the dynamic `app` partitions the target apps `apps` (the environment's, read at run time):
    a new app gets its partition, so the next run explores it; an app no longer targeted loses its
    partition, so no run explores or mines it again, while its stored traces stay where they are.
    Returns (added, removed)."""
    wanted = [check_segment(a, "app") for a in apps]
    if not wanted:
        raise ValueError("no target app: configure the apps (an apps file, MOBILEFORGE_APPS_FILE) or the devices' "
                         "package patterns")
    have = set(instance.get_dynamic_partitions(APP_DIMENSION))
    added, removed = sorted(set(wanted) - have), sorted(have - set(wanted))
    if added:
        instance.add_dynamic_partitions(APP_DIMENSION, added)
    for app in removed:
        instance.delete_dynamic_partition(APP_DIMENSION, app)
    return added, removed


def register_experiment(instance: dg.DagsterInstance, name: str = DEFAULT_EXPERIMENT) -> bool:
    """Add experiment `name` as a partition; False if it already existed."""
    check_experiment_name(name)
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


# --- storage paths ------------------------------------------------------------------------

@dataclass(frozen=True)
class PartitionAddress:
    """Where one asset partition lives: experiment directory + partition directory."""

    experiment: str
    partition: str

    @classmethod
    def of(cls, partitions_def: dg.PartitionsDefinition | None, key: str | None
           ) -> PartitionAddress:
        if partitions_def is None or key is None:
            return cls(SHARED_EXPERIMENT, UNPARTITIONED)
        if isinstance(partitions_def, dg.MultiPartitionsDefinition):
            mkey = (key if isinstance(key, dg.MultiPartitionKey)
                    else partitions_def.get_partition_key_from_str(key))
            dims = dict(mkey.keys_by_dimension)
            if EXPERIMENT_DIMENSION in dims:
                experiment = dims.pop(EXPERIMENT_DIMENSION)
                (other,) = dims.values()
                return cls(check_segment(experiment, "experiment"),
                           check_segment(other, "partition key"))
            return cls(SHARED_EXPERIMENT, check_segment(str(mkey), "partition key"))
        if (isinstance(partitions_def, dg.DynamicPartitionsDefinition)
                and partitions_def.name == EXPERIMENT_DIMENSION):
            return cls(check_segment(key, "experiment"), UNPARTITIONED)
        return cls(SHARED_EXPERIMENT, check_segment(key, "partition key"))


def staging_path(root: str, experiment: str, stage: str) -> str:
    """Directory (inside the storage filesystem) where a stage of `experiment` stages finished
    attempts, so a rerun after a crash resumes instead of starting over."""
    parts = [check_segment(p, "stage") for p in stage.split("/")]
    return "/".join([root, check_segment(experiment, "experiment"), STAGING_DIR, *parts])


def config_key(settings: dict[str, Any]) -> str:
    """Short digest of the settings that shape what a stage stores, so staged work made under
    other settings is never resumed as if it were this run's."""
    text = json.dumps(settings, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:8]


# --- lineage ------------------------------------------------------------------------------

def latest_materialization(instance: dg.DagsterInstance, key: dg.AssetKey, partition: str
                           ) -> dg.EventLogRecord | None:
    """The record of the latest materialization of one partition of `key`; None if it has none."""
    records = instance.fetch_materializations(
        dg.AssetRecordsFilter(asset_key=key, asset_partitions=[partition]), limit=1).records
    return records[0] if records else None


def _partition_version(instance: dg.DagsterInstance, key: dg.AssetKey, partition: str
                       ) -> dict[str, Any]:
    """Data version and run of the latest materialization of one upstream partition."""
    record = latest_materialization(instance, key, partition)
    if record is None:
        return {"partition": partition, "data_version": None, "run_id": None}
    tags = record.asset_materialization.tags or {}
    return {"partition": partition, "data_version": tags.get(DATA_VERSION_TAG), "run_id": record.run_id}


def collect_lineage(step_context: StepExecutionContext, asset_key: dg.AssetKey
                    ) -> dict[str, Any]:
    """`{"config", "code_version", "upstream": [{asset_key, partitions, data_version, run_id}]}`.

    Uses Dagster's step context (reached through the public `get_step_execution_context()` /
    `OutputContext.step_context`): the same data-version records Dagster itself uses to compute
    staleness. For a partitioned upstream, `data_version` is Dagster's hash over the partitions
    read and `partitions` lists each one's own data version and run. Shared by
    the IO manager's `_manifest.json` and, through `lineage_metadata`, the metadata the UI shows.
    """
    layer = step_context.job_def.asset_layer
    node = layer.get(asset_key)
    upstream = []
    for parent in sorted(node.parent_keys, key=lambda k: k.to_user_string()):
        info = step_context.maybe_fetch_and_get_input_asset_version_info(parent)
        input_name = layer.get_node_input_name(step_context.node_handle, parent)
        partitions = None
        if input_name and step_context.has_asset_partitions_for_input(input_name):
            subset = step_context.asset_partitions_subset_for_input(
                input_name, require_valid_partitions=False)
            keys = sorted(str(k) for k in subset.get_partition_keys())
            partitions = [_partition_version(step_context.instance, parent, k)
                          for k in keys[:MAX_RECORDED_PARTITIONS]]
        upstream.append({
            "asset_key": parent.to_user_string(),
            "partitions": partitions,
            "data_version": info.data_version.value if info and info.data_version else None,
            "run_id": info.run_id if info else None,
        })
    return {
        "config": step_context.op_config,
        "code_version": node.code_version,
        "upstream": upstream,
    }


def lineage_metadata(lineage: dict[str, Any]) -> dict[str, dg.MetadataValue]:
    """`collect_lineage`'s record as the metadata the UI shows (config, upstream versions, code version):
    the IO manager attaches it to every output it stores, beside the same record in `_manifest.json`."""
    metadata = {"code_version": dg.MetadataValue.text(lineage["code_version"])} if lineage["code_version"] else {}
    return {**metadata, "config": dg.MetadataValue.json(json.loads(json.dumps(lineage["config"] or {}, default=str))),
            "upstream": dg.MetadataValue.json(lineage["upstream"])}
