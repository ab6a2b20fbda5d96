import pytest

from ops.judging.critic.calibration import (
    MEASURED,
    NOT_MEASURED,
    calibrate,
    calibrate_rejudged,
    calibrate_rollout_critic,
)
from ops.agent.episode import CriticFeedback, StepLabel


def test_calibration_counts_false_success_and_step_agreement():
    report = calibrate(
        decisions=[1, 1, 0, 0], truths=[True, False, False, True],
        step_labels=[[True, True], [True, False, False]],
        reference_step_labels=[[True, False], [True, False, True]],
    )
    assert report.decision_agreement == 0.5
    assert report.false_success_rate == 0.5
    assert report.false_failure_rate == 0.5
    assert report.steps_compared == 5
    assert report.step_label_agreement == pytest.approx(3 / 5)


def test_calibration_rejects_mismatched_lengths():
    with pytest.raises(ValueError, match="2 decisions but 1"):
        calibrate([1, 0], [True])


TRUTHS = {("a", 1): True, ("a", 2): False, ("b", 1): False, ("b", 2): False}


@pytest.mark.parametrize("critic", ["programmatic", "simulator", "androidworld"])
def test_a_critic_that_decides_by_the_judge_is_not_measured(critic):
    result = calibrate_rollout_critic(TRUTHS, {k: (critic, int(t)) for k, t in TRUTHS.items()})
    assert (result.measured, result.note, result.report, result.attempts) == (False, NOT_MEASURED, None, 4)
    summary = result.to_dict()
    assert summary["note"] == "critic = ground truth, not measured"
    assert not {"decision_agreement", "false_success_rate", "false_failure_rate"} & set(summary)


def test_an_llm_rollout_critic_is_measured_against_the_judge():
    decisions = {("a", 1): ("llm:x", 1), ("a", 2): ("llm:x", 1), ("b", 1): ("llm:x", 0), ("b", 2): ("llm:x", 0)}
    result = calibrate_rollout_critic(TRUTHS, decisions)
    assert (result.critic, result.measured, result.note, result.attempts) == ("llm:x", True, MEASURED, 4)
    assert (result.report.decision_agreement, result.report.false_success_rate,
            result.report.false_failure_rate) == (0.75, pytest.approx(1 / 3), 0.0)


def _feedback(decision: int, labels: list[bool]) -> CriticFeedback:
    return CriticFeedback(decision=decision, reason="r", failure_step=None, task_feasible=True,
                          step_analysis=[StepLabel(i, ok, "") for i, ok in enumerate(labels)], hint=None,
                          critic="llm:x")


def test_rejudged_attempts_that_failed_or_are_missing_are_counted_errors():
    judged = {("a", 1): _feedback(0, [True, False]), ("a", 2): _feedback(1, [True]), ("b", 1): RuntimeError("boom")}
    result = calibrate_rejudged("llm:x", TRUTHS, judged, {("a", 1): [True, True], ("a", 2): [False]})
    assert (result.measured, result.attempts) == (True, 2)
    assert (result.report.decision_agreement, result.report.false_success_rate,
            result.report.false_failure_rate) == (0.0, 1.0, 1.0)
    assert (result.report.steps_compared, result.report.step_label_agreement) == (3, pytest.approx(1 / 3))
    assert result.errors == ["('b', 1): boom", "('b', 2): not re-judged (no stored attempt)"]
    nothing = calibrate_rejudged("llm:x", TRUTHS, {}, {})
    assert (nothing.measured, nothing.report, len(nothing.errors)) == (False, None, 4)
    assert "none of 4 attempts" in nothing.note
