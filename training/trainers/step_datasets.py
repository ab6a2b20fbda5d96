"""Step samples → Hugging Face datasets that TRL's GRPOTrainer and SFTTrainer read directly.

A step sample is one (prompt the policy saw, screenshot, target) row of the `training_samples`
table (ops/data/schemas.py), plus `target_response` for SFT. The HF dataset keeps the prompt as
conversational messages with a `{"type": "image"}` placeholder and the screenshot in an
`image` column (TRL fills the placeholder with it); the ground-truth columns ride along so
reward functions receive them as keyword arguments. Also here: turning rollouts into SFT
samples for RFT (verified-successful attempts, UI-Voyager §3.2) and GRSD (fork points,
UI-Voyager eq. 6).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow as pa
from datasets import Dataset, Features, Image, Json, List, Value, load_from_disk

from ops.agent.messages import count_image_placeholders
from ops.actions import POINTED_TYPES, Action, ActionError
from ops.judging.action_reward import RewardInputError
from ops.judging.reward_columns import ANNOTATION_COLUMNS, element_boxes
from ops.data.schemas import STEP_OUTCOMES
from ops.samples.step_samples import FINISH, reward_elements

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
FORMAT_VERSION = 3  # 2: the reasoning targets (target_<part>) are columns; 3: so is verified_outcome
INFO_FILE = "mobileforge_dataset.json"

REQUIRED_COLUMNS = ("prompt", "image", "target_action")
# The other `training_samples` columns, plus `target_response` (the text SFT imitates); the reasoning
# targets (MobileWizard App. C.1) are what the reasoning reward compares each generated part with, the
# verified outcome what history self-alignment's rebuilt memory shows for the step.
OPTIONAL_COLUMNS = ("target_response", "target_box", "elements", "task_id", "attempt", "step", "has_hint",
                    "verified_outcome", *ANNOTATION_COLUMNS)

# Prompts and completions are stored as lists of JSON-encoded messages: a message's content is
# a string in one message and a list of parts in another, which no single Arrow type holds.
FEATURES = Features(
    {
        "prompt": List(Json()),
        "image": Image(),
        "completion": List(Json()),  # [{"role": "assistant", "content": target_response}] or null
        "target_action": Value("string"),  # canonical action JSON (reward ground truth)
        "target_box": Value("string"),  # JSON [x0, y0, x1, y1] on the 0–1000 grid, or null
        "elements": Value("string"),  # JSON element list of the observation, or null
        "task_id": Value("string"),
        "attempt": Value("int64"),
        "step": Value("int64"),
        "has_hint": Value("bool"),
        "verified_outcome": Value("string"),  # success / failure / unverified, or null
        **{column: Value("string") for column in ANNOTATION_COLUMNS},  # annotated reasoning part, or null
    }
)


class StepSampleError(ValueError):
    """A step sample that cannot become a training example; names the row and column."""


def _parse_prompt(text: Any, row: int) -> list[dict[str, Any]]:
    """The stored prompt as chat messages with exactly one image placeholder."""
    if not isinstance(text, str):
        raise StepSampleError(
            f"row {row}: prompt must be JSON text of chat messages, got {type(text).__name__}"
        )
    try:
        messages = json.loads(text)
    except json.JSONDecodeError as exc:
        raise StepSampleError(f"row {row}: prompt is not JSON ({exc})") from None
    if not isinstance(messages, list) or not messages:
        raise StepSampleError(f"row {row}: prompt must be a non-empty list of chat messages")
    placeholders = 0
    for i, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") not in ("system", "user", "assistant"):
            raise StepSampleError(f"row {row}: prompt message {i} needs a role system/user/assistant")
        content = message.get("content")
        if isinstance(content, list):
            for part in content:
                if not isinstance(part, dict) or part.get("type") not in ("text", "image"):
                    raise StepSampleError(
                        f"row {row}: prompt message {i} has a part that is neither text nor an "
                        f"image placeholder: {part!r:.80}"
                    )
                placeholders += part["type"] == "image"
        elif not isinstance(content, str):
            raise StepSampleError(f"row {row}: prompt message {i} content must be text or a list of parts")
    if placeholders > 1:
        raise StepSampleError(f"row {row}: prompt has {placeholders} image placeholders, expected 0 or 1")
    return messages


def _load_json(value: Any, row: int, column: str) -> Any:
    """The decoded JSON text of an optional column (None stays None)."""
    if value is None:
        return None
    try:
        return json.loads(value)
    except (TypeError, json.JSONDecodeError) as exc:
        raise StepSampleError(f"row {row}: {column} is not JSON ({exc})") from None


def _check_scorable(target: Action, elements: Any, box: Any, row: int) -> None:
    """The reward (ops.judging.action_reward) can score responses against this row: the box is a box, the
    element list reads as boxes, and a pointed target has a point, a box, or an element
    inside the list. `elements` and `box` are decoded JSON."""
    if box is not None and not (
        isinstance(box, list) and len(box) == 4 and all(isinstance(v, (int, float)) for v in box)
    ):
        raise StepSampleError(f"row {row}: target_box must be [x0, y0, x1, y1] or null, got {box!r:.80}")
    try:
        boxes = element_boxes(elements)
    except (RewardInputError, TypeError, ValueError) as exc:
        raise StepSampleError(f"row {row}: elements are not a list of boxes ({exc})") from None
    if target.type not in POINTED_TYPES or target.point is not None or box is not None:
        return
    if boxes is None or not 0 <= target.element < len(boxes):
        raise StepSampleError(
            f"row {row}: target {target.type.value} on element {target.element} has no box: "
            f"{'no elements' if boxes is None else f'{len(boxes)} elements'} and no target_box"
        )


def _convert_row(raw: dict[str, Any], row: int, require_response: bool) -> dict[str, Any]:
    prompt = _parse_prompt(raw["prompt"], row)
    png = raw["image"]
    if not isinstance(png, (bytes, bytearray)) or bytes(png[:8]) != PNG_SIGNATURE:
        raise StepSampleError(f"row {row}: image must be PNG bytes")
    try:
        target = Action.from_json(raw["target_action"])
    except (ActionError, TypeError) as exc:
        raise StepSampleError(f"row {row}: target_action is not a canonical action ({exc})") from None
    response = raw.get("target_response")
    if response is not None and not isinstance(response, str):
        raise StepSampleError(f"row {row}: target_response must be text")
    if require_response and not response:
        raise StepSampleError(f"row {row}: target_response is missing; SFT needs the response to imitate")
    if raw.get("verified_outcome") not in (None, *STEP_OUTCOMES):
        raise StepSampleError(f"row {row}: verified_outcome must be one of {list(STEP_OUTCOMES)} or null, got "
                              f"{raw['verified_outcome']!r:.40}")
    _check_scorable(
        target,
        _load_json(raw.get("elements"), row, "elements"),
        _load_json(raw.get("target_box"), row, "target_box"),
        row,
    )
    return {
        "prompt": prompt,
        "image": {"bytes": bytes(png), "path": None},
        "completion": [{"role": "assistant", "content": response}] if response else None,
        "target_action": raw["target_action"],
        "target_box": raw.get("target_box"),
        "elements": raw.get("elements"),
        "task_id": raw.get("task_id"),
        "attempt": raw.get("attempt"),
        "step": raw.get("step"),
        "has_hint": raw.get("has_hint"),
        "verified_outcome": raw.get("verified_outcome"),
        **{column: raw.get(column) for column in ANNOTATION_COLUMNS},
    }


def build_step_dataset(table: pl.DataFrame | pa.Table, *, require_response: bool = False) -> Dataset:
    """HF dataset of step samples for TRL (columns: see `FEATURES`).

    `table` has the `training_samples` columns (`prompt` as JSON chat messages with one
    `{"type": "image"}` placeholder, `image` PNG bytes, `target_action` canonical JSON, ...)
    and optionally `target_response`; `require_response=True` (SFT) rejects rows without it.
    Any malformed row raises `StepSampleError` naming the row and column.
    """
    frame = table if isinstance(table, pl.DataFrame) else pl.from_arrow(table)
    if not isinstance(frame, pl.DataFrame):
        raise TypeError(f"expected a table, got {type(table).__name__}")
    missing = [c for c in REQUIRED_COLUMNS if c not in frame.columns]
    if missing:
        raise StepSampleError(f"step samples are missing columns {missing}; have {frame.columns}")
    unknown = [c for c in frame.columns if c not in REQUIRED_COLUMNS + OPTIONAL_COLUMNS]
    if unknown:
        raise StepSampleError(
            f"step samples have unknown columns {unknown}; known: {list(REQUIRED_COLUMNS + OPTIONAL_COLUMNS)}"
        )
    if require_response and "target_response" not in frame.columns:
        raise StepSampleError("step samples have no target_response column; SFT needs it")
    if frame.is_empty():
        raise StepSampleError("no step samples: the table is empty")
    rows = [_convert_row(r, i, require_response) for i, r in enumerate(frame.iter_rows(named=True))]
    with_image = {count_image_placeholders(r["prompt"]) > 0 for r in rows}
    if len(with_image) > 1:
        raise StepSampleError("step samples mix prompts with and without a screenshot placeholder")
    dataset = Dataset.from_list(rows, features=FEATURES)
    # text-only prompts (the embedded element-list policy): TRL must not feed the screenshot
    return dataset if with_image.pop() else dataset.remove_columns("image")



def dataset_fingerprint(dataset: Dataset) -> str:
    """sha256 of the dataset's content (column names and every value, images as stored bytes).

    Unlike `Dataset._fingerprint` this is the same for the same rows however the dataset was
    built or loaded, so a manifest can name the exact training data.
    """
    digest = hashlib.sha256()
    table = dataset.data.table
    digest.update(json.dumps(table.column_names).encode())
    for batch in table.to_batches(max_chunksize=256):
        for record in batch.to_pylist():
            for name in table.column_names:
                value = record[name]
                if isinstance(value, dict) and isinstance(value.get("bytes"), bytes):
                    value = hashlib.sha256(value["bytes"]).hexdigest()
                digest.update(json.dumps(value, sort_keys=True, default=str).encode())
                digest.update(b"\x00")
    return digest.hexdigest()


def save_step_dataset(dataset: Dataset, path: str | Path) -> dict[str, Any]:
    """`save_to_disk` plus an info file (format version, row count, content fingerprint)."""
    path = Path(path)
    dataset.save_to_disk(str(path))
    info = {
        "format_version": FORMAT_VERSION,
        "rows": len(dataset),
        "columns": dataset.column_names,
        "fingerprint": dataset_fingerprint(dataset),
        "with_responses": sum(c is not None for c in dataset["completion"]),
    }
    (path / INFO_FILE).write_text(json.dumps(info, indent=2))
    return info


def load_step_dataset(path: str | Path) -> Dataset:
    """Load a dataset written by `save_step_dataset`; rejects other layouts clearly."""
    path = Path(path)
    info_path = path / INFO_FILE
    if not info_path.is_file():
        raise FileNotFoundError(f"{path} is not a step dataset ({INFO_FILE} missing)")
    info = json.loads(info_path.read_text())
    if info.get("format_version") != FORMAT_VERSION:
        raise StepSampleError(
            f"{path}: step dataset format {info.get('format_version')}, expected {FORMAT_VERSION}"
        )
    dataset = load_from_disk(str(path))
    if not isinstance(dataset, Dataset) or set(dataset.column_names) - {"image"} != set(FEATURES) - {"image"}:
        raise StepSampleError(
            f"{path}: columns {getattr(dataset, 'column_names', None)} are not a step dataset's"
        )
    return dataset


def reward_elements_json(elements: str | None) -> str | None:
    """An observation's element list (JSON) as the reward reads it (`ops.samples.step_samples.reward_elements`)."""
    if elements is None:
        return None
    try:
        return json.dumps(reward_elements(json.loads(elements)))
    except ValueError as exc:
        raise StepSampleError(str(exc)) from None


