import pytest

from ops.samples.filtering import AttemptLabels, FilterConfig, select_best_attempt, select_steps, success_rate


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


FINISH = FilterConfig(finish_at_goal=True)


def test_a_success_that_acted_on_after_its_goal_ends_there_with_a_finish_step():
    overdue = AttemptLabels(attempt=2, decision=1, reasonable=[True, False, True, False, True], goal_held_at=3)
    sel = select_steps("t", [A(1, 0, True, False), overdue], FINISH)
    assert sel.steps == ((2, 0), (2, 2)) and sel.finish_steps == ((2, 3),)
    # without the relabelling (the default) every reasonable step stays, the re-toggle after the goal included
    old = select_steps("t", [A(1, 0, True, False), overdue])
    assert old.steps == ((2, 0), (2, 2), (2, 4)) and old.finish_steps == ()


def test_goal_held_counts_only_for_successful_attempts_and_must_name_a_step():
    failed = AttemptLabels(attempt=1, decision=0, reasonable=[True, True], goal_held_at=1)  # undone later
    assert select_steps("t", [failed], FINISH).finish_steps == ()
    at_first_step = AttemptLabels(attempt=1, decision=1, reasonable=[False], goal_held_at=0)
    sel = select_steps("t", [at_first_step, A(2, 0, False)], FINISH)
    assert sel.kept and sel.steps == () and sel.finish_steps == ((1, 0),)
    with pytest.raises(ValueError, match="goal_held_at 5 is not one of its 2 steps"):
        select_steps("t", [AttemptLabels(attempt=1, decision=1, reasonable=[True, True], goal_held_at=5), A(2, 0)],
                     FINISH)
