"""rollout_attempts + rollout_steps + critic_feedback as shard steps side by side (`assets.sharding`): shard i
rolls out every `shards`-th curriculum task from the i-th, whole (a task's K attempts stay in one shard,
since the hints of attempts 1..k-1 go into attempt k), through the single step's own functions
(`assets.rollouts`), staging its attempts in the same store, so a rerun of a shard resumes its own; the
merge step reads every staged attempt into the same three tables and metadata as the single step."""

from typing import Any

import dagster as dg

from assets.rollouts import (
    ROLLOUT_OUTS,
    RolloutAssetConfig,
    RolloutDone,
    RolloutPlan,
    merged,
    plan_rollouts,
    roll_out_tasks,
    rollout_outputs,
    rollouts,
)
from assets.methods import asset_in
from assets.sharding import shard_of, sharded_asset
from resources.experiment import experiment_of, experiment_partitions

INPUTS = ("curriculum_tasks", "base_policy")
RESOURCES = {"simulator", "policy", "llm", "storage", "artifact_store"}


def _plan(context: dg.OpExecutionContext, config: RolloutAssetConfig, inputs: dict[str, Any]) -> RolloutPlan:
    resources = context.resources
    return plan_rollouts(experiment_of(context), config, inputs["curriculum_tasks"], resources.simulator,
                         resources.policy, resources.llm, resources.storage)


def roll_out_shard(context: dg.OpExecutionContext, config: RolloutAssetConfig, index: int, count: int,
                   inputs: dict[str, Any]) -> RolloutDone:
    plan = _plan(context, config, inputs)
    tasks = shard_of(plan.tasks, index, count)
    context.log.info(f"rollouts shard {index + 1}/{count}: {len(tasks)} of {len(plan.tasks)} tasks")
    resources = context.resources
    return roll_out_tasks(plan, tasks, f"rollout attempts, shard {index + 1}/{count}", config.workers,
                          inputs["base_policy"], resources.simulator, resources.policy, resources.artifact_store,
                          context.log.info)


def merge_rollouts(context: dg.OpExecutionContext, config: RolloutAssetConfig, parts: list[RolloutDone],
                   inputs: dict[str, Any]):
    return rollout_outputs(_plan(context, config, inputs), merged(parts), context.resources.policy.prompt_style,
                           context.log.info)


def rollouts_for(shards: int) -> dg.AssetsDefinition:
    """The rollouts asset as one step (`shards` 1: `assets.rollouts.rollouts`) or as `shards` steps and a merge."""
    if shards == 1:
        return rollouts
    return sharded_asset(name="rollouts", outs=ROLLOUT_OUTS, ins={name: asset_in(name) for name in INPUTS},
                         config_class=RolloutAssetConfig, resource_keys=RESOURCES, shards=shards,
                         shard_work=roll_out_shard, merge_work=merge_rollouts, partitions_def=experiment_partitions,
                         group_name="interaction")
