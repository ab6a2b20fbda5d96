"""History self-alignment (MobileWizard §3.4.3), the logic without a model: when to align (the
validation reward stalled), which trajectories, and how one trajectory's history is regenerated
given a candidate generator and a reward function. `training.methods.hifpo.history_alignment_rounds` supplies
the model, the reward and the rounds of training.

A trajectory is the step samples of one attempt with one prompt variant (a hint-free copy is a
trajectory of its own), in step order. Its history is regenerated step by step: each step's prompt
gets the memory (MobileWizard eq. 2) built from the earlier steps' accepted content, the policy
writes candidates for it, and a candidate whose reward, as a fraction of the reward's ceiling,
exceeds the threshold (0.75) becomes the step's content; otherwise the labelled content (the target
action with the annotated parts) stays. Among passing candidates, near-duplicates of a better one
(embedding cosine at or above `duplicate_similarity`) are dropped and the best is kept. The accepted
content builds the memory the later steps' prompts show; the step targets (action, annotations) stay.

Each step's memory entry carries the step sample's `verified_outcome`, the rollout's stored outcome of
the step's action (the one its later prompts showed). What the step samples do not carry, and how it
is handled:
- an earlier step without a stored outcome (a finish step, a style without memory): it enters as
  `unverified`, counted;
- the steps the filter dropped (not reasonable): they have no sample and no label, so the rebuilt
  memory lists only the trajectory's kept steps, numbered as the memory counts them; counted as gaps.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ops.actions import Action, ParsedOutput, ReasoningParts, parse_structured
from ops.agent.messages import Message
from ops.agent.policy_prompt import with_memory
from ops.agent.reasoning_memory import ReasoningMemory, StepOutcome
from ops.judging.reasoning_reward import Embedder, cosine
from ops.judging.action_reward import RewardConfig
from ops.judging.reward_columns import ANNOTATION_COLUMNS

TRAJECTORY_COLUMNS = ("task_id", "attempt", "has_hint", "step")


class HistoryAlignmentConfig(BaseModel):
    """Settings of history self-alignment (MobileWizard §3.4.3 and App. B)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    rounds: int = Field(5, ge=2, description="Rounds the training budget (max_steps or num_train_epochs) is split "
                        "into; the validation reward is measured before the first and after each (App. B: 5 HSA "
                        "epochs).")
    stall_patience: int = Field(2, ge=1, description="N: consecutive evaluations without improvement that trigger "
                                "alignment (§3.4.3 gives no value).")
    min_improvement: float = Field(0.0, ge=0, description="An evaluation improves only when it beats the best so "
                                   "far by more than this.")
    trajectory_fraction: float = Field(0.5, gt=0, le=1, description="Share of the training trajectories "
                                       "regenerated at each trigger (§3.4.3: 50%), drawn from the seed.")
    temperatures: tuple[float, ...] = Field((0.6, 0.8, 1.0, 1.2), min_length=1, description="One candidate per "
                                            "temperature for each step (§3.4.3: N candidates at varied "
                                            "temperatures).")
    accept_threshold: float = Field(0.75, ge=0, le=1, description="A candidate replaces the labelled content only "
                                    "when its reward, as a fraction of the reward's ceiling, exceeds this "
                                    "(§3.4.3: 0.75).")
    duplicate_similarity: float = Field(0.9, gt=0, le=1, description="Passing candidates whose embedding cosine "
                                        "with a better one is at least this are near-duplicates, dropped.")
    validation_fraction: float = Field(0.1, gt=0, lt=1, description="Share of the trajectories (at least one) held "
                                       "out of training to measure the validation reward (greedy decoding).")

    @field_validator("temperatures")
    @classmethod
    def _positive(cls, temperatures: tuple[float, ...]) -> tuple[float, ...]:
        if any(not (t > 0 and math.isfinite(t)) for t in temperatures):
            raise ValueError(f"temperatures must be positive (sampling), got {temperatures}")
        return temperatures


def reward_ceiling(config: RewardConfig) -> float:
    """The highest reward `config` gives: λ_type + λ_arg, plus w1 and w2 when they are on."""
    return config.lambda_type + config.lambda_arg + (config.structure_weight or 0.0) + (config.reasoning_weight or 0.0)


@dataclass
class StallDetector:
    """Says when the validation reward has not improved for `patience` consecutive evaluations; the
    count starts again after each trigger."""

    patience: int
    min_improvement: float = 0.0
    best: float | None = None
    since_best: int = 0

    def observe(self, value: float) -> bool:
        """Record one evaluation; True when it completes a stall of `patience` evaluations."""
        if not math.isfinite(value):
            raise ValueError(f"validation reward must be a finite number, got {value!r}")
        if self.best is None or value > self.best + self.min_improvement:
            self.best, self.since_best = value, 0
            return False
        self.since_best += 1
        if self.since_best < self.patience:
            return False
        self.since_best = 0
        return True


