"""curriculum_tasks: explored trajectories turned into executable, grounded, deduplicated tasks."""

import dagster as dg
import polars as pl
from pydantic import Field

from assets.metadata import counts, md_table, tidy
from assets.placement import pool_tags
from ops.curriculum import (
    LLMCurriculumConfig,
    SimCurriculumConfig,
    coverage,
    deduplicate,
    mine_simulator_tasks,
    mine_with_llm,
)
from ops.exploration.explorer import trajectories, transitions_from_rows
from ops.data.schemas import from_rows
from resources.deployment import LLM_ENDPOINT
from resources.experiment import APPS_OF_EXPERIMENT, experiment_partitions, lineage_metadata
from resources.environment import SimulatorResource
from resources.llm import LLMResource


class CurriculumAssetConfig(dg.Config):
    source: str = Field(default="offline", pattern="^(offline|llm|both)$",
                        description="'offline': simulator templates + navigation, toggle and entry-action variants "
                                    "grounded in the traces; "
                                    "'llm': MobileForge prompt G.1 per trajectory; 'both': offline first, then LLM.")
    variants_per_template: int = Field(default=2, ge=1, description="Parameter variants per grounded template.")
    dedup_threshold: float = Field(default=0.8, gt=0, le=1, description="Instruction similarity above which a task is a duplicate.")
    entry_actions: bool = Field(default=True, description="Offline path: mine entry-action variants "
                                "('open <entry> and tap <button>') from data-changing presses.")
    max_llm_trajectories: int | None = Field(default=None, ge=1, description="LLM path: mine only the first N trajectories.")


@dg.asset(partitions_def=experiment_partitions, group_name="discovery", code_version="curriculum-3",
          pool=LLM_ENDPOINT, op_tags=pool_tags(LLM_ENDPOINT),
          automation_condition=dg.AutomationCondition.eager(),
          ins={"exploration_traces": dg.AssetIn(partition_mapping=APPS_OF_EXPERIMENT)},
          description="One row per executable task x = (instruction, budget, functionality, variation, "
                      "prerequisites), linked to the explored trajectory it came from.")
def curriculum_tasks(context: dg.AssetExecutionContext, config: CurriculumAssetConfig,
                     exploration_traces: pl.DataFrame, simulator: SimulatorResource,
                     llm: LLMResource) -> pl.DataFrame:
    paths = trajectories(transitions_from_rows(list(exploration_traces.iter_rows(named=True))))
    tasks, notes = [], {}
    if config.source in ("offline", "both"):
        result = mine_simulator_tasks(paths, SimCurriculumConfig(
            world_seed=simulator.world_seed, screen_size=(simulator.screen_width, simulator.screen_height),
            variants_per_template=config.variants_per_template, entry_actions=config.entry_actions))
        tasks += result.tasks
        notes["offline"] = dg.MetadataValue.json(result.summary())
    if config.source in ("llm", "both"):
        mined = paths[: config.max_llm_trajectories] if config.max_llm_trajectories else paths
        result = mine_with_llm(llm.get_client(), mined, LLMCurriculumConfig(), existing=tasks)
        tasks += result.tasks
        notes["llm"] = dg.MetadataValue.json(result.summary())
    deduped = deduplicate(tasks, threshold=config.dedup_threshold)
    df = from_rows([t.to_row() for t in deduped.kept], "curriculum_tasks")
    cov = coverage(deduped.kept)
    context.add_output_metadata(tidy({
        **notes,
        "trajectories": len(paths), "tasks": df.height, "duplicates_dropped": len(deduped.dropped),
        "verifiable": int(df["verifiable"].sum()) if df.height else 0,
        "by_app": counts(df["app"]), "by_variation": counts(df["variation_type"]),
        "coverage": md_table(cov.columns, cov.rows()),
        "sample": md_table(["task", "instruction", "budget", "template"],
                           [(r["task_id"], r["instruction"], r["step_budget"], r["template_id"] or "")
                            for r in df.head(8).iter_rows(named=True)]),
        **lineage_metadata(context, config),
    }))
    return df
