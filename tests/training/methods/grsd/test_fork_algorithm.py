"""Algorithm 1 of UI-Voyager on a hand-written similarity grid (no images)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from training.methods.grsd.forks import match_fork_points

THETA = 0.95


@dataclass
class GridOracle:
    """Observations given as state labels; SSIM given explicitly where it matters."""

    success: list[str]
    failed: list[str]
    ssim: dict[tuple[int, int], float] = field(default_factory=dict)
    same_actions: set[tuple[int, int]] = field(default_factory=set)
    mute: set[int] = field(default_factory=set)  # successful steps without an action

    def __post_init__(self):
        self.n_success, self.n_failed = len(self.success), len(self.failed)

    def similarity(self, i, j):
        default = 1.0 if self.success[i] == self.failed[j] else 0.3
        return self.ssim.get((i, j), default)

    def same(self, i, j):
        return self.similarity(i, j) >= THETA

    def actions_equivalent(self, i, j):
        return (i, j) in self.same_actions

    def can_teach(self, i):
        return i not in self.mute


def forks(oracle, action_aware=True):
    return [(m.failed_step, m.success_step, m.divergence) for m in match_fork_points(oracle, action_aware)]


def test_identical_trajectories_have_no_fork_until_the_shared_last_step():
    oracle = GridOracle(list("ABCD"), list("ABCD"))
    # Steps 0-2 align; the last step is terminal (eq. 4) and only the action can tell it apart.
    assert forks(oracle) == [(3, 3, "terminal")]
    oracle.same_actions = {(3, 3)}
    assert forks(oracle) == []


def test_transition_alignment_advances_i_min_and_skips_the_step():
    oracle = GridOracle(list("ABCD"), list("ABXY"))
    assert forks(oracle) == [(1, 1, "next_state_differs")]


def test_alignment_takes_the_earliest_successful_step():
    # A repeats in the teacher; the failed attempt's A->B aligns with i=0 (not i=2), so the
    # later divergence at B can still match teacher step 1.
    oracle = GridOracle(list("ABABC"), list("ABX"))
    assert forks(oracle) == [(1, 1, "next_state_differs")]


def test_teacher_is_the_highest_ssim_then_the_earliest_index():
    oracle = GridOracle(list("PQPQ"), list("PZ"), ssim={(0, 0): 0.96, (2, 0): 0.99})
    assert forks(oracle)[0][:2] == (0, 2)
    tie = GridOracle(list("PQPQ"), list("PZ"), ssim={(0, 0): 0.97, (2, 0): 0.97})
    assert forks(tie)[0][:2] == (0, 0)


def test_monotonicity_forbids_matching_earlier_teacher_steps():
    # After failed step 0 matched teacher step 2, failed step 1 (state A again) may not
    # match teacher step 0.
    oracle = GridOracle(list("ABCDE"), list("CA"), ssim={})
    assert forks(oracle) == [(0, 2, "next_state_differs")]


def test_same_teacher_step_may_teach_several_failed_steps():
    oracle = GridOracle(list("ABC"), list("BXBY"))
    assert forks(oracle) == [(0, 1, "next_state_differs"), (2, 1, "next_state_differs")]


def test_equivalent_actions_are_skipped_only_when_action_aware():
    oracle = GridOracle(list("ABC"), list("AX"), same_actions={(0, 0)})
    assert forks(oracle) == []
    assert forks(oracle, action_aware=False) == [(0, 0, "next_state_differs")]


def test_steps_without_an_action_cannot_teach():
    oracle = GridOracle(list("AB"), list("AB"), mute={1})
    assert forks(oracle) == []


def test_fork_at_step_zero_then_nothing_matches():
    oracle = GridOracle(list("ABCD"), list("AXYZ"))
    assert forks(oracle) == [(0, 0, "next_state_differs")]


def test_random_grids_respect_the_invariants():
    rng = np.random.default_rng(0)
    for _ in range(200):
        success = list(rng.choice(list("ABCD"), size=rng.integers(1, 8)))
        failed = list(rng.choice(list("ABCDE"), size=rng.integers(1, 8)))
        oracle = GridOracle(success, failed)
        result = match_fork_points(oracle)
        teacher_steps = [m.success_step for m in result]
        failed_steps = [m.failed_step for m in result]
        assert teacher_steps == sorted(teacher_steps)  # monotone
        assert failed_steps == sorted(set(failed_steps))  # each failed step at most once
        for m in result:
            assert oracle.same(m.success_step, m.failed_step)
            terminal = m.success_step == len(success) - 1 or m.failed_step == len(failed) - 1
            assert terminal or not oracle.same(m.success_step + 1, m.failed_step + 1)
