"""The GUI action reward as TRL reward functions: `f(completions, **columns) -> list[float]` over a
step dataset's columns (target action, target box, element list, the four annotated reasoning parts).

It never raises on a row: a row it cannot score gets 0 and its reason is counted in the function's
`failures` and logged once (`ops.judging.action_reward` raises `RewardInputError` on a malformed
target; here that becomes a counted failure)."""

from __future__ import annotations

import logging
import math
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ops.actions import REASONING_PARTS, Action, ReasoningParts
from ops.actions.coords import GRID_1000, CoordFrame
from ops.actions.excerpt import clipped, excerpt
from ops.actions.json_limits import loads as bounded_loads
from ops.judging.action_reward import (DEFAULT_REWARD_CONFIG, Box, Component, RewardBreakdown, RewardConfig,
                                       RewardInputError, check_box, check_structured_options, score_output)
from ops.judging.reasoning_reward import Embedder

log = logging.getLogger(__name__)

ANNOTATION_COLUMNS = tuple(f"target_{part}" for part in REASONING_PARTS)  # the reasoning reward's targets


def annotation_from_cells(cells: Sequence[Any]) -> ReasoningParts:
    """The four annotated parts from the `ANNOTATION_COLUMNS` cells of one row (non-empty strings
    that UTF-8 can encode); `RewardInputError` naming the first bad cell."""
    for column, cell in zip(ANNOTATION_COLUMNS, cells, strict=True):
        if not isinstance(cell, str) or not cell.strip():
            raise RewardInputError(f"column {column!r} must be a non-empty string, got {excerpt(cell)}")
        try:
            cell.encode()
        except UnicodeEncodeError:
            raise RewardInputError(f"column {column!r} is not UTF-8 encodable (a lone surrogate)") from None
    return ReasoningParts(*cells)


def completion_text(completion: Any) -> str:
    """The assistant text of a TRL completion: a string or a chat-format message list.
    A missing or None content or text part reads as empty (HF datasets store a key missing
    from one row as None); `TypeError` when there is no message at all."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, dict):
        completion = [completion]
    if isinstance(completion, list) and completion and isinstance(completion[-1], dict):
        content = completion[-1].get("content")
        if content is None:
            return ""
        if isinstance(content, str):
            return content
        if isinstance(content, list):  # multimodal parts: keep the text ones
            return "".join(p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
    raise TypeError(f"cannot read completion text from {type(completion).__name__}")


MAX_CELL_CHARS = 100_000  # a target action, box or element list; a screen's 200 elements need ~20,000


def _json_column(value: Any, what: str) -> Any:
    if value is None or not isinstance(value, str):
        return value
    if value.strip() in ("", "null"):
        return None
    try:
        return bounded_loads(value, max_chars=MAX_CELL_CHARS)
    except ValueError as exc:  # not JSON, or past the size/depth/digit limits
        raise RewardInputError(f"column {what!r} is not JSON: {clipped(str(exc))}") from None


def element_labels(value: Any) -> list[str] | None:
    """Element labels from an `elements` column of objects with `label`; None when any lacks one."""
    if not isinstance(value, list | tuple) or not all(
        isinstance(item, dict) and isinstance(item.get("label"), str) for item in value
    ):
        return None
    return [item["label"] for item in value]


def element_boxes(value: Any) -> list[Box] | None:
    """Element boxes from an `elements` column: a list of boxes or of objects with `box`.
    Raises `RewardInputError` naming the first element that is not a box."""
    if value is None:
        return None
    if not isinstance(value, list | tuple):
        raise RewardInputError(f"elements: expected a list, got {excerpt(value)}")
    boxes = []
    for i, item in enumerate(value):
        box = item.get("box") if isinstance(item, dict) else item
        if box is None:
            raise RewardInputError(f"element {i} has no box: {excerpt(item)}")
        boxes.append(check_box(box, f"element {i}"))
    return boxes


def target_from_column(value: Any) -> Action:
    """The target action from a `target_action` cell (canonical JSON string or object)."""
    if isinstance(value, Action):
        return value
    data = _json_column(value, "target_action")
    if not isinstance(data, dict):
        raise RewardInputError(f"target_action must be a canonical action, got {excerpt(value)}")
    try:
        return Action.from_dict(data)
    except (ValueError, OverflowError) as exc:  # ActionError, or a number too large for a float
        raise RewardInputError(f"target_action: {clipped(str(exc))}") from None


def _progress(trainer_state: Any) -> float:
    """global_step / max_steps of TRL's trainer state, in [0, 1]; 0 (the first shrinking stage) when
    the state holds no usable counts. Never raises: counts are Python ints of any size."""
    max_steps, step = getattr(trainer_state, "max_steps", 0), getattr(trainer_state, "global_step", 0)
    if not all(isinstance(v, int | float) and not isinstance(v, bool) for v in (max_steps, step)):
        return 0.0
    try:
        ratio = step / max_steps if max_steps > 0 else 0.0
    except OverflowError:  # an int past the float range (over a float, or a quotient that large): far past the end
        return 1.0 if step > 0 else 0.0
    return 0.0 if math.isnan(ratio) else min(max(ratio, 0.0), 1.0)


class _RowError(Exception):
    """A row of a TRL batch that cannot be scored; `reason` is the counted category."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason = reason


