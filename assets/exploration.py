"""exploration_traces: function-aware depth-first exploration of each target app."""

import json

import dagster as dg
import polars as pl
from pydantic import Field

from assets.metadata import counts, md_table, thumbnail_md, tidy
from assets.placement import pool_tags
from ops.exploration.explorer import ExplorationConfig, Transition, explore_app, offline_goals, trajectories
from ops.exploration.goals import llm_goals
from ops.data.schemas import from_rows
from ops.config_bounds import MAX_ATTEMPTS, MAX_COUNT, MAX_PARALLEL
from resources.deployment import DEVICES
from resources.experiment import experiment_app_partitions
from resources.environment import SimulatorResource
from resources.llm import LLMResource

# The apps are data: the environment names them at run time (`resources.experiment.sync_app_partitions`)
exploration_partitions = experiment_app_partitions(None)


class ExplorationAssetConfig(dg.Config):
    max_depth: int = Field(default=4, ge=1, le=MAX_ATTEMPTS, description="Actions from the app's first screen.")
    max_transitions: int = Field(default=60, ge=1, le=MAX_COUNT, description="Transitions recorded per app.")
    max_branches: int = Field(default=8, ge=1, le=MAX_PARALLEL, description="Elements tried per screen state.")
    goal_source: str = Field(default="offline", pattern="^(offline|llm)$",
                             description="'offline': one goal per declared screen; 'llm': goals from the critic LLM.")


def transition_rows(app: str, transitions: list[Transition]) -> list[dict]:
    return [{
        "app": app,
        "trace_id": t.transition_id.split(".")[0],
        "transition_id": t.transition_id,
        "parent_id": t.parent_id,
        "step": t.depth,
        "goal": t.goal,
        "before_screen_id": t.before.screen,
        "after_screen_id": t.after.screen,
        "before_screenshot_png": t.before.screenshot_png,
        "after_screenshot_png": t.after.screenshot_png,
        "before_a11y": json.dumps(t.before.a11y),
        "after_a11y": json.dumps(t.after.a11y),
        "action": t.action.to_json(),
        "target_element": json.dumps(t.target_element) if t.target_element else None,
        "summary": t.summary,
    } for t in transitions]


@dg.asset(partitions_def=exploration_partitions, code_version="exploration-1", group_name="discovery",
          pool=DEVICES, op_tags=pool_tags(DEVICES),
          description="One row per explored transition of one app: before/after screens, action, target element, "
                      "one-line summary.")
def exploration_traces(context: dg.AssetExecutionContext, config: ExplorationAssetConfig,
                       simulator: SimulatorResource, llm: LLMResource) -> pl.DataFrame:
    app = context.partition_key.keys_by_dimension["app"]
    goals = offline_goals if config.goal_source == "offline" else llm_goals(llm.get_client(), simulator.packages())
    transitions = explore_app(simulator.make_env(), app,
                              ExplorationConfig(config.max_depth, config.max_transitions, config.max_branches),
                              goals)
    df = from_rows(transition_rows(app, transitions), "exploration_transitions")
    paths = trajectories(transitions)
    context.add_output_metadata(tidy({
        "transitions": len(transitions),
        "trajectories": len(paths),
        "screens_reached": len({t.after.screen for t in transitions} | {t.before.screen for t in transitions}),
        "actions": counts(t.action.type.value for t in transitions),
        "sample": md_table(["before", "after", "summary"],
                           [(thumbnail_md(t.before.screenshot_png), thumbnail_md(t.after.screenshot_png), t.summary)
                            for t in transitions[:6]]),
    }))
    return df
