"""MobileWizard's format and reasoning rewards (§3.4.2, eq. 3) for trajectory-level GRPO (AdaGRPO,
MobileRL §2.1), where one reward scores a whole online episode.

Eq. 3 scores one response: R = w1·R_format + w2·R_reasoning + w3·(R_type + R_param). An online episode
has no target action, so the judge's outcome (after shortest-path adjustment) stands for the action
terms, and the two reasoning terms become per-step means over the episode's responses:

    R(τ) = R_outcome(τ) + w1 · mean_t R_format(y_t) + w2 · mean_t R_reasoning(y_t, annotation_t)

Means, not sums, so a long episode earns no more for talking longer, and the outcome keeps deciding
between a success and a failure of equal form.

The reasoning reward needs an annotation of each step, which online steps lack. Here each step of an
episode is annotated, after the episode, by the programmatic annotator (`ops.judging.critic.reasoning_annotation`)
from the previous, current and next screen and the action the policy took, the same annotator that
writes the step dataset's targets for HiFPO (MobileWizard App. C.1 annotates the same way, with a VLM).
What that rewards: self-verification and screen analysis are compared with what the screens showed,
so they reward reading the screen and the last step's effect correctly; planning and action guidance
are compared with the sub-task the action achieved and the action itself, so they reward reasoning
that says what the policy then does (the coherence §3.3 asks of the four parts), not choosing the
right action: the outcome term does that. A step without an action (an invalid output) or one the
annotator cannot annotate scores 0, counted by reason. The alternative, the format reward alone per
step, would drop the reasoning reward online; annotating keeps both terms of eq. 3 at the cost of one
simulator replay per step and the embedder.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from ops.actions import Action, ReasoningParts
from ops.judging.critic.reasoning_annotation import ReasoningAnnotator, StepToAnnotate
from ops.agent.episode import AttemptRecord
from ops.judging.reasoning_reward import Embedder, reasoning_reward, structure_reward


@dataclass(frozen=True)
class EpisodeReasoningScore:
    """An episode's per-step means (None: the term is off)."""

    structure: float | None
    reasoning: float | None


@dataclass
class EpisodeReasoningReward:
    """The two terms of eq. 3 for whole episodes, weighted `structure_weight` (w1) and `reasoning_weight`
    (w2), each None when off (0 computes and logs it without adding it). Counts steps the reasoning
    reward could not compare, by reason, in `unscored`."""

    structure_weight: float | None = None
    reasoning_weight: float | None = None
    annotator: ReasoningAnnotator | None = None
    embed: Embedder | None = None
    unscored: Counter[str] = field(default_factory=Counter)

    def __post_init__(self) -> None:
        if self.reasoning_weight is not None and (self.annotator is None or self.embed is None):
            raise ValueError("reasoning_weight needs an annotator (the steps' targets) and an embedder")

    @property
    def on(self) -> bool:
        return self.structure_weight is not None or self.reasoning_weight is not None

    def score(self, record: AttemptRecord) -> EpisodeReasoningScore:
        """The episode's mean format reward and mean reasoning reward over its steps (0 without steps)."""
        steps = record.steps
        structure = None
        if self.structure_weight is not None:
            structure = sum(structure_reward(s.raw_output) for s in steps) / len(steps) if steps else 0.0
        reasoning = None
        if self.reasoning_weight is not None:
            reasoning = sum(self._reasoning(record)) / len(steps) if steps else 0.0
        return EpisodeReasoningScore(structure, reasoning)

    def _reasoning(self, record: AttemptRecord) -> list[float]:
        acted = [i for i, s in enumerate(record.steps) if s.action is not None]
        self.unscored["no_action"] += len(record.steps) - len(acted)
        items = [StepToAnnotate(record.task, record.steps, i, Action.from_dict(record.steps[i].action), (),
                                record.final_screenshot_png) for i in acted]
        scores = []
        for i, annotation in zip(acted, self.annotator.annotate(items), strict=True):
            if isinstance(annotation, ReasoningParts):
                scores.append(reasoning_reward(record.steps[i].raw_output, annotation, self.embed))
            else:
                self.unscored[annotation.reason] += 1
        return scores

    def bonus(self, score: EpisodeReasoningScore) -> float:
        """w1 · structure + w2 · reasoning, the terms added to the outcome reward."""
        return (self.structure_weight or 0.0) * (score.structure or 0.0) \
            + (self.reasoning_weight or 0.0) * (score.reasoning or 0.0)
