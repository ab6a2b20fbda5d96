import pytest

from ops.critic.calibration import calibrate


def test_calibration_counts_false_success_and_step_agreement():
    report = calibrate(
        decisions=[1, 1, 0, 0], truths=[True, False, False, True],
        step_labels=[[True, True], [True, False, False]],
        reference_step_labels=[[True, False], [True, False, True]],
    )
    assert report.decision_accuracy == 0.5
    assert report.false_success_rate == 0.5
    assert report.false_failure_rate == 0.5
    assert report.steps_compared == 5
    assert report.step_label_agreement == pytest.approx(3 / 5)


def test_calibration_rejects_mismatched_lengths():
    with pytest.raises(ValueError, match="2 decisions but 1"):
        calibrate([1, 0], [True])
