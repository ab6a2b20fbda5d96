"""remedial_trajectories materialized by Dagster on a small graph: random-click rollouts of a few
tasks fail, the solver teacher repairs them, the rows pass the step-sample schema check; a policy
teacher (the bundled tiny model, configured as the `teacher` resource) is run and its failures
counted; in the structured-reasoning style the repaired rows carry the four parts and their annotations."""

import dagster as dg
import polars as pl
import pytest

from assets.remedial import remedial_trajectories
from ops.actions import parse_structured
from ops.data.attempt_store import collect_tables
from ops.remedial.corrective_teaching import REASONS
from ops.judging.critic.programmatic import ProgrammaticCritic
from ops.curriculum import task_specs
from ops.curriculum.model import CurriculumTask
from ops.judging.reward_columns import ANNOTATION_COLUMNS
from ops.rollout.engine import RolloutConfig, run_rollouts
from pipelines.checks import schema_check
from pipelines.resources import resources_for
from resources.environment import SimulatorResource
from resources.experiment import experiment_partitions, register_experiment
from resources.policy import PolicyResource
from resources.storage import StorageLocation
from tests.support.curriculum import template_task_rows
from tests.support.scripted_policy import RandomClickPolicy, StructuredClickPolicy
from training.base.bundled import BUNDLED_DIR

TEMPLATES = ("settings.connect_wifi", "contacts.favorite")


@dg.asset(partitions_def=experiment_partitions, name="curriculum_tasks")
def stub_curriculum() -> pl.DataFrame:
    """Two template tasks and a navigation task, as the curriculum mines them."""
    rows = template_task_rows(TEMPLATES)
    rows.append(CurriculumTask(task_id="nav:bluetooth", app="settings", instruction="Open the Bluetooth settings.",
                               step_budget=6, core_functionality="bluetooth", variation_type="simplification",
                               prerequisites=None, source_trace_id="t", verifiable=True,
                               goal_screen="bluetooth").to_row())
    return pl.DataFrame(rows)


@dg.multi_asset(outs={"rollout_attempts": dg.AssetOut(), "rollout_steps": dg.AssetOut(),
                      "critic_feedback": dg.AssetOut()}, partitions_def=experiment_partitions)
def stub_rollouts(context: dg.AssetExecutionContext, curriculum_tasks: pl.DataFrame, simulator: SimulatorResource,
                  storage: StorageLocation):
    """Random clicks, two hint-guided attempts per task, judged by the programmatic critic."""
    tasks = task_specs(curriculum_tasks, True, None)
    store = storage.attempt_store(context.partition_key)
    run_rollouts(tasks, simulator.make_env, RandomClickPolicy(seed=5), ProgrammaticCritic(simulator.world_seed), store,
                 RolloutConfig(attempts=2))
    return collect_tables(store, "random", tasks)


@dg.multi_asset(outs={"rollout_attempts": dg.AssetOut(), "rollout_steps": dg.AssetOut(),
                      "critic_feedback": dg.AssetOut()}, partitions_def=experiment_partitions)
def structured_rollouts(context: dg.AssetExecutionContext, curriculum_tasks: pl.DataFrame,
                        simulator: SimulatorResource, storage: StorageLocation):
    """Structured-reasoning random clicks (every fifth output invalid), two attempts per task."""
    tasks = task_specs(curriculum_tasks, True, None)
    store = storage.attempt_store(context.partition_key)
    run_rollouts(tasks, simulator.make_env, StructuredClickPolicy(seed=3, invalid_every=5),
                 ProgrammaticCritic(simulator.world_seed), store, RolloutConfig(attempts=2))
    return collect_tables(store, "structured", tasks)


def _materialize(tmp_path, monkeypatch, experiment: str, config: dict, rollouts=stub_rollouts, **resources):
    monkeypatch.setenv("MOBILEFORGE_STORAGE_ROOT", str(tmp_path / "storage"))
    instance = dg.DagsterInstance.ephemeral()
    register_experiment(instance, experiment)
    check = schema_check(remedial_trajectories, "training_samples")
    result = dg.materialize([stub_curriculum, rollouts, remedial_trajectories, check], instance=instance,
                            resources={**resources_for("local"), **resources}, partition_key=experiment,
                            run_config={"ops": {"remedial_trajectories": {"config": {"enabled": True, **config}}}})
    [event] = [e for e in result.get_asset_materialization_events()
               if e.asset_key == dg.AssetKey("remedial_trajectories")]
    [evaluation] = result.get_asset_check_evaluations()
    return result, event.materialization.metadata, evaluation


