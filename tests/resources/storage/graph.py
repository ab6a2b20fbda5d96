"""A two-stage asset graph shaped like the real one, used by the storage tests.

`exploration_transitions` is partitioned by experiment × app and emits schema-valid rows;
`curriculum_tasks` is partitioned by experiment and reads every app of its experiment;
`task_index` is a JSON (dict) output.
"""


import io
import json

import dagster as dg
import polars as pl
from PIL import Image

from ops.data.schemas import from_rows
from pipelines.checks import schema_check
from resources.experiment import (
    APPS_OF_EXPERIMENT,
    experiment_app_partitions,
    experiment_of,
    experiment_partitions,
)

APPS = ["notes", "clock"]
experiment_by_app = experiment_app_partitions(APPS)


def tiny_png(shade: int) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (8, 16), (shade, shade, shade)).save(buf, format="PNG")
    return buf.getvalue()


class ExploreConfig(dg.Config):
    steps: int = 2


class CurriculumConfig(dg.Config):
    step_budget: int = 5
    variation_type: str = "simplification"


@dg.asset(partitions_def=experiment_by_app, code_version="explore-1")
def exploration_transitions(context: dg.AssetExecutionContext,
                            config: ExploreConfig) -> pl.DataFrame:
    app = context.partition_key.keys_by_dimension["app"]
    rows = [{
        "app": app, "trace_id": f"{app}-t0", "transition_id": f"{app}-t0.{i}",
        "parent_id": f"{app}-t0.{i - 1}" if i else None, "step": i, "goal": f"open {app} settings",
        "before_screen_id": f"s{i}", "after_screen_id": f"s{i + 1}",
        "before_screenshot_png": tiny_png(i), "after_screenshot_png": tiny_png(i + 1),
        "before_a11y": json.dumps({"nodes": [i]}), "after_a11y": json.dumps({"nodes": [i + 1]}),
        "action": json.dumps({"type": "click", "args": {"element": 0}}),
        "target_element": None, "summary": f"step {i}",
    } for i in range(config.steps)]
    return from_rows(rows, "exploration_transitions")


@dg.asset(partitions_def=experiment_partitions, code_version="curriculum-1",
          ins={"exploration_transitions": dg.AssetIn(partition_mapping=APPS_OF_EXPERIMENT)})
def curriculum_tasks(context: dg.AssetExecutionContext, config: CurriculumConfig,
                     exploration_transitions: pl.DataFrame) -> pl.DataFrame:
    traces = exploration_transitions.select("app", "trace_id").unique().sort("app")
    rows = [{
        "task_id": f"{experiment_of(context)}-{r['app']}", "app": r["app"],
        "instruction": f"Open the settings of {r['app']}", "step_budget": config.step_budget,
        "core_functionality": "settings", "variation_type": config.variation_type,
        "prerequisites": None, "source_trace_id": r["trace_id"], "verifiable": False,
        "template_id": None, "template_seed": None, "template_params": None, "goal_screen": None,
        "goal_state": None,
    } for r in traces.iter_rows(named=True)]
    return from_rows(rows, "curriculum_tasks")


@dg.asset(partitions_def=experiment_partitions, code_version="index-1")
def task_index(context: dg.AssetExecutionContext, curriculum_tasks: pl.DataFrame) -> dict:
    return {"experiment": experiment_of(context),
            "task_ids": curriculum_tasks.get_column("task_id").to_list()}


curriculum_tasks_schema = schema_check(curriculum_tasks, "curriculum_tasks")
ALL_ASSETS = [exploration_transitions, curriculum_tasks, task_index]


def materialize_experiment(instance: dg.DagsterInstance, resources: dict, experiment: str,
                           steps: int = 2, step_budget: int = 5,
                           variation_type: str = "simplification") -> dg.ExecuteInProcessResult:
    """Run the whole graph for one experiment (every app, then the experiment-level assets)."""
    for app in APPS:
        dg.materialize(
            ALL_ASSETS, selection=[exploration_transitions], instance=instance,
            resources=resources,
            partition_key=dg.MultiPartitionKey({"experiment": experiment, "app": app}),
            run_config={"ops": {"exploration_transitions": {"config": {"steps": steps}}}})
    return dg.materialize(
        [*ALL_ASSETS, curriculum_tasks_schema],
        selection=dg.AssetSelection.assets(curriculum_tasks, task_index)
        | dg.AssetSelection.checks(curriculum_tasks_schema),
        instance=instance, resources=resources, partition_key=experiment,
        run_config={"ops": {"curriculum_tasks": {"config": {
            "step_budget": step_budget, "variation_type": variation_type}}}})
