"""An episode's moves in order (`episode_move`, `move_sample`): its steps, the stop, its detours' recoveries, as
`world_step_sample` draws them."""

from __future__ import annotations

import random
from functools import lru_cache

import pytest

from ops.actions import ActionType
from training.base.world_episodes import FINISH, episode_move, move_sample, solve_episode, world_step_sample


@lru_cache(maxsize=1)
def episode():
    solved = solve_episode("albums.delete", 0, random.Random(0), detour_rate=1.0)
    assert solved is not None and len(solved.steps) == 5 and len(solved.detours) == 1
    return solved


def test_every_move_in_order_then_the_stop_then_the_detours():
    ep = episode()
    done = [s.done_line for s in ep.steps]
    moves = [episode_move(ep, t) for t in range(len(ep.steps) + 2)]
    for t, step in enumerate(ep.steps):
        assert moves[t].screen == step.screen and moves[t].target == step.action
        assert moves[t].history == tuple(done[:t]) and moves[t].kind == f"world_{step.action.type.value}"
    stop = moves[len(ep.steps)]
    assert (stop.screen, stop.target, stop.history, stop.kind) == (ep.final, FINISH, tuple(done), "world_done")
    detour = ep.detours[0]
    recover = moves[-1]
    assert recover.target == detour.recover.action and recover.kind == "world_recover"
    assert recover.history == (*done[:detour.at], detour.wrong.done_line)
    with pytest.raises(IndexError, match="outside the 7 moves"):
        episode_move(ep, 7)
    with pytest.raises(IndexError):
        episode_move(ep, -1)


def test_a_drawn_sample_is_one_of_the_moves():
    ep = episode()
    every = [move_sample(ep, episode_move(ep, t)) for t in range(7)]
    assert every[0].target.type == ActionType.CLICK and every[0].hints == () and every[0].kind == "world_click"
    rng = random.Random(1)
    drawn = [world_step_sample(rng, ep) for _ in range(60)]
    assert all(sample in every for sample in drawn) and len({s.kind for s in drawn}) >= 3
    hinted = world_step_sample(random.Random(2), ep, hint_rate=1.0)
    assert hinted.hints and hinted.kind.endswith("_hinted")
    assert move_sample(ep, episode_move(ep, 0), hints=("Hint.",)).kind == "world_click_hinted"