def test_the_solver_repairs_failed_rollouts_into_step_samples(tmp_path, monkeypatch):
    result, metadata, check = _materialize(tmp_path, monkeypatch, "teach", {})
    rows = result.output_for_node("remedial_trajectories")
    attempts = result.output_for_node("stub_rollouts", "rollout_attempts")
    failures = attempts.filter(pl.col("critic_decision") == 0).height
    assert check.passed and rows.height > 0
    seen, verified = metadata["failures_seen"].value, metadata["verified"].value
    assert seen == failures > 0 and verified > 0
    assert verified + sum(metadata["failures_by_reason"].value.values()) == seen  # every failure accounted for
    assert set(metadata["failures_by_reason"].value) <= set(REASONS)
    assert metadata["yield"].value == pytest.approx(verified / seen, rel=0.01)
    # the repaired attempts are failed ones, and every one of them ends in "finish the task"
    failed = set(attempts.filter(pl.col("critic_decision") == 0).select("task_id", "attempt").iter_rows())
    assert set(rows.select("task_id", "attempt").iter_rows()) <= failed
    last = rows.group_by("task_id", "attempt", "has_hint").agg(pl.col("target_action").sort_by("step").last())
    assert last["target_action"].str.contains('"terminate"').all()
    assert rows.filter(~pl.col("has_hint") & (pl.col("attempt") > 1)).height > 0  # hint-free copies


def test_a_policy_teacher_is_run_and_its_failures_counted(tmp_path, monkeypatch):
    teacher = PolicyResource(kind="local", prompt_style="elements", checkpoint=str(BUNDLED_DIR), max_new_tokens=48)
    _, metadata, check = _materialize(tmp_path, monkeypatch, "weak", {"teacher": "policy", "max_attempts": 2},
                                      teacher=teacher)
    assert check.passed and metadata["teacher"].value.startswith("policy:teacher:")
    reasons = metadata["failures_by_reason"].value
    assert reasons["beyond_max_attempts"] == metadata["failures_seen"].value - 2
    assert metadata["verified"].value + sum(reasons.values()) == metadata["failures_seen"].value
    assert set(reasons) <= set(REASONS)


def test_structured_failures_are_repaired_into_rows_with_the_four_parts_and_their_annotations(tmp_path, monkeypatch):
    result, metadata, check = _materialize(tmp_path, monkeypatch, "teach-structured", {}, structured_rollouts,
                                           policy=PolicyResource(prompt_style="mobilewizard"),
                                           simulator=SimulatorResource(screen_width=270, screen_height=600))
    rows = result.output_for_node("remedial_trajectories")
    seen, verified, reasons = metadata["failures_seen"].value, metadata["verified"].value, \
        metadata["failures_by_reason"].value
    print(f"structured remedial yield: {verified} of {seen}; {reasons}; {rows.height} rows")
    # (the favourite task's solver types into a field by its point, which the structured format cannot write:
    # those grafts stay `unsayable`, counted)
    assert check.passed and seen > 0 and verified > 0 and set(reasons) <= set(REASONS)
    assert verified + sum(reasons.values()) == seen
    # every row is annotated by the verifier's twin, and its response (the teacher's steps written with
    # annotated parts, the agent's kept steps as it wrote them) reads back with the strict parser
    assert metadata["reasoning_annotator"].value == "programmatic"
    assert metadata["annotation_failures"].value == {}
    assert rows.select(pl.all_horizontal(pl.col(c).is_not_null() & (pl.col(c).str.strip_chars() != "")
                                         for c in ANNOTATION_COLUMNS).all()).item()
    for response in rows["target_response"]:
        parsed = parse_structured(response)
        assert parsed.ok and all(t.strip() for t in parsed.reasoning.texts()), response


def test_off_by_default_it_makes_no_rows_and_says_so(tmp_path, monkeypatch):
    _, metadata, check = _materialize(tmp_path, monkeypatch, "off", {"enabled": False})
    assert metadata["rows"].value == 0 and metadata["skipped"].value == "remedial_trajectories.enabled is false"
    assert check.passed
