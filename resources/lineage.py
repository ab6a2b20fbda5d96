"""What a materialization was built from: its run config, code version and the data versions
(and runs) of the upstream partitions it read. Shared by `lineage_metadata` (asset metadata
in the UI) and the IO manager's `_manifest.json`, so both always say the same thing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import dagster as dg
from dagster._core.definitions.data_version import DATA_VERSION_TAG

if TYPE_CHECKING:
    from dagster._core.execution.context.system import StepExecutionContext


MAX_RECORDED_PARTITIONS = 256  # per upstream asset; beyond it only the combined hash is kept


def _partition_version(instance: dg.DagsterInstance, key: dg.AssetKey, partition: str
                       ) -> dict[str, Any]:
    """Data version and run of the latest materialization of one upstream partition."""
    records = instance.fetch_materializations(
        dg.AssetRecordsFilter(asset_key=key, asset_partitions=[partition]), limit=1).records
    if not records:
        return {"partition": partition, "data_version": None, "run_id": None}
    tags = records[0].asset_materialization.tags or {}
    return {"partition": partition, "data_version": tags.get(DATA_VERSION_TAG),
            "run_id": records[0].run_id}


def collect_lineage(step_context: StepExecutionContext, asset_key: dg.AssetKey
                    ) -> dict[str, Any]:
    """`{"config", "code_version", "upstream": [{asset_key, partitions, data_version, run_id}]}`.

    Uses Dagster's step context (reached through the public `get_step_execution_context()` /
    `OutputContext.step_context`): the same data-version records Dagster itself uses to compute
    staleness. For a partitioned upstream, `data_version` is Dagster's hash over the partitions
    read and `partitions` lists each one's own data version and run.
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
