"""Rule-based GUI action reward for step-level GRPO (MobileForge eq. 17 and 22–24, table 12).

R = λ_type · r_type + λ_arg · r_arg, with r_type = [predicted type == target type] and
r_arg = r_type · S_type(predicted args, target args). The format score (did the response
parse, with every part of its template) is reported next to R but never added to it.

Optional MobileWizard variants (MobileWizard §3.4.2): a click distance threshold that shrinks as
training proceeds (progressive shrinking), text F1 gated to 0 below 0.5, and for the four-part
structured output the format ("structure") and reasoning rewards of `ops.judging.reasoning_reward`,
added as R + w1·R_format + w2·R_reasoning (eq. 3, with R in the place of w3·(R_type + R_param)).
Each is off by default; when on it is also a component of its own, so trainers log it apart.

Error contract: whatever the model wrote scores (0 when it is not a valid action of the
target's type). A malformed *target* side (target action, box, element list) is a data bug:
`score_action` raises `RewardInputError`, which dataset builds surface (training.trainers.
step_datasets checks every row). The TRL reward function over a dataset's columns
(`ops.judging.reward_columns`) never raises on a row.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence, Set
from dataclasses import asdict, dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from ops.actions import GRID, Action, ActionType, ParseFailure, ReasoningParts, parse_with_context
from ops.actions.coords import GRID_1000, CoordFrame
from ops.actions.excerpt import excerpt
from ops.actions import POINTED_TYPES
from ops.judging.reasoning_reward import Embedder, reasoning_reward, structure_reward

Box = tuple[float, float, float, float]
Component = Literal["overall", "type", "arg", "format", "structure", "reasoning"]
COMPONENTS: tuple[Component, ...] = ("overall", "type", "arg", "format")  # always computed
STRUCTURED_FORMAT = "mobilewizard"  # the only format whose output holds the four reasoning parts


class RewardInputError(ValueError):
    """The target side of a reward call cannot be scored (missing box, bad element list)."""


class RewardConfig(BaseModel):
    """Weights and rule options of the GUI action reward."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    lambda_type: float = Field(
        0.2, ge=0, description="Weight of the action-type match (MobileForge eq. 22)."
    )
    lambda_arg: float = Field(
        0.8, ge=0, description="Weight of the argument score (MobileForge eq. 22)."
    )
    point_radius: float = Field(
        50.0,
        gt=0,
        description="Grid distance at which a point-target click scores 0: max(0, 1 − d/r).",
    )
    click_threshold: float | None = Field(
        None,
        gt=0,
        le=1,
        description="MobileWizard binary click rule: 1 when within this fraction of the screen "
        "of the target (or inside its box), else 0. None uses the distance-decay rule of "
        "table 12.",
    )
    shrink_stages: tuple[float, ...] | None = Field(
        None,
        description="Progressive shrinking (MobileWizard §3.4.2), e.g. (0.14, 0.10, 0.07, 0.04): "
        "training is split into equal phases and phase i uses click_threshold = stages[i].",
    )
    text_f1_gate: float | None = Field(
        None,
        ge=0,
        le=1,
        description="Gated F1 (MobileWizard §3.4.2): text scores below this become 0; e.g. 0.5.",
    )
    structure_weight: float | None = Field(
        None,
        ge=0,
        description="Weight w1 of MobileWizard's format reward (§3.4.2, eq. 3): 1 for the <think> → "
        "<answer> envelope with the four reasoning parts in order, 0.5 for one of the two, else 0. "
        "None leaves it out; 0 logs it without adding it. Needs the mobilewizard format.",
    )
    reasoning_weight: float | None = Field(
        None,
        ge=0,
        description="Weight w2 of MobileWizard's reasoning reward (§3.4.2, eq. 3): mean embedding "
        "similarity of each reasoning part to its annotation (target_<part> columns; needs an "
        "embedder). None leaves it out; 0 logs it without adding it. Needs the mobilewizard format.",
    )

    @field_validator("shrink_stages")
    @classmethod
    def _stages_shrink(cls, stages: tuple[float, ...] | None) -> tuple[float, ...] | None:
        if stages is None:
            return None
        if not stages or any(not 0 < s <= 1 for s in stages):
            raise ValueError("shrink_stages must be non-empty fractions in (0, 1]")
        if any(b > a for a, b in zip(stages, stages[1:], strict=False)):
            raise ValueError(f"shrink_stages must not grow, got {stages}")
        return stages

    @model_validator(mode="after")
    def _some_weight(self) -> RewardConfig:
        if self.lambda_type + self.lambda_arg == 0:
            raise ValueError("lambda_type and lambda_arg are both 0: the reward would be constant")
        return self

    def components(self) -> tuple[Component, ...]:
        """The components this config computes: `COMPONENTS` plus each MobileWizard reward turned on."""
        extra: tuple[Component, ...] = (("structure",) if self.structure_weight is not None else ()) + (
            ("reasoning",) if self.reasoning_weight is not None else ())
        return COMPONENTS + extra

    def at_progress(self, progress: float) -> RewardConfig:
        """This config with `click_threshold` from the shrinking schedule at `progress` ∈ [0, 1]."""
        if self.shrink_stages is None:
            return self
        n = len(self.shrink_stages)
        phase = min(max(int(progress * n), 0), n - 1)
        return self.model_copy(update={"click_threshold": self.shrink_stages[phase]})