# ------------------------------------------------------------------ trajectories


def group_trajectories(rows: Sequence[Mapping[str, Any]]) -> list[list[int]]:
    """Row indices per trajectory (same task, attempt and hint variant), each in step order; trajectories
    in order of first appearance. ValueError naming the row when one lacks a trajectory column."""
    groups: dict[tuple[Any, ...], list[int]] = {}
    for i, row in enumerate(rows):
        missing = [c for c in TRAJECTORY_COLUMNS if row.get(c) is None]
        if missing:
            raise ValueError(f"step sample {i} has no {', '.join(missing)}: history alignment regenerates "
                             "trajectories and needs each sample's task_id, attempt, has_hint and step")
        groups.setdefault((row["task_id"], row["attempt"], row["has_hint"]), []).append(i)
    return [sorted(rows_of, key=lambda i: rows[i]["step"]) for rows_of in groups.values()]


def _draw(trajectories: Sequence[list[int]], count: int, seed: int, purpose: str) -> list[list[int]]:
    chosen = set(random.Random(f"{seed}:{purpose}").sample(range(len(trajectories)), count))
    return [t for i, t in enumerate(trajectories) if i in chosen]


def split_validation(trajectories: Sequence[list[int]], fraction: float, seed: int
                     ) -> tuple[list[list[int]], list[list[int]]]:
    """(training, validation) trajectories: round(fraction · n), at least one and never all, held out at
    random from `seed`. ValueError when fewer than two trajectories leave none to train on."""
    if len(trajectories) < 2:
        raise ValueError(f"history alignment holds out whole trajectories for validation; the step samples form "
                         f"{len(trajectories)} trajectory, none would be left to train on")
    held = min(len(trajectories) - 1, max(1, round(fraction * len(trajectories))))
    validation = _draw(trajectories, held, seed, "validation")
    return [t for t in trajectories if t not in validation], validation


def choose_trajectories(trajectories: Sequence[list[int]], fraction: float, seed: int, trigger: int
                        ) -> list[list[int]]:
    """The trajectories regenerated at the `trigger`-th alignment: round(fraction · n), at least one,
    at random from `seed` and `trigger` (another draw each trigger)."""
    count = min(len(trajectories), max(1, round(fraction * len(trajectories))))
    return _draw(trajectories, count, seed, f"trigger-{trigger}")


# ------------------------------------------------------------------ one trajectory


@dataclass(frozen=True)
class HistoryStep:
    """One step of a trajectory: its row in the training set, its stored prompt (whose memory is
    replaced), its labelled content and the verified outcome of its action."""

    row: int
    prompt: list[Message]
    label: ParsedOutput
    outcome: StepOutcome


@dataclass(frozen=True)
class StepRewrite:
    """What alignment made of one step: its prompt with the rebuilt memory, the accepted candidate
    (None: the label was kept), each candidate's reward as a fraction of the ceiling, how many passed
    and how many of those were near-duplicates."""

    row: int
    prompt: list[Message]
    accepted: str | None
    scores: tuple[float, ...]
    passing: int
    duplicates: int


@dataclass(frozen=True)
class TrajectoryHistory:
    """A trajectory ready for alignment: its steps, and what the stored data could not say (earlier
    steps without a stored verified outcome; rollout steps missing between its kept steps)."""

    steps: list[HistoryStep]
    unknown_outcomes: int
    gaps: int


def label_content(row: Mapping[str, Any]) -> ParsedOutput:
    """A step sample's labelled content: its target action with its four annotated parts."""
    parts = [row.get(c) for c in ANNOTATION_COLUMNS]
    if not all(isinstance(p, str) and p.strip() for p in parts):
        raise ValueError(f"step {_step_name(row)} lacks a reasoning annotation: history alignment needs the "
                         "labelled parts of every step")
    return ParsedOutput(Action.from_json(row["target_action"]), reasoning=ReasoningParts(*parts), envelope_ok=True)


def _step_name(row: Mapping[str, Any]) -> str:
    return f"{row.get('task_id')}#{row.get('attempt')}/{row.get('step')}"


def _stored_outcome(row: Mapping[str, Any]) -> StepOutcome | None:
    """A step sample's `verified_outcome` (None: the sample has none). ValueError naming the step when
    the row has no such column or an unknown value."""
    if "verified_outcome" not in row:
        raise ValueError(f"step {_step_name(row)} has no verified_outcome column: history alignment reads each step's "
                         "verified outcome from the step samples; rebuild the step dataset")
    try:
        return None if row["verified_outcome"] is None else StepOutcome(row["verified_outcome"])
    except ValueError:
        raise ValueError(f"step {_step_name(row)}: verified_outcome {row['verified_outcome']!r:.40} is not one of "
                         f"{[o.value for o in StepOutcome]}") from None


