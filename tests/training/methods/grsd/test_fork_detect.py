"""End-to-end fork detection on synthetic screens with known fork points (UI-Voyager Alg. 1)."""

from __future__ import annotations

import pytest

from training.methods.grsd.forks import ForkConfig, detect_fork_points, prepare_trajectory
from tests.training.methods.grsd.screens import DONE, click, type_text

# Successful attempt: Home -> Settings -> Bluetooth -> Pairing -> done.
SUCCESS = [("A", click(2)), ("B", click(1)), ("C", click(0)), ("D", DONE)]


def pairs(result) -> list[tuple[int, int]]:
    return [(f.failed_step, f.success_step) for f in result.forks]


@pytest.fixture
def success(make_trajectory):
    return make_trajectory("s", True, SUCCESS)


def test_divergence_at_the_first_step(make_trajectory, success):
    failed = make_trajectory("f", False, [("A", click(1)), ("X", click(3)), ("Y", DONE)])
    result = detect_fork_points(success, failed)
    assert pairs(result) == [(0, 0)]
    fork = result.forks[0]
    assert fork.similarity == 1.0 and fork.divergence == "next_state_differs"
    assert fork.next_similarity is None  # the trees told B and X apart: no pixels needed
    assert fork.tree_match is True
    visual = detect_fork_points(success, failed, ForkConfig(use_trees=False)).forks[0]
    assert visual.tree_match is None and visual.next_similarity < 0.95


def test_failed_steps_matching_no_teacher_tree_are_never_decoded(make_trajectory, success):
    failed = make_trajectory("f", False, [("A", click(1)), ("X", click(3)), ("Y", click(2)), ("Z", DONE)])
    teacher, student = prepare_trajectory(success), prepare_trajectory(failed)
    assert pairs(detect_fork_points(teacher, student)) == [(0, 0)]
    assert teacher.decoded == 1 and student.decoded == 1  # only the shared home screen


def test_divergence_in_the_middle(make_trajectory, success):
    failed = make_trajectory("f", False, [("A", click(2)), ("B", click(2)), ("E", click(4)), ("Y", DONE)])
    assert pairs(detect_fork_points(success, failed)) == [(1, 1)]


def test_detour_and_loop_back_to_the_same_screen(make_trajectory, success):
    # Wrong turn at Settings, back to Settings, right turn (aligned), then a wrong turn at Bluetooth.
    failed = make_trajectory(
        "f", False,
        [("A", click(2)), ("B", click(5)), ("X", {"type": "system_button", "args": {"button": "back"}}),
         ("B", click(1)), ("C", click(4)), ("Z", DONE)],
    )
    assert pairs(detect_fork_points(success, failed)) == [(1, 1), (4, 2)]


def test_no_fork_when_screens_never_match(make_trajectory, success):
    failed = make_trajectory("f", False, [("X", click(1)), ("Y", click(2)), ("Z", DONE)])
    result = detect_fork_points(success, failed)
    assert result.forks == []
    assert result.stats.visual_matches == 0
    assert result.stats.tree_rejected == 4 * 3  # every pair is told apart by its tree alone


def test_failed_attempt_that_stops_early_forks_at_its_last_step(make_trajectory, success):
    failed = make_trajectory("f", False, [("A", click(2)), ("B", click(3))])
    result = detect_fork_points(success, failed)
    assert pairs(result) == [(1, 1)]
    assert result.forks[0].divergence == "terminal" and result.forks[0].next_similarity is None


def test_status_bar_clock_changes_are_ignored(make_trajectory):
    success = make_trajectory("s", True, SUCCESS, clocks=["09:00", "09:01", "09:02", "09:03"])
    failed = make_trajectory("f", False, [("A", click(2)), ("B", click(2)), ("E", click(4)), ("Y", DONE)],
                             clocks=["17:45", "17:46", "17:47", "17:48"])
    result = detect_fork_points(success, failed)
    assert pairs(result) == [(1, 1)]
    assert result.forks[0].similarity == 1.0  # the clock is cropped away: identical thumbnails
    assert result.forks[0].tree_match is True  # and the clock element is dropped from the tree


def test_same_action_on_the_same_screen_is_not_a_fork(make_trajectory, success):
    # Same click on Settings, but the app went elsewhere (e.g. a flaky load): nothing to correct.
    failed = make_trajectory("f", False, [("A", click(2)), ("B", click(1)), ("Y", DONE)])
    assert pairs(detect_fork_points(success, failed)) == []
    paper_only = ForkConfig(action_aware=False)  # UI-Voyager as written: next-state divergence only
    assert pairs(detect_fork_points(success, failed, paper_only)) == [(1, 1)]


# Tree-only differences: the screens pass SSIM, the trees say they are different states.

TYPO_SUCCESS = [("N_empty", type_text("hello")), ("N_hello", click(9)), ("A", DONE)]
TYPO_FAILED = [("N_empty", type_text("helo")), ("N_helo", click(9)), ("A", DONE)]


def test_typo_in_a_field_is_a_different_state_when_trees_are_present(make_trajectory):
    success = make_trajectory("s", True, TYPO_SUCCESS)
    failed = make_trajectory("f", False, TYPO_FAILED)
    result = detect_fork_points(success, failed)
    assert result.stats.tree_rejected >= 1
    assert pairs(result) == [(0, 0)]  # the typing step is the fork
    assert result.forks[0].tree_match is True


def test_typo_is_invisible_without_trees(make_trajectory):
    success = make_trajectory("s", True, TYPO_SUCCESS, with_trees=False)
    failed = make_trajectory("f", False, TYPO_FAILED, with_trees=False)
    result = detect_fork_points(success, failed)
    assert pairs(result) == []  # visually the attempts are the same all along
    assert result.stats.tree_rejected == 0


def test_trees_can_be_switched_off(make_trajectory):
    success = make_trajectory("s", True, TYPO_SUCCESS)
    failed = make_trajectory("f", False, TYPO_FAILED)
    assert pairs(detect_fork_points(success, failed, ForkConfig(use_trees=False))) == []


@pytest.mark.parametrize("with_trees, expected", [(True, [(0, 0)]), (False, [])])
def test_other_switch_flipped(make_trajectory, with_trees, expected):
    success = make_trajectory("s", True, [("B", click(0)), ("B_wifi", click(9)), ("A", DONE)], with_trees=with_trees)
    failed = make_trajectory("f", False, [("B", click(1)), ("B_bt", click(9)), ("A", DONE)], with_trees=with_trees)
    result = detect_fork_points(success, failed)
    assert pairs(result) == expected
    assert result.forks == [] or result.forks[0].tree_match is True


@pytest.mark.parametrize("with_trees, expected", [(True, [(0, 0)]), (False, [])])
def test_neighbouring_list_item_opened(make_trajectory, with_trees, expected):
    success = make_trajectory("s", True, [("L", click(3)), ("I3", click(8)), ("A", DONE)], with_trees=with_trees)
    failed = make_trajectory("f", False, [("L", click(4)), ("I4", click(8)), ("A", DONE)], with_trees=with_trees)
    result = detect_fork_points(success, failed)
    assert pairs(result) == expected
    visual = detect_fork_points(success, failed, ForkConfig(use_trees=False))
    assert visual.stats.visual_matches == 3  # L-L, I3-I4 and A-A do look the same


def test_tree_on_one_side_only_falls_back_to_visual(make_trajectory):
    success = make_trajectory("s", True, TYPO_SUCCESS)
    failed = make_trajectory("f", False, TYPO_FAILED, with_trees=False)
    result = detect_fork_points(success, failed)
    assert pairs(result) == []
