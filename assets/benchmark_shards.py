"""benchmark_results as shard steps side by side (`assets.sharding`): shard i evaluates every policy on every
`shards`-th held-out task from the i-th, through the single step's own functions (`assets.benchmark`),
staging its episodes in the same per-policy stores, so a rerun of a shard resumes its own; the merge step
puts the shards' episodes together in the single step's order and computes the same Pass@k tables.
AndroidWorld's suite drives one emulator: its first shard runs it whole, the others nothing."""

from typing import Any

import dagster as dg
import polars as pl

from assets.benchmark import (
    BENCHMARK_INS,
    BENCHMARK_OUT,
    BenchmarkConfig,
    BenchmarkDone,
    BenchmarkPlan,
    benchmark_output,
    benchmark_results,
    evaluate_benchmark,
    plan_benchmark,
)
from assets.benchmark_workers import Evaluated
from assets.sharding import shard_of, sharded_asset
from resources.experiment import experiment_of, experiment_partitions

RESOURCES = {"simulator", "policy", "llm", "storage", "artifact_store"}


def _plan(context: dg.OpExecutionContext, config: BenchmarkConfig, inputs: dict[str, Any],
          warn) -> BenchmarkPlan:
    return plan_benchmark(experiment_of(context), config, inputs, context.resources.simulator,
                          context.resources.llm, warn)


def evaluate_shard(context: dg.OpExecutionContext, config: BenchmarkConfig, index: int, count: int,
                   inputs: dict[str, Any]) -> BenchmarkDone:
    plan = _plan(context, config, inputs, context.log.debug)  # the merge step warns once
    if config.suite == "androidworld" and index > 0:
        context.log.info(f"benchmark shard {index + 1}/{count}: AndroidWorld's suite runs whole in shard 1")
        return BenchmarkDone({}, 0)
    tasks = shard_of(plan.tasks, index, count)
    context.log.info(f"benchmark shard {index + 1}/{count}: {len(tasks)} of {len(plan.tasks)} tasks")
    resources = context.resources
    return evaluate_benchmark(plan, tasks, config, resources.simulator, resources.policy, resources.storage,
                              resources.artifact_store, context.log.info, context.log.warning)


def merged(plan: BenchmarkPlan, parts: list[BenchmarkDone]) -> BenchmarkDone:
    """Each policy's episodes from every shard, in the plan's task order (as one step stores them), with its
    episode counts and costs added up over the shards."""
    position = {task.task_id: i for i, (task, _) in enumerate(plan.tasks)}
    evaluated = {}
    for name in dict.fromkeys(name for part in parts for name in part.evaluated):
        pieces = [part.evaluated[name] for part in parts if name in part.evaluated]
        results = (pl.concat([piece.results for piece in pieces])
                   .sort(pl.col("task_id").replace_strict(position, return_dtype=pl.Int64), "attempt",
                         maintain_order=True))
        figures = dict.fromkeys(key for piece in pieces for key in piece.cost)
        evaluated[name] = Evaluated(results, sum(p.attempts_run for p in pieces),
                                    sum(p.attempts_resumed for p in pieces),
                                    {key: round(sum(p.cost.get(key, 0) for p in pieces), 1) for key in figures})
    return BenchmarkDone(evaluated, sum(part.first_apps_searched for part in parts))


def merge_benchmark(context: dg.OpExecutionContext, config: BenchmarkConfig, parts: list[BenchmarkDone],
                    inputs: dict[str, Any]) -> dg.Output:
    plan = _plan(context, config, inputs, context.log.warning)
    return benchmark_output(plan, merged(plan, parts), config)


def benchmark_for(shards: int) -> dg.AssetsDefinition:
    """The benchmark as one step (`shards` 1: `assets.benchmark.benchmark_results`) or as `shards` steps and a
    merge."""
    if shards == 1:
        return benchmark_results
    return sharded_asset(name="benchmark_results", outs={"benchmark_results": BENCHMARK_OUT}, ins=BENCHMARK_INS,
                         config_class=BenchmarkConfig, resource_keys=RESOURCES, shards=shards,
                         shard_work=evaluate_shard, merge_work=merge_benchmark,
                         partitions_def=experiment_partitions, group_name="evaluation")
