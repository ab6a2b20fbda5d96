"""Trajectory builder fixture for the fork-detection tests (renders shared across tests)."""

from __future__ import annotations

import dataclasses

import pytest

from training.methods.grsd.forks import Step, Trajectory
from training.methods.grsd.forks.synthetic import make_step
from tests.training.methods.grsd.screens import HEIGHT, SCREENS, WIDTH


@pytest.fixture(scope="session")
def step_cache() -> dict:
    return {}


@pytest.fixture(scope="session")
def make_trajectory(step_cache):
    """Build a trajectory from (screen name, action) pairs; renders are shared across tests."""

    def build(attempt_id: str, success: bool, steps, with_trees: bool = True, clocks=None) -> Trajectory:
        out: list[Step] = []
        for t, (name, action) in enumerate(steps):
            screen = SCREENS[name]
            if clocks is not None:
                screen = dataclasses.replace(screen, clock=clocks[t])
            key = (screen, with_trees)
            if key not in step_cache:
                step_cache[key] = make_step(screen, None, WIDTH, HEIGHT, with_tree=with_trees)
            cached = step_cache[key]
            out.append(Step(screenshot=cached.screenshot, action=action, tree=cached.tree))
        return Trajectory(attempt_id, success, out)

    return build
