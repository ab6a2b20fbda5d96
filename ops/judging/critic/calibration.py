"""How far a critic's decisions agree with the simulator's judge (critic_calibration asset).

A critic whose decision is the judge's own verdict (the programmatic critic, an environment
judge's verdict, `ops.judging.judges.JUDGE_CRITICS`) is not measured: compared with itself it would agree 1.0, a figure that
measures nothing. An LLM critic, in the rollouts or re-judging them, is measured: agreement,
false success and false failure against the judge (MobileForge table 6's evaluator ablation).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Mapping, Sequence

from ops.agent.episode import CriticFeedback
from ops.judging.judges import JUDGE_CRITICS
NOT_MEASURED = "critic = ground truth, not measured"
MEASURED = "measured against the simulator's judge"
NO_GROUND_TRUTH = ("not measured: the environment has no judge to measure the critic against (a device); measure it "
                   "on the served simulator, docs/devices.md")

AttemptKey = tuple[str, int]  # (task_id, attempt)


@dataclass(frozen=True)
class CalibrationReport:
    attempts: int
    decision_agreement: float  # decisions equal to the judge's verdict, over attempts
    false_success_rate: float  # critic said success where the judge said failure, over judged failures
    false_failure_rate: float  # critic said failure where the judge said success, over judged successes
    step_label_agreement: float | None  # over steps labelled by both critics; None if none
    steps_compared: int


def _rate(num: int, den: int) -> float:
    return num / den if den else 0.0


def calibrate(decisions: Sequence[int], truths: Sequence[bool],
              step_labels: Sequence[Sequence[bool]] = (),
              reference_step_labels: Sequence[Sequence[bool]] = ()) -> CalibrationReport:
    """Compare critic decisions with the judge's verdicts, and step labels with reference labels.

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
        decision_agreement=_rate(correct, len(truths)),
        false_success_rate=_rate(false_success, negatives),
        false_failure_rate=_rate(false_failure, positives),
        step_label_agreement=_rate(agree, compared) if compared else None,
        steps_compared=compared,
    )


@dataclass(frozen=True)
class CriticCalibration:
    """What critic_calibration says of a critic: figures against the judge, or why there are none."""

    critic: str
    measured: bool
    note: str  # NOT_MEASURED, MEASURED or why nothing could be measured
    attempts: int  # attempts with a judge verdict that were compared (all of them when not measured)
    report: CalibrationReport | None = None
    errors: list[str] = field(default_factory=list)  # attempts whose re-judgement failed, with why

    def to_dict(self) -> dict[str, Any]:
        figures = {k: v for k, v in asdict(self.report).items() if k != "attempts"} if self.report else {}
        return {"critic": self.critic, "measured": self.measured, "note": self.note, "attempts": self.attempts,
                **figures, "errors": list(self.errors)}


def calibrate_rollout_critic(truths: Mapping[AttemptKey, bool],
                             decisions: Mapping[AttemptKey, tuple[str, int]]) -> CriticCalibration:
    """The critic that labelled the rollouts, from its stored (critic name, decision) per attempt;
    attempts a judge critic decided are left out, so with the programmatic critic nothing is measured."""
    critic = ", ".join(sorted({decisions[k][0] for k in truths})) or "none"
    if not truths:
        critics = ", ".join(sorted({name for name, _ in decisions.values()})) or "none"
        return CriticCalibration(critics, False, NO_GROUND_TRUTH, 0)
    measured = [k for k in truths if decisions[k][0] not in JUDGE_CRITICS]
    if not measured:
        return CriticCalibration(critic, False, NOT_MEASURED, len(truths))
    report = calibrate([decisions[k][1] for k in measured], [truths[k] for k in measured])
    return CriticCalibration(critic, True, MEASURED, len(measured), report)


def calibrate_rejudged(critic: str, truths: Mapping[AttemptKey, bool],
                       judged: Mapping[AttemptKey, CriticFeedback | Exception],
                       reference_labels: Mapping[AttemptKey, Sequence[bool]]) -> CriticCalibration:
    """A critic that re-judged the stored attempts (`judged`: its feedback, or what stopped it, per
    attempt), against the judge's verdicts, and its step labels against the rollout critic's
    `reference_labels`. Failed and missing re-judgements are errors, left out of the figures."""
    if critic in JUDGE_CRITICS:
        return CriticCalibration(critic, False, NOT_MEASURED, len(truths))
    errors = [f"{k}: {'not re-judged (no stored attempt)' if k not in judged else judged[k]}"
              for k in truths if not isinstance(judged.get(k), CriticFeedback)]
    kept = [k for k in truths if isinstance(judged.get(k), CriticFeedback)]
    if not kept:
        return CriticCalibration(critic, False, f"not measured: none of {len(truths)} attempts was re-judged",
                                 0, errors=errors)
    report = calibrate([judged[k].decision for k in kept], [truths[k] for k in kept],
                       [[s.reasonable for s in judged[k].step_analysis] for k in kept],
                       [reference_labels.get(k, []) for k in kept])
    return CriticCalibration(critic, True, MEASURED, len(kept), report, errors)


@dataclass(frozen=True)
class KindAgreement:
    """A critic's decisions against ground truth on the attempts of one kind of task (e.g. a task type)."""

    kind: str
    attempts: int
    agree: int
    false_success: int  # critic said success, ground truth failure
    false_failure: int  # critic said failure, ground truth success
    successes: int  # ground-truth successes

    @property
    def agreement(self) -> float:
        return _rate(self.agree, self.attempts)


def agreement_by_kind(decisions: Mapping[AttemptKey, int], truths: Mapping[AttemptKey, bool],
                      kind_of: Mapping[AttemptKey, str]) -> list[KindAgreement]:
    """Per kind of task and over all ("all"): how often the critic's decision equals the ground truth, with the
    false successes and false failures counted (MobileGym reports a VLM judge misjudging 10.2 % of cases).
    Attempts without a ground truth are left out."""
    keys = [k for k in decisions if k in truths]
    out = []
    for kind in [*sorted({kind_of[k] for k in keys}), "all"]:
        mine = [k for k in keys if kind == "all" or kind_of[k] == kind]
        out.append(KindAgreement(
            kind, len(mine), sum(bool(decisions[k]) == truths[k] for k in mine),
            sum(bool(decisions[k]) and not truths[k] for k in mine),
            sum(not decisions[k] and truths[k] for k in mine), sum(truths[k] for k in mine)))
    return out