def trajectory_history(rows: Sequence[Mapping[str, Any]], trajectory: Sequence[int]) -> TrajectoryHistory:
    """The `HistoryStep`s of one trajectory from its step-sample rows (`prompt` as chat messages,
    `verified_outcome` as the rollout stored it)."""
    outcomes = [_stored_outcome(rows[i]) for i in trajectory]
    steps = [rows[i]["step"] for i in trajectory]
    # the last step's outcome never enters a later prompt, so it is not needed
    unknown = sum(outcome is None for outcome in outcomes[:-1])
    gaps = sum(later - earlier - 1 for earlier, later in zip(steps, steps[1:]))
    return TrajectoryHistory([HistoryStep(i, list(rows[i]["prompt"]), label_content(rows[i]),
                                          outcome or StepOutcome.UNVERIFIED)
                              for i, outcome in zip(trajectory, outcomes, strict=True)], unknown, gaps)


def distinct_candidates(texts: Sequence[str], embed: Embedder, similarity: float) -> tuple[list[int], int]:
    """Indices of `texts` (ranked best first) that are not near-duplicates of a better one kept before
    them (cosine >= `similarity`), and how many were dropped. One `embed` call."""
    if len(texts) < 2:
        return list(range(len(texts))), 0
    vectors = embed(list(texts))
    kept: list[int] = []
    for i, vector in enumerate(vectors):
        if all(cosine(vector, vectors[k]) < similarity for k in kept):
            kept.append(i)
    return kept, len(texts) - len(kept)


CandidateSource = Callable[[list[Message], int], list[str]]
"""(prompt with the rebuilt memory, row) → the policy's candidate outputs for that step."""
StepScorer = Callable[[int, Sequence[str]], list[float]]
"""(row, candidates) → each candidate's reward against the row's targets, as a fraction of the ceiling."""


def realign_trajectory(steps: Sequence[HistoryStep], generate: CandidateSource, score: StepScorer, embed: Embedder,
                       config: HistoryAlignmentConfig) -> list[StepRewrite]:
    """Regenerate one trajectory's history step by step (see the module docstring)."""
    memory = ReasoningMemory()
    out = []
    for step in steps:
        prompt = with_memory(step.prompt, memory)
        candidates = generate(prompt, step.row)
        scores = tuple(score(step.row, candidates)) if candidates else ()
        passing = sorted((i for i, s in enumerate(scores) if s > config.accept_threshold), key=lambda i: -scores[i])
        _, duplicates = distinct_candidates([candidates[i] for i in passing], embed, config.duplicate_similarity)
        accepted = candidates[passing[0]] if passing else None  # the best always survives the dedupe
        memory.update(parse_structured(accepted) if accepted is not None else step.label, step.outcome)
        out.append(StepRewrite(step.row, prompt, accepted, scores, len(passing), duplicates))
    return out


# ------------------------------------------------------------------ the record


@dataclass
class AlignmentReport:
    """What history self-alignment did in one training run: the validation reward per evaluation
    (0: before the first round) at the optimizer step it was taken, the rounds after which it
    triggered, and per-step counts over all triggers."""

    rounds: int
    validation_trajectories: int = 0
    validation_samples: int = 0
    training_trajectories: int = 0
    validation_reward: list[list[float]] = field(default_factory=list)  # [[step, mean reward], ...]
    triggers: list[int] = field(default_factory=list)
    trajectories_realigned: int = 0
    steps_regenerated: int = 0
    steps_rewritten: int = 0  # a candidate passed and replaced the labelled content
    labels_kept: int = 0  # no candidate passed
    candidates: int = 0
    candidates_passing: int = 0
    duplicates_dropped: int = 0
    best_candidate_score: float = 0.0  # highest candidate reward seen, as a fraction of the ceiling
    prompts_too_long: int = 0  # rewritten prompts over max_prompt_length: the step kept its previous prompt
    unknown_outcomes: int = 0  # earlier steps without a stored verified outcome (entered unverified)
    history_gaps: int = 0  # rollout steps missing between kept steps (the filter dropped them)

    def count(self, history: TrajectoryHistory, rewrites: Sequence[StepRewrite]) -> None:
        self.trajectories_realigned += 1
        self.unknown_outcomes += history.unknown_outcomes
        self.history_gaps += history.gaps
        for rewrite in rewrites:
            self.steps_regenerated += 1
            self.steps_rewritten += rewrite.accepted is not None
            self.labels_kept += rewrite.accepted is None
            self.candidates += len(rewrite.scores)
            self.candidates_passing += rewrite.passing
            self.duplicates_dropped += rewrite.duplicates
            self.best_candidate_score = max(self.best_candidate_score, *rewrite.scores, 0.0)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
