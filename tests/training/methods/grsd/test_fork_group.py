"""Pairing the attempts of one task (GRSD teacher selection, UI-Voyager §3.3)."""

from __future__ import annotations

import pytest

from training.methods.grsd.forks import ForkConfig, ForkInputError, detect_fork_points, detect_group_fork_points, prepare_trajectory
from tests.training.methods.grsd.screens import DONE, click


@pytest.fixture
def attempts(make_trajectory):
    long_success = make_trajectory("s_long", True, [("A", click(2)), ("X", click(0)), ("A", click(2)),
                                                     ("B", click(1)), ("C", click(0)), ("D", DONE)])
    short_success = make_trajectory("s_short", True, [("A", click(2)), ("B", click(1)), ("C", click(0)), ("D", DONE)])
    fail_1 = make_trajectory("f1", False, [("A", click(1)), ("X", click(3)), ("Y", DONE)])
    fail_2 = make_trajectory("f2", False, [("A", click(2)), ("B", click(2)), ("E", click(4)), ("Y", DONE)])
    return [long_success, fail_1, short_success, fail_2]


def test_shortest_success_teaches_every_failure(attempts):
    results = detect_group_fork_points(attempts)
    assert [(r.success_id, r.failed_id) for r in results] == [("s_short", "f1"), ("s_short", "f2")]
    assert [[(f.failed_step, f.success_step) for f in r.forks] for r in results] == [[(0, 0)], [(1, 1)]]


def test_all_teachers_and_a_shared_thumbnail_cache(attempts):
    cache: dict = {}
    results = detect_group_fork_points(attempts, teachers="all", cache=cache)
    assert len(results) == 4
    # Only screens whose trees match across attempts are ever decoded (A, B, and X, which
    # both s_long and f1 visit), each once although several attempts show them.
    assert len(cache) == 3


def test_groups_without_both_outcomes_have_no_pairs(attempts):
    assert detect_group_fork_points([a for a in attempts if a.success]) == []
    assert detect_group_fork_points([a for a in attempts if not a.success]) == []


def test_duplicate_attempt_ids_are_rejected(attempts):
    with pytest.raises(ForkInputError, match="unique"):
        detect_group_fork_points([attempts[0], attempts[0]])


def test_prepared_trajectories_must_share_the_config(attempts):
    prepared = prepare_trajectory(attempts[2], ForkConfig(ssim_threshold=0.9))
    with pytest.raises(ForkInputError, match="different ForkConfig"):
        detect_fork_points(prepared, attempts[1])