_COLUMNS = ("target_action", "target_box", "elements")


def _cell(columns: Mapping[str, Any], name: str, row: int, n_rows: int) -> Any:
    """Row `row` of an optional column (None when the column is absent or empty)."""
    column = columns.get(name)
    if column is None or (isinstance(column, list | tuple) and not column):
        return None
    if not isinstance(column, list | tuple):
        raise _RowError(f"column {name} is not a list", excerpt(column))
    if len(column) != n_rows:
        raise _RowError(f"column {name} is ragged", f"{len(column)} values for {n_rows} completions")
    return column[row]


def _score_row(completion: Any, columns: Mapping[str, Any], row: int, n_rows: int, fmt: str,
               frame: CoordFrame, config: RewardConfig, embed: Embedder | None) -> RewardBreakdown:
    try:
        text = completion_text(completion)
    except TypeError as exc:
        raise _RowError("unreadable completion", str(exc)) from None
    cells = {name: _cell(columns, name, row, n_rows) for name in _COLUMNS}
    with_annotation = config.reasoning_weight is not None
    annotation_cells = [_cell(columns, name, row, n_rows) for name in ANNOTATION_COLUMNS] if with_annotation else []
    try:
        target = target_from_column(cells["target_action"])
        elements = _json_column(cells["elements"], "elements")
        annotation = annotation_from_cells(annotation_cells) if with_annotation else None
        return score_output(text, fmt, target, frame=frame, target_box=_json_column(cells["target_box"], "target_box"),
                            elements=element_boxes(elements), labels=element_labels(elements), config=config,
                            annotation=annotation, embed=embed)
    except RewardInputError as exc:
        raise _RowError("malformed target", str(exc)) from None


def make_trl_reward(
    fmt: str,
    config: RewardConfig = DEFAULT_REWARD_CONFIG,
    component: Component = "overall",
    *,
    frame: CoordFrame = GRID_1000,
    embed: Embedder | None = None,
) -> Callable[..., list[float]]:
    """A TRL reward function `f(completions, **columns) -> list[float]`.

    Columns: `target_action` (canonical action JSON), optional `target_box` and `elements`
    (JSON strings or already-decoded lists of boxes, or of `{"box", "label"}` objects), and with
    `config.reasoning_weight` the four `ANNOTATION_COLUMNS` (`embed` scores them). With
    `config.shrink_stages`, the click threshold follows TRL's `trainer_state` (global_step /
    max_steps). A batch without a `target_action` column raises `RewardInputError`; a row that
    cannot be scored (unreadable completion, malformed target cell, ragged column) gets 0, and
    its reason is counted in the function's `failures` (a Counter) and logged the first time.
    `component` is one of `config.components()`.
    """
    if component not in config.components():
        raise ValueError(f"component must be one of {config.components()}, got {component!r}")
    check_structured_options(fmt, config, embed)
    failures: Counter[str] = Counter()

    def reward(completions: Sequence[Any], **columns: Any) -> list[float]:
        if "target_action" not in columns:
            raise RewardInputError("the dataset needs a 'target_action' column")
        step_config = config.at_progress(_progress(columns.get("trainer_state")))
        n_rows = len(completions)
        out = []
        for row, completion in enumerate(completions):
            try:
                breakdown = _score_row(completion, columns, row, n_rows, fmt, frame, step_config, embed)
            except _RowError as exc:
                _count_failure(exc.reason, str(exc), row)
                out.append(0.0)
            except Exception as exc:  # noqa: BLE001 — one row must not kill a GRPO step
                _count_failure(f"unexpected {type(exc).__name__}", f"{type(exc).__name__}: {clipped(str(exc))}", row)
                out.append(0.0)
            else:
                out.append(breakdown.component(component))
        return out

    def _count_failure(reason: str, detail: str, row: int) -> None:
        if not failures[reason]:
            log.warning("%s: row %d scored 0, %s (further rows like it are counted in .failures)",
                        reward.__name__, row, detail)
        failures[reason] += 1

    reward.__name__ = f"gui_action_{component}"
    reward.failures = failures  # type: ignore[attr-defined]
    return reward
