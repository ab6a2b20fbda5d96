"""Step-level training samples from judged rollouts (MobileForge eq. 14–15).

A sample keeps the exact prompt the policy saw at rollout time (so the hint context is the
one that was available to that attempt), the screenshot, the executed action as target with its
verified outcome, and the raw output as the SFT target response.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Sequence

import polars as pl

from ops.actions import Action, ActionType
from ops.actions.formats import FORMATS
from ops.agent.messages import messages_to_json
from ops.agent.policy_prompt import OUTPUT_FORMATS, PromptStyle, element_label, without_hints
from ops.samples.filtering import AttemptLabels, FilterConfig, TaskSelection, select_steps
from ops.judging.reward_columns import ANNOTATION_COLUMNS
from ops.data.schemas import from_rows

FINISH = Action(ActionType.TERMINATE, status="success")


def finish_response(style: PromptStyle | str) -> str:
    """"Finish the task" as a policy of prompt `style` writes it (the target of a finish step)."""
    return FORMATS[OUTPUT_FORMATS[PromptStyle(style)]].render(FINISH)


@dataclass
class SelectionReport:
    selections: list[TaskSelection]
    kept_tasks: int = 0
    dropped: Counter = field(default_factory=Counter)
    samples_by_type: Counter = field(default_factory=Counter)
    hint_free_copies: int = 0  # rows added as the hint-free twin of a hinted step
    finish_samples: int = 0  # steps relabelled "finish the task" (the goal already held)


def attempt_labels(feedback: pl.DataFrame) -> dict[str, list[AttemptLabels]]:
    """Critic labels per task from the `critic_feedback` table."""
    out: dict[str, list[AttemptLabels]] = {}
    for r in feedback.sort("task_id", "attempt").iter_rows(named=True):
        labels = sorted(json.loads(r["step_analysis"]), key=lambda s: s["step"])
        held = [t for t, s in enumerate(labels) if s.get("goal_held")]
        out.setdefault(r["task_id"], []).append(
            AttemptLabels(r["attempt"], r["decision"], [s["reasonable"] for s in labels], held[0] if held else None))
    return out


def reward_elements(elements: list[Any]) -> list[Any]:
    """The observation's elements as the reward reads them, indexed like the element list:
    `{"box": 0–1000 grid box, "label": the label the prompt listed}` per element (the label
    lets a label-echo answer resolve to its element); bare boxes pass through.

    Raises ValueError for an element without a grid box: pixel bounds alone cannot be placed
    on the grid without the screen size.
    """
    out = []
    for i, element in enumerate(elements):
        if isinstance(element, list):
            out.append(element)
        elif isinstance(element, dict) and (element.get("box") or element.get("grid")):
            out.append({"box": element.get("box") or element["grid"], "label": element_label(element)})
        else:
            raise ValueError(f"element {i} has no grid box ('box' or 'grid'): {element!r:.120}")
    return out


def target_box(action: dict[str, Any], elements: list[dict[str, Any]]) -> list[int] | None:
    """Box of the element the action targets: by index, or the smallest element under its point."""
    args = action.get("args", {})
    if args.get("element") is not None and 0 <= args["element"] < len(elements):
        return elements[args["element"]]["grid"]
    point = args.get("point")
    if point is None or args.get("end_point") is not None:
        return None
    index = element_under(point, elements)
    return None if index is None else elements[index]["grid"]


def element_under(point: Sequence[float], elements: list[dict[str, Any]]) -> int | None:
    """Index of the smallest element whose grid box holds `point` (0–1000 grid), None if none does."""
    hits = [i for i, e in enumerate(elements) if e["grid"][0] <= point[0] <= e["grid"][2]
            and e["grid"][1] <= point[1] <= e["grid"][3]]
    return min(hits, key=lambda i: _area(elements[i]["grid"])) if hits else None


def _area(box: Sequence[float]) -> float:
    return (box[2] - box[0]) * (box[3] - box[1])


def build_step_samples(attempts: pl.DataFrame, steps: pl.DataFrame, feedback: pl.DataFrame,
                       config: FilterConfig = FilterConfig(), *, hint_free_copies: bool = False,
                       finish_response: str | None = None) -> tuple[pl.DataFrame, SelectionReport]:
    """Filter tasks and steps (eq. 10–14) and turn the kept steps into `training_samples` rows.

    Each row keeps the prompt exactly as the policy saw it, and the step's verified outcome as the
    rollout stored it (what later prompts' memory shows; history self-alignment reads it). With
    `hint_free_copies`, a kept step whose prompt carried hints also appears with the prompt it would
    have had without them (`has_hint` false), so training also covers the hint-free prompts the policy
    meets at test time. A finish step (`FilterConfig.finish_at_goal`) keeps its prompt with
    "terminate, success" as target, written as `finish_response` (`finish_response` of the policy's
    prompt style), and no verified outcome (that target was never executed).
    """
    labels = attempt_labels(feedback)
    hinted = {(r["task_id"], r["attempt"]) for r in attempts.iter_rows(named=True) if r["hints_used"]}
    report = SelectionReport([select_steps(task, attempts, config) for task, attempts in labels.items()])
    wanted = {(s.task_id, a, t) for s in report.selections if s.kept for a, t in s.steps}
    finish = {(s.task_id, a, t) for s in report.selections if s.kept for a, t in s.finish_steps}
    if finish and finish_response is None:
        raise ValueError(f"{len(finish)} finish steps need finish_response (the policy's terminate output)")
    for s in report.selections:
        if s.kept:
            report.kept_tasks += 1
        else:
            report.dropped[s.drop_reason] += 1
    rows = []
    for r in steps.iter_rows(named=True):
        key = (r["task_id"], r["attempt"], r["step"])
        if key in finish:
            action_json, response = FINISH.to_json(), finish_response
        elif key in wanted and r["action"] is not None:
            action_json, response = r["action"], r["raw_output"]
        else:
            continue
        action = json.loads(action_json)
        elements = json.loads(r["elements"])
        box = target_box(action, elements)
        report.samples_by_type[action["type"]] += 1
        report.finish_samples += key in finish
        rows.append({
            "prompt": r["prompt"], "image": r["screenshot_png"], "target_action": action_json,
            "target_response": response, "target_box": json.dumps(box) if box else None,
            "elements": json.dumps(reward_elements(elements)), "task_id": r["task_id"],
            "attempt": r["attempt"], "step": r["step"], "has_hint": (r["task_id"], r["attempt"]) in hinted,
            "verified_outcome": None if key in finish else r["verified_outcome"],
            **dict.fromkeys(ANNOTATION_COLUMNS),  # reasoning targets: `ops.samples.annotated_samples` fills them
        })
    samples = from_rows(rows, "training_samples")
    if hint_free_copies:
        twinned = with_hint_free_copies(samples, attempts)
        report.hint_free_copies = twinned.height - samples.height
        samples = twinned
    return samples, report


def with_hint_free_copies(samples: pl.DataFrame, attempts: pl.DataFrame) -> pl.DataFrame:
    """`samples` plus, for each row whose prompt carried hints, the same row with the prompt it
    would have had without them (`has_hint` false). Hint counts come from `attempts.hints_used`."""
    counts = attempts.select("task_id", "attempt", _n_hints=pl.col("hints_used").list.len())
    # rows keep the samples' order: polars does not promise a join's row order unless asked
    hinted = (samples.join(counts, on=["task_id", "attempt"], how="inner", maintain_order="left")
              .filter(pl.col("_n_hints") > 0))
    copies = hinted.with_columns(
        prompt=pl.struct("prompt", "_n_hints").map_elements(
            lambda r: messages_to_json(without_hints(json.loads(r["prompt"]), r["_n_hints"])), return_dtype=pl.String),
        has_hint=pl.lit(False),
    ).drop("_n_hints")
    return pl.concat([samples, copies.select(samples.columns)])


def goal_held_steps(feedback: pl.DataFrame) -> dict[tuple[str, int], int]:
    """(task_id, attempt) -> the first step taken with the goal already held, where the critic tells."""
    return {(task, a.attempt): a.goal_held_at for task, labels in attempt_labels(feedback).items()
            for a in labels if a.goal_held_at is not None}
