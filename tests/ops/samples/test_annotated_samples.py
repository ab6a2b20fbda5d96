"""Reasoning targets of step samples: each kept step annotated once (hint-free copies share it), its
target action handed to the annotator, and steps that cannot be annotated counted by reason."""

import polars as pl

from ops.actions import ReasoningParts
from ops.samples.annotated_samples import annotate_samples
from ops.data.attempt_store import ParquetAttemptStore, collect_tables
from ops.judging.critic.programmatic import ProgrammaticCritic
from ops.judging.critic.reasoning_annotation import AnnotationFailure
from ops.samples.filtering import FilterConfig
from ops.judging.reward_columns import ANNOTATION_COLUMNS
from ops.rollout.engine import RolloutConfig, run_rollouts
from ops.data.schemas import validate
from ops.samples.step_samples import build_step_samples
from tests.ops.rollout.test_rollout import sim_tasks, small_env
from tests.support.scripted_policy import StructuredClickPolicy


class RecordingAnnotator:
    """Annotates a step with its own key; fails the steps of `failing` tasks."""

    name = "recording"

    def __init__(self, failing: str = "") -> None:
        self.failing, self.items = failing, []

    def annotate(self, items):
        self.items += items
        return [AnnotationFailure("refused", "scripted") if i.task.task_id == self.failing else
                ReasoningParts(f"{i.task.task_id}", f"step {i.step.step}", i.action.type.value, "guide")
                for i in items]


def test_each_kept_step_is_annotated_once_and_failures_are_counted(tmp_path):
    store = ParquetAttemptStore.from_uri(str(tmp_path))
    tasks = sim_tasks()
    run_rollouts(tasks, small_env, StructuredClickPolicy(seed=4, stop_prob=0.05, invalid_every=5), ProgrammaticCritic(),
                 store, RolloutConfig(attempts=2))
    attempts, steps, feedback = collect_tables(store, "structured", tasks)
    samples, _ = build_step_samples(attempts, steps, feedback, FilterConfig(reasonable_only=False),
                                    hint_free_copies=True)
    assert samples.select(pl.col(ANNOTATION_COLUMNS).is_null().all()).row(0) == (True,) * 4
    # each sample (a hint-free copy too) carries its step's verified outcome as the rollout stored it
    stored = samples.join(steps.select("task_id", "attempt", "step", stored="verified_outcome"),
                          on=["task_id", "attempt", "step"])
    assert stored.height == samples.height and stored["verified_outcome"].is_not_null().any()
    assert stored.select(pl.col("verified_outcome").eq_missing(pl.col("stored")).all()).item()
    known = {t.task_id: t for t in tasks[1:]}  # the first task is not among the tasks given
    annotator = RecordingAnnotator(failing=tasks[1].task_id)
    annotated, report = annotate_samples(samples, attempts, steps, feedback, known, annotator)
    assert annotated.drop(ANNOTATION_COLUMNS).equals(samples.drop(ANNOTATION_COLUMNS)) and validate(
        annotated, "training_samples") == []
    distinct = samples.select("task_id", "attempt", "step").unique()
    assert report.steps == distinct.height and len(annotator.items) == distinct.filter(
        pl.col("task_id") != tasks[0].task_id).height
    by_task = distinct.group_by("task_id").len()
    count = dict(by_task.iter_rows())
    assert report.failures == {"task_unknown": count[tasks[0].task_id], "refused": count[tasks[1].task_id]}
    assert report.annotated == count[tasks[2].task_id]
    done = annotated.filter(pl.col("target_planning").is_not_null())
    assert set(done["task_id"]) == {tasks[2].task_id}
    assert (done["target_screen_analysis"] == "step " + done["step"].cast(pl.String)).all()
    # a hint-free copy carries its step's annotation
    shared = annotated.group_by("task_id", "attempt", "step").agg(pl.col("target_planning").n_unique(), pl.len())
    assert (shared["target_planning"] == 1).all()