# RFT and GRSD samples imitate whole responses: they carry no reasoning targets
NO_REASONING_TARGETS = {column: pl.lit(None, pl.String) for column in ANNOTATION_COLUMNS}


def _reward_elements_expr(column: str) -> pl.Expr:
    return pl.col(column).map_elements(reward_elements_json, return_dtype=pl.String, skip_nulls=True)


def rft_samples(steps: pl.DataFrame, attempts: pl.DataFrame, *, verdict: str = "gt_success",
                goal_held: dict[tuple[str, int], int] | None = None, finish_response: str | None = None) -> pl.DataFrame:
    """Step samples from verified-successful attempts for rejection fine-tuning (UI-Voyager §3.2).

    An attempt is kept when its `verdict` column (`gt_success`, the simulator's judge, or
    `critic_decision`) is true/1; attempts without a verdict are not used. Every parsed step of
    a kept attempt becomes a sample whose target is the model's own raw output. `goal_held`
    maps (task_id, attempt) to the first step taken with the goal already held (the critic's
    `goal_held` labels, `goal_held_steps`): such an attempt ends at that step, whose target
    becomes "finish the task" (`finish_response`), instead of teaching the steps that came after.
    """
    if verdict not in attempts.columns:
        raise ValueError(f"attempts have no verdict column {verdict!r}; have {attempts.columns}")
    if goal_held and finish_response is None:
        raise ValueError("goal_held needs finish_response (the policy's terminate output)")
    kept = attempts.filter(pl.col(verdict).cast(pl.Int64, strict=False) == 1).select(
        "task_id", "attempt", has_hint=pl.col("hints_used").list.len() > 0
    )
    ends = pl.DataFrame([{"task_id": t, "attempt": a, "_end": s} for (t, a), s in (goal_held or {}).items()],
                        schema={"task_id": pl.String, "attempt": pl.Int64, "_end": pl.Int64})
    rows = (steps.join(kept, on=["task_id", "attempt"], how="inner")
            .join(ends, on=["task_id", "attempt"], how="left")
            .filter(pl.col("_end").is_null() | (pl.col("step") <= pl.col("_end")))
            .with_columns(_finish=pl.col("step") == pl.col("_end").fill_null(-1)))
    return (
        rows.filter(pl.col("action").is_not_null() | pl.col("_finish"))
        .sort("task_id", "attempt", "step")
        .select(
            "prompt",
            image=pl.col("screenshot_png"),
            target_action=pl.when(pl.col("_finish")).then(pl.lit(FINISH.to_json())).otherwise(pl.col("action")),
            target_response=pl.when(pl.col("_finish")).then(pl.lit(finish_response)).otherwise(pl.col("raw_output")),
            target_box=pl.lit(None, pl.String),
            elements=_reward_elements_expr("elements"),
            task_id=pl.col("task_id"),
            attempt=pl.col("attempt"),
            step=pl.col("step"),
            has_hint=pl.col("has_hint"),
            # a finish target was never executed: it has no verified outcome
            verified_outcome=pl.when(pl.col("_finish")).then(None).otherwise(pl.col("verified_outcome")),
            **NO_REASONING_TARGETS,
        )
    )