DEFAULT_REWARD_CONFIG = RewardConfig()


@dataclass(frozen=True, slots=True)
class RewardBreakdown:
    """R and its parts; `format_ok` is logged only, it is not part of `reward`. `structure` and
    `reasoning` are MobileWizard's rewards, None when the config leaves them out."""

    reward: float
    type: float
    arg: float
    format_ok: bool
    structure: float | None = None
    reasoning: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """The fields, without the components that are left out."""
        return {name: value for name, value in asdict(self).items() if value is not None}

    def component(self, name: Component) -> float:
        if name == "overall":
            return self.reward
        if name == "format":
            return float(self.format_ok)
        value = getattr(self, name)
        if value is None:
            raise ValueError(f"component {name!r} was not computed (its reward weight is None)")
        return value


# ------------------------------------------------------------------ argument scores


_TOKEN = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]|[^\W_]+")


def tokens(text: str) -> list[str]:
    """Lower-cased word tokens; each CJK character is a token of its own."""
    return _TOKEN.findall(text.lower())


def token_f1(prediction: str, target: str) -> float:
    """Token-level F1 between two texts (1.0 when both have no tokens)."""
    pred, gold = tokens(prediction), tokens(target)
    if not pred and not gold:
        return 1.0
    if not pred or not gold:
        return 0.0
    remaining: dict[str, int] = {}
    for tok in gold:
        remaining[tok] = remaining.get(tok, 0) + 1
    overlap = 0
    for tok in pred:
        if remaining.get(tok, 0) > 0:
            remaining[tok] -= 1
            overlap += 1
    if overlap == 0:
        return 0.0
    precision, recall = overlap / len(pred), overlap / len(gold)
    return 2 * precision * recall / (precision + recall)


def swipe_direction(action: Action) -> str | None:
    """The finger direction of a swipe: its `direction`, else derived from start → end
    (the dominant axis; vertical on ties; y grows downward). None for a zero-length stroke."""
    if action.direction is not None:
        return action.direction
    if action.point is None or action.end_point is None:
        return None
    dx = action.end_point[0] - action.point[0]
    dy = action.end_point[1] - action.point[1]
    if dx == 0 and dy == 0:
        return None
    if abs(dy) >= abs(dx):
        return "down" if dy > 0 else "up"
    return "right" if dx > 0 else "left"


def check_box(box: Any, what: str) -> Box:
    """`box` as four finite floats (x0 ≤ x1, y0 ≤ y1); `RewardInputError` for anything else."""
    if isinstance(box, str | bytes | Mapping | Set) or not hasattr(box, "__len__") or len(box) != 4:
        raise RewardInputError(f"{what}: a box is (x0, y0, x1, y1), got {excerpt(box)}")
    try:
        x0, y0, x1, y1 = (float(v) for v in box)
    except (TypeError, ValueError, OverflowError):
        raise RewardInputError(f"{what}: box values must be numbers, got {excerpt(box)}") from None
    if not (x0 <= x1 and y0 <= y1) or not all(math.isfinite(v) for v in (x0, y0, x1, y1)):
        raise RewardInputError(f"{what}: box {excerpt(box)} is not (x0 ≤ x1, y0 ≤ y1)")
    return x0, y0, x1, y1


