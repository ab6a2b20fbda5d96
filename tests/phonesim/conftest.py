"""Shared fixtures: one A* solution per template instance, found once per test session."""

from __future__ import annotations

from functools import lru_cache

from phonesim import instantiate, run_actions
from training.base.world_solutions import solution


@lru_cache(maxsize=None)
def solved(template_id: str, seed: int = 1):
    """(task, solution actions) for a template instance; the solution is found by A* (a pretraining instance's is
    the repository's stored one where it still solves: `training.base.world_solutions`)."""
    task = instantiate(template_id, seed)
    path = solution(template_id, seed)
    assert path is not None, f"{template_id}: A* found no solution"
    return task, tuple(path)


def solved_cleanly(template_id: str, seed: int = 1):
    """`solved`, checked: within the step budget, judged a clean success, and no success one step short."""
    task, path = solved(template_id, seed)
    assert 0 < len(path) <= task.step_budget
    done = run_actions(task, list(path))
    assert done.success and not done.side_effects and done.invalid_steps == 0, done
    assert not run_actions(task, list(path[:-1])).success
    return task, path
