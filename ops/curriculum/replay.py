"""Replaying an exploration trajectory on a fresh simulated phone, step by step.

The stored exploration rows keep each action and a summary of the screens around it, not the
data it changed. The state miners (`state_tasks`, `entry_tasks`) replay a trajectory from a
fresh launch of its app on a phone of the explored size (element indices depend on it) and read
what each action did: the screen and page before it, the elements it chose from, and the
logical-state paths it changed.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ops.actions import Action
from ops.curriculum.model import Trajectory, trajectory_app
from phonesim.phone import Phone
from phonesim.state import copy_json, diff_paths


@dataclass
class ReplayedStep:
    """One replayed action. `phone` is the live phone after it: read it before advancing."""

    index: int  # position in the trajectory
    action: Action
    screen: str  # the app's screen before the action
    page: dict[str, Any]  # copy of the top page before the action (params, dialog, menu, fields)
    stack_depth: int  # pages on the app's back stack before the action
    elements: list[dict[str, Any]]  # the elements the action chose from
    changed: list[str]  # logical-state paths the action changed
    phone: Phone


def replay(path: Trajectory, world_seed: int, size: tuple[int, int], stop: int | None = None) -> Iterator[ReplayedStep]:
    """The steps of `path` (up to index `stop`, exclusive) replayed from a fresh launch of its
    app. Ends early when an action fails on the replay: exploration diverged from it there, so
    nothing after is grounded."""
    app = trajectory_app(path)
    phone = Phone(world_seed, size)
    phone.launch(app)
    for i, transition in enumerate(path[:stop]):
        depth = len(phone.state["os"]["tasks"].get(phone.current_app) or [])
        page = copy_json(phone.top_page()) if depth else {}
        screen, elements = phone.current_screen, phone.observe().elements
        before = copy_json(phone.logical_state())
        if not phone.step(transition.action).ok:
            return
        yield ReplayedStep(i, transition.action, screen, page, depth, elements,
                           diff_paths(before, phone.logical_state()), phone)