def _element_box(index: int, elements: Sequence[Sequence[float]] | None) -> Box | None:
    """The box of element `index`, or None when the index is outside the list."""
    if elements is None:
        return None
    if isinstance(elements, str | bytes | Mapping | Set) or not hasattr(elements, "__getitem__"):
        raise RewardInputError(f"elements: expected a list of boxes, got {excerpt(elements)}")
    if not 0 <= index < len(elements):
        return None
    return check_box(elements[index], f"element {index}")


def _point_score(pred: tuple[int, int], target: tuple[int, int], config: RewardConfig) -> float:
    d = math.dist(pred, target)
    if config.click_threshold is not None:  # MobileWizard binary rule
        return 1.0 if d <= config.click_threshold * GRID else 0.0
    return max(0.0, 1.0 - d / config.point_radius)  # table 12, point target


def _box_score(pred: tuple[int, int], box: Box, config: RewardConfig) -> float:
    x0, y0, x1, y1 = box
    if x0 <= pred[0] <= x1 and y0 <= pred[1] <= y1:
        return 1.0
    centre = ((x0 + x1) / 2, (y0 + y1) / 2)
    d = math.dist(pred, centre)
    if config.click_threshold is not None:
        return 1.0 if d <= config.click_threshold * GRID else 0.0
    diagonal = math.dist((x0, y0), (x1, y1))
    if diagonal == 0:
        return _point_score(pred, (round(x0), round(y0)), config)
    # table 12: decays with the distance to the centre normalised by the diagonal; a point
    # just outside a corner (d = diagonal / 2) keeps 0.5, one a diagonal away gets 0.
    return max(0.0, 1.0 - d / diagonal)


def _pointed_score(
    pred: Action,
    target: Action,
    target_box: Box | None,
    elements: Sequence[Sequence[float]] | None,
    config: RewardConfig,
) -> float:
    if pred.element is not None and pred.element == target.element:
        return 1.0
    box = target_box
    if box is None and target.element is not None:
        box = _element_box(target.element, elements)
    if box is None and target.point is None:
        raise RewardInputError(
            f"{target.type.value} target has no point and no box for element {target.element} "
            f"({'no elements given' if elements is None else f'{len(elements)} elements given'})"
        )
    point = pred.point
    if point is None and pred.element is not None:
        if elements is None:
            raise RewardInputError(
                f"prediction names element {pred.element}; pass `elements` to resolve it"
            )
        pred_box = _element_box(pred.element, elements)
        if pred_box is None:  # the model named an element that is not on screen
            return 0.0
        point = (round((pred_box[0] + pred_box[2]) / 2), round((pred_box[1] + pred_box[3]) / 2))
    if point is None:
        return 0.0
    if box is not None:
        return _box_score(point, box, config)
    return _point_score(point, target.point, config)


def _text_score(pred: str, target: str, config: RewardConfig) -> float:
    f1 = token_f1(pred, target)
    if config.text_f1_gate is not None and f1 < config.text_f1_gate:
        return 0.0
    return f1


def _app_score(pred: str, target: str) -> float:
    p, t = pred.strip().casefold(), target.strip().casefold()
    if p == t:
        return 1.0
    if p and t and (p in t or t in p):  # table 12: containment earns partial credit
        return min(len(p), len(t)) / max(len(p), len(t))
    return 0.0


def argument_score(
    pred: Action,
    target: Action,
    *,
    target_box: Box | None = None,
    elements: Sequence[Sequence[float]] | None = None,
    config: RewardConfig = DEFAULT_REWARD_CONFIG,
) -> float:
    """S_type(pred, target) of table 12, for a prediction of the target's type."""
    t = target.type
    if t in POINTED_TYPES:
        return _pointed_score(pred, target, target_box, elements, config)
    if t == ActionType.SWIPE:
        wanted = swipe_direction(target)
        return 1.0 if wanted is None or swipe_direction(pred) == wanted else 0.0
    if t == ActionType.DRAG:  # not in table 12: both ends scored like point-target clicks
        return (
            _point_score(pred.point, target.point, config)
            + _point_score(pred.end_point, target.end_point, config)
        ) / 2
    if t == ActionType.TYPE:
        return _text_score(pred.text or "", target.text or "", config)
    if t == ActionType.ANSWER:
        return 1.0 if not target.text else _text_score(pred.text or "", target.text, config)
    if t == ActionType.SYSTEM_BUTTON:
        return float(pred.button == target.button)
    if t == ActionType.TERMINATE:
        return float(pred.status == target.status)
    if t == ActionType.KEY:
        return float((pred.key or "").strip().casefold() == (target.key or "").strip().casefold())
    if t == ActionType.OPEN_APP:
        return _app_score(pred.app or "", target.app or "")
    return 1.0  # wait: full credit once the type matches


