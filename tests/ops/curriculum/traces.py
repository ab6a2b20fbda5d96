"""Real exploration trajectories of the embedded simulator, explored once per test session.

The explorer drives `ops.environments.simulator.SimEnvironment` (the project's simulator adapter); small
screens keep the PNG rendering cheap.
"""

from __future__ import annotations

from functools import lru_cache

from ops.exploration.explorer import ExplorationConfig, Transition, explore_app, trajectories
from ops.environments.simulator import SimEnvironment

SCREEN = (270, 600)


@lru_cache(maxsize=None)
def explored(app: str, max_transitions: int = 60) -> tuple[tuple[Transition, ...], ...]:
    """Root-to-leaf trajectories of a depth-first exploration of `app`."""
    transitions = explore_app(SimEnvironment(size=SCREEN), app, ExplorationConfig(max_transitions=max_transitions))
    return tuple(tuple(path) for path in trajectories(transitions))
