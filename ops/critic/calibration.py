"""How far a critic's labels agree with the simulator's ground truth (critic_calibration asset)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence


@dataclass(frozen=True)
class CalibrationReport:
    attempts: int
    decision_accuracy: float
    false_success_rate: float  # critic said success where ground truth failed, over true failures
    false_failure_rate: float  # critic said failure where ground truth succeeded, over true successes
    step_label_agreement: float | None  # over steps labelled by both critics; None if none
    steps_compared: int


def _rate(num: int, den: int) -> float:
    return num / den if den else 0.0


def calibrate(decisions: Sequence[int], truths: Sequence[bool],
              step_labels: Sequence[Sequence[bool]] = (),
              reference_step_labels: Sequence[Sequence[bool]] = ()) -> CalibrationReport:
    """Compare critic decisions with ground-truth success, and step labels with reference labels.

    `step_labels[i]` and `reference_step_labels[i]` are the per-step reasonable flags of
    attempt i from the critic under test and from the reference (programmatic) critic.
    """
    if len(decisions) != len(truths):
        raise ValueError(f"{len(decisions)} decisions but {len(truths)} ground-truth labels")
    correct = sum(int(bool(d) == t) for d, t in zip(decisions, truths))
    negatives = sum(1 for t in truths if not t)
    positives = len(truths) - negatives
    false_success = sum(1 for d, t in zip(decisions, truths) if d and not t)
    false_failure = sum(1 for d, t in zip(decisions, truths) if not d and t)
    agree = compared = 0
    for ours, ref in zip(step_labels, reference_step_labels):
        for a, b in zip(ours, ref):
            compared += 1
            agree += int(a == b)
    return CalibrationReport(
        attempts=len(truths),
        decision_accuracy=_rate(correct, len(truths)),
        false_success_rate=_rate(false_success, negatives),
        false_failure_rate=_rate(false_failure, positives),
        step_label_agreement=_rate(agree, compared) if compared else None,
        steps_compared=compared,
    )