def score_action(
    prediction: Action | ParseFailure,
    target: Action,
    *,
    target_box: Sequence[float] | None = None,
    elements: Sequence[Sequence[float]] | None = None,
    config: RewardConfig = DEFAULT_REWARD_CONFIG,
    format_ok: bool | None = None,
) -> RewardBreakdown:
    """Reward of one predicted action against the selected target (MobileForge eq. 22–24).

    `target_box` (x0, y0, x1, y1 on the grid) is the target element's box; `elements` the
    observation's element boxes, so element indices on either side resolve to boxes.
    `format_ok` defaults to "the prediction parsed". Any `prediction` scores (anything but an
    `Action` scores 0); `RewardInputError` is raised only when the target side cannot be scored
    (not an `Action`, a malformed box or element list, an element target without any box).
    """
    if not isinstance(target, Action):
        raise RewardInputError(f"target must be an Action, got {excerpt(target)}")
    box = None if target_box is None else check_box(target_box, "target_box")
    format_ok = isinstance(prediction, Action) if format_ok is None else bool(format_ok)
    if not isinstance(prediction, Action) or prediction.type != target.type:
        return RewardBreakdown(0.0, 0.0, 0.0, format_ok)
    arg = argument_score(prediction, target, target_box=box, elements=elements, config=config)
    reward = config.lambda_type * 1.0 + config.lambda_arg * arg
    return RewardBreakdown(reward, 1.0, arg, format_ok)


def score_output(
    text: str,
    fmt: str,
    target: Action,
    *,
    frame: CoordFrame = GRID_1000,
    target_box: Sequence[float] | None = None,
    elements: Sequence[Sequence[float]] | None = None,
    labels: Sequence[str] | None = None,
    config: RewardConfig = DEFAULT_REWARD_CONFIG,
    annotation: ReasoningParts | None = None,
    embed: Embedder | None = None,
) -> RewardBreakdown:
    """Parse a raw model response and score it; `format_ok` also requires the full template.
    `labels` (the prompt's element labels) let a label-echo response pick its element by the
    row it echoed, exactly as in rollouts. With `config.reasoning_weight` set, `annotation` (the
    step's four annotated parts; `RewardInputError` without it) and `embed` are needed."""
    check_structured_options(fmt, config, embed)
    parsed = parse_with_context(text, fmt, frame=frame, labels=labels)
    breakdown = score_action(
        parsed.action,
        target,
        target_box=target_box,
        elements=elements,
        config=config,
        format_ok=parsed.ok and parsed.envelope_ok,
    )
    structure = reasoning = None
    reward = breakdown.reward
    if config.structure_weight is not None:
        structure = structure_reward(text)
        reward += config.structure_weight * structure
    if config.reasoning_weight is not None:
        if not isinstance(annotation, ReasoningParts):
            raise RewardInputError(f"the reasoning reward needs the step's annotated parts, got {excerpt(annotation)}")
        reasoning = reasoning_reward(text, annotation, embed)  # embed: checked on entry
        reward += config.reasoning_weight * reasoning
    return RewardBreakdown(reward, breakdown.type, breakdown.arg, breakdown.format_ok, structure, reasoning)


def check_structured_options(fmt: str, config: RewardConfig, embed: Embedder | None) -> None:
    """ValueError when the config turns on a MobileWizard reward that `fmt` or a missing `embed`
    cannot give."""
    if config.structure_weight is None and config.reasoning_weight is None:
        return
    if fmt != STRUCTURED_FORMAT:
        raise ValueError(f"structure_weight / reasoning_weight score the {STRUCTURED_FORMAT!r} format's "
                         f"four-part reasoning; the action format is {fmt!r}")
    if config.reasoning_weight is not None and embed is None:
        raise ValueError("reasoning_weight needs an embedder (embed=…): the reasoning reward compares "
                         "sentence embeddings")
