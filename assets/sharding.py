"""One asset's work split into shard steps that Dagster runs side by side (processes of the run, pods of
the k8s executor, tasks of the ECS executor) and one step merging what they did into the asset's outputs:
a graph-backed asset (Dagster's `graph_multi_asset`) whose graph fans out to a fixed number of shard ops
and back in to a merge op. The number is the deployment's `shards` (resources.deployment), known when the
code location loads, so `mobileforge deploy k8s` renders every step a cluster will run.

Every op takes the asset's own Config, mapped from the asset's config by a `ConfigMapping`: run config and
`--set asset.field=` keep their shape. Shard ops hold the devices pool and its pod label, as the single
step they replace does; the merge holds nothing. What a shard hands the merge goes through
`resources.step_outputs`, so a run re-executed from a failed shard reads the finished shards' parts from
the run that made them.
"""

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import dagster as dg

from assets.placement import pool_tags
from resources.deployment import DEVICES
from resources.step_outputs import STEP_OUTPUTS

Item = TypeVar("Item")

# (context, config, index, count, the asset's inputs by name) -> the shard's part, handed to the merge
ShardWork = Callable[[dg.OpExecutionContext, Any, int, int, dict[str, Any]], Any]
# (context, config, the parts in shard order, the asset's inputs by name) -> one dg.Output per asset out
MergeWork = Callable[[dg.OpExecutionContext, Any, list[Any], dict[str, Any]], Any]


def shard_of(items: Sequence[Item], index: int, count: int) -> list[Item]:
    """Shard `index` of `count`: every count-th item from the index-th (neighbours, often alike in cost,
    land in different shards)."""
    return list(items[index::count])


def sharded_asset(*, name: str, outs: dict[str, dg.AssetOut], ins: dict[str, dg.AssetIn],
                  config_class: type[dg.Config], resource_keys: set[str], shards: int,
                  shard_work: ShardWork, merge_work: MergeWork, partitions_def: dg.PartitionsDefinition,
                  group_name: str) -> dg.AssetsDefinition:
    """The graph-backed asset `name`: `shards` ops `<name>_shard_<i>` running `shard_work`, then
    `<name>_merge` running `merge_work` into `outs` (the same keys, descriptions and code versions as the
    single-step asset, so lineage, checks and staleness carry over)."""
    if shards < 2:
        raise ValueError(f"{name}: {shards} shard(s); a sharded asset has at least 2 (1 is the single step)")
    inputs = {input_name: dg.In(dagster_type=asset_in.dagster_type) if isinstance(asset_in.dagster_type, dg.DagsterType)
              else dg.In() for input_name, asset_in in ins.items()}

    def shard_op(index: int) -> dg.OpDefinition:
        @dg.op(name=f"{name}_shard_{index}", ins=inputs, out=dg.Out(io_manager_key=STEP_OUTPUTS),
               required_resource_keys=resource_keys, pool=DEVICES, tags=pool_tags(DEVICES),
               description=f"Shard {index + 1} of {shards} of {name}'s work; resumes its own staged attempts.")
        def shard(context: dg.OpExecutionContext, config: config_class, **values):  # type: ignore[valid-type]
            return shard_work(context, config, index, shards, values)
        return shard

    @dg.op(name=f"{name}_merge", ins={**inputs, "parts": dg.In()}, out={out: dg.Out() for out in outs},
           required_resource_keys=resource_keys, description=f"{name}'s outputs from its {shards} shards.")
    def merge(context: dg.OpExecutionContext, config: config_class, parts: list, **values):  # type: ignore[valid-type]
        return merge_work(context, config, parts, values)

    shard_ops = [shard_op(index) for index in range(shards)]
    op_names = [op.name for op in (*shard_ops, merge)]

    def every_op(values: dict[str, Any]) -> dict[str, Any]:
        return {op_name: {"config": values} for op_name in op_names}

    @dg.graph_multi_asset(name=name, outs=outs, ins=ins, partitions_def=partitions_def, group_name=group_name,
                          config=dg.ConfigMapping(config_fn=every_op, config_schema=config_class.to_config_schema()))
    def graph(**values):
        parts = [op(**values) for op in shard_ops]
        merged = merge(parts=parts, **values)
        return {outs_name: merged if len(outs) == 1 else getattr(merged, outs_name) for outs_name in outs}

    return graph
