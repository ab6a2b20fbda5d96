"""Reasoning targets for step samples (MobileWizard App. C.1): every kept step of a step dataset is
annotated once by a `ReasoningAnnotator` (a hint-free copy shares its step's annotation), and the
four parts go into the `target_<part>` columns that the reasoning reward reads (`ops.judging.reward_columns.
ANNOTATION_COLUMNS`). A step that cannot be annotated keeps them empty, counted by reason.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field

import polars as pl

from ops.actions import Action, ReasoningParts
from ops.data.attempt_store import step_record
from ops.judging.critic.reasoning_annotation import Annotation, AnnotationFailure, ReasoningAnnotator, StepToAnnotate
from ops.agent.episode import StepLabel, StepRecord, TaskSpec
from ops.judging.reward_columns import ANNOTATION_COLUMNS

KEY = ("task_id", "attempt", "step")
SHOWN_FAILURES = 10  # failures kept with their detail for the report


@dataclass
class AnnotationReport:
    """What one annotation pass did: distinct steps asked for, annotated, and failures by reason
    (the first few with their detail)."""

    annotator: str
    steps: int = 0
    annotated: int = 0
    failures: Counter[str] = field(default_factory=Counter)
    examples: list[tuple[str, int, int, str, str]] = field(default_factory=list)  # task, attempt, step, reason, detail

    def count(self, key: tuple[str, int, int], annotation: Annotation) -> None:
        self.steps += 1
        if isinstance(annotation, ReasoningParts):
            self.annotated += 1
            return
        self.failures[annotation.reason] += 1
        if len(self.examples) < SHOWN_FAILURES:
            self.examples.append((*key, annotation.reason, annotation.detail))


def _labels(feedback: pl.DataFrame) -> dict[tuple[str, int], list[StepLabel]]:
    return {(r["task_id"], r["attempt"]): [StepLabel(step=s["step"], reasonable=s["reasonable"],
                                                     rationale=s.get("rationale", ""), goal_held=s.get("goal_held"))
                                           for s in json.loads(r["step_analysis"])]
            for r in feedback.iter_rows(named=True)}


def _attempt_steps(steps: pl.DataFrame, wanted: set[tuple[str, int]]) -> dict[tuple[str, int], list[StepRecord]]:
    out: dict[tuple[str, int], list[StepRecord]] = {}
    for row in steps.sort(*KEY).iter_rows(named=True):
        if (row["task_id"], row["attempt"]) in wanted:
            out.setdefault((row["task_id"], row["attempt"]), []).append(step_record(row))
    return out


def annotate_samples(samples: pl.DataFrame, attempts: pl.DataFrame, steps: pl.DataFrame, feedback: pl.DataFrame,
                     tasks: Mapping[str, TaskSpec], annotator: ReasoningAnnotator
                     ) -> tuple[pl.DataFrame, AnnotationReport]:
    """`samples` (`training_samples` rows) with their reasoning targets filled by `annotator`, from
    the rollout tables they were selected from and the tasks by id."""
    report = AnnotationReport(annotator.name)
    keys = samples.select(*KEY, "target_action").unique(subset=list(KEY), maintain_order=True)
    wanted = {(r["task_id"], r["attempt"]) for r in keys.iter_rows(named=True)}
    steps_of = _attempt_steps(steps, wanted)
    labels_of = _labels(feedback)
    finals = {(r["task_id"], r["attempt"]): r["final_screenshot_png"] for r in attempts.iter_rows(named=True)}
    results: dict[tuple[str, int, int], Annotation] = {}
    items: dict[tuple[str, int, int], StepToAnnotate] = {}
    for row in keys.iter_rows(named=True):
        key, attempt = (row["task_id"], row["attempt"], row["step"]), (row["task_id"], row["attempt"])
        task, recorded = tasks.get(row["task_id"]), steps_of.get(attempt, [])
        index = next((i for i, s in enumerate(recorded) if s.step == row["step"]), None)
        if task is None:
            results[key] = AnnotationFailure("task_unknown", f"{row['task_id']} is not among the tasks given")
        elif index is None:
            results[key] = AnnotationFailure("step_missing", f"{row['task_id']}#{row['attempt']} has no step "
                                                             f"{row['step']} in the rollout steps")
        else:
            items[key] = StepToAnnotate(task, recorded, index, Action.from_json(row["target_action"]),
                                        labels_of.get(attempt, []), finals.get(attempt))
    results.update(zip(items, annotator.annotate(list(items.values())), strict=True))
    for key, annotation in results.items():
        report.count(key, annotation)
    targets = pl.DataFrame(
        [{**dict(zip(KEY, key, strict=True)),
          **dict(zip(ANNOTATION_COLUMNS, a.texts() if isinstance(a, ReasoningParts) else (None,) * len(ANNOTATION_COLUMNS), strict=True))}
         for key, a in results.items()],
        schema={"task_id": pl.String, "attempt": pl.Int64, "step": pl.Int64, **{c: pl.String for c in ANNOTATION_COLUMNS}})
    annotated = samples.drop(*ANNOTATION_COLUMNS).join(targets, on=list(KEY), how="left", maintain_order="left")
    return annotated.select(samples.columns), report
