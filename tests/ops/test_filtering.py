import pytest

from ops.filtering import AttemptLabels, FilterConfig, select_best_attempt, select_steps, success_rate


def A(k, z, *flags):
    return AttemptLabels(attempt=k, decision=z, reasonable=list(flags))


def test_success_rate_is_mean_outcome():
    assert success_rate([A(1, 1, True), A(2, 0, True), A(3, 1, False)]) == pytest.approx(2 / 3)


def test_best_attempt_prefers_success_over_higher_quality_failure():
    attempts = [A(1, 0, True, True, True), A(2, 1, True, False), A(3, 1, True, True, False)]
    assert select_best_attempt(attempts).attempt == 3  # Q=2/3 beats Q=1/2 among successes


def test_best_attempt_among_failures_uses_quality_then_earliest():
    attempts = [A(1, 0, True, False), A(2, 0, True, True, False, False), A(3, 0, False)]
    assert select_best_attempt(attempts).attempt == 1  # both Q=0.5: the earlier wins


def test_mastered_task_is_dropped_and_all_fail_task_kept():
    mastered = select_steps("t", [A(1, 1, True), A(2, 1, True), A(3, 1, True)])
    assert not mastered.kept and mastered.drop_reason == "mastered"
    all_fail = select_steps("t", [A(1, 0, True, False, True), A(2, 0, False, False)])
    assert all_fail.kept and all_fail.chosen_attempts == (1,)
    assert all_fail.steps == ((1, 0), (1, 2))  # only reasonable steps of k*


def test_sr_range_is_configurable():
    attempts = [A(1, 1, True), A(2, 0, True), A(3, 0, True)]
    assert not select_steps("t", attempts, FilterConfig(sr_min=0.5, sr_max=1.0)).kept
    assert select_steps("t", attempts, FilterConfig(sr_min=0.0, sr_max=0.5)).kept


def test_without_best_attempt_every_attempt_contributes():
    sel = select_steps("t", [A(1, 0, True, False), A(2, 1, True)], FilterConfig(best_attempt=False))
    assert sel.steps == ((1, 0), (2, 0))


def test_task_with_no_reasonable_steps_is_dropped_with_reason():
    sel = select_steps("t", [A(1, 0, False, False)])
    assert not sel.kept and sel.drop_reason == "no_reasonable_steps"


def test_bad_range_fails_naming_the_bounds():
    with pytest.raises(ValueError, match="sr_min"):
        FilterConfig(sr_min=0.8, sr_max=0.2)