def grsd_samples(fork_pairs: pl.DataFrame, steps: pl.DataFrame) -> pl.DataFrame:
    """Self-distillation samples (UI-Voyager eq. 6): the failed attempt's prompt and screenshot
    at the fork, with the successful attempt's response (and action) at its matched step."""
    failed = steps.select(
        "task_id",
        failed_attempt="attempt",
        failed_step="step",
        prompt="prompt",
        image="screenshot_png",
        elements="elements",
    )
    teacher = steps.select("task_id", success_attempt="attempt", success_step="step", target_action="action")
    joined = fork_pairs.join(failed, on=["task_id", "failed_attempt", "failed_step"], how="left").join(
        teacher, on=["task_id", "success_attempt", "success_step"], how="left"
    )
    lost = joined.filter(pl.col("prompt").is_null() | pl.col("target_action").is_null())
    if not lost.is_empty():
        first = lost.row(0, named=True)
        raise ValueError(
            f"{lost.height} fork pair(s) point at steps that are missing or unparsed, e.g. task "
            f"{first['task_id']} failed {first['failed_attempt']}/{first['failed_step']}, "
            f"success {first['success_attempt']}/{first['success_step']}"
        )
    # every identifying column: a failed step paired with two successful attempts must not be ordered by
    # chance (a sort on tied keys keeps no particular order)
    return joined.sort("task_id", "failed_attempt", "failed_step", "success_attempt", "success_step").select(
        "prompt",
        "image",
        "target_action",
        target_response=pl.col("teacher_response"),
        target_box=pl.lit(None, pl.String),
        elements=_reward_elements_expr("elements"),
        task_id="task_id",
        attempt=pl.col("failed_attempt"),
        step=pl.col("failed_step"),
        has_hint=pl.lit(None, pl.Boolean),
        verified_outcome=pl.lit(None, pl.String),  # the teacher's action was not executed in this context
        **NO_REASONING_TARGETS,
    )
