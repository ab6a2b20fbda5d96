"""curriculum_tasks: explored trajectories turned into executable, grounded, deduplicated tasks."""

import dagster as dg
import polars as pl
from pydantic import Field

from assets.metadata import counts, md_table, tidy
from assets.placement import pool_tags
from ops.curriculum import LLMCurriculumConfig, coverage, deduplicate, mine_with_llm
from ops.exploration.explorer import trajectories, transitions_from_rows
from ops.data.schemas import from_rows
from ops.config_bounds import MAX_ATTEMPTS, MAX_COUNT
from resources.experiment import APPS_OF_EXPERIMENT, experiment_partitions
from resources.deployment import LLM_ENDPOINT
from resources.environment import SimulatorResource
from resources.llm import LLMResource


class CurriculumAssetConfig(dg.Config):
    source: str = Field(default="auto", pattern="^(auto|offline|llm|both)$",
                        description="'offline': simulator templates + navigation, toggle and entry-action variants "
                                    "grounded in the traces (simulator only); "
                                    "'llm': MobileForge prompt G.1 per trajectory, by the curriculum LLM; 'both': "
                                    "offline first, then LLM; 'auto': offline on the simulator, llm elsewhere.")
    variants_per_template: int = Field(default=2, ge=1, le=MAX_ATTEMPTS, description="Parameter variants per grounded template.")
    dedup_threshold: float = Field(default=0.8, gt=0, le=1, description="Instruction similarity above which a task is a duplicate.")
    entry_actions: bool = Field(default=True, description="Offline path: mine entry-action variants "
                                "('open <entry> and tap <button>') from data-changing presses.")
    max_llm_trajectories: int | None = Field(default=None, ge=1, le=MAX_COUNT, description="LLM path: mine only the first N trajectories.")


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
    source = config.source if config.source != "auto" else "offline" if simulator.judge_name else "llm"
    if source in ("offline", "both"):
        if not simulator.judge_name:
            raise ValueError("curriculum_tasks.source: 'offline' mines the simulator's templates, which devices do "
                             "not have; use 'llm' or 'auto' (the curriculum LLM mines the traces)")
        from ops.curriculum import SimCurriculumConfig, mine_simulator_tasks

        result = mine_simulator_tasks(paths, SimCurriculumConfig(
            world_seed=simulator.world_seed, screen_size=(simulator.screen_width, simulator.screen_height),
            variants_per_template=config.variants_per_template, entry_actions=config.entry_actions))
        tasks += result.tasks
        notes["offline"] = dg.MetadataValue.json(result.summary())
    if source in ("llm", "both"):
        mined = paths[: config.max_llm_trajectories] if config.max_llm_trajectories else paths
        result = mine_with_llm(llm.get_client(), mined, LLMCurriculumConfig(), existing=tasks)
        tasks += result.tasks
        notes["llm"] = dg.MetadataValue.json(result.summary())
    deduped = deduplicate(tasks, threshold=config.dedup_threshold)
    df = from_rows([t.to_row() for t in deduped.kept], "curriculum_tasks")
    cov = coverage(deduped.kept)
    context.add_output_metadata(tidy({
        "source": source, **notes,
        "trajectories": len(paths), "tasks": df.height, "duplicates_dropped": len(deduped.dropped),
        "verifiable": int(df["verifiable"].sum()) if df.height else 0,
        "by_app": counts(df["app"]), "by_variation": counts(df["variation_type"]),
        "coverage": md_table(cov.columns, cov.rows()),
        "sample": md_table(["task", "instruction", "budget", "template"],
                           [(r["task_id"], r["instruction"], r["step_budget"], r["template_id"] or "")
                            for r in df.head(8).iter_rows(named=True)]),
    }))
    return df
