"""The curriculum task record x = (ι, B, c, v, p) of MobileForge eq. 5, grounded in an exploration
trajectory, and what the miners need to know about trajectories.

A trajectory is a root-to-leaf path of the exploration tree (`ops.exploration.explorer.trajectories`).
Its id is the leaf transition's id; transition ids are hierarchical (`settings-g0.1.2`), so the
id names the whole path and its prefix before the first "." is the exploration trace (goal
search) of the `exploration_transitions` table.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import polars as pl

from ops.agent.episode import TaskSpec
from ops.exploration.explorer import Transition
from ops.data.schemas import VARIATION_TYPES

Trajectory = Sequence[Transition]
# The simulator's curriculum tries train-split template seeds below this and no others (its benchmark
# draws unseen instances from here up).
MINED_SEEDS = 12


@dataclass(frozen=True)
class GoalState:
    """Data a task must leave behind: leaf paths of the simulator's logical state and their
    values, set on `screen` (where the critic's distance and hints lead). An entry-action task
    also names the pages to open from `screen` (`opens`: label tapped, screen, page params of
    each) and the labels to tap on the last one (`taps`); see `ops.judging.critic.goal_distance`."""

    screen: str
    values: dict[str, Any]
    opens: tuple[dict[str, Any], ...] = ()
    taps: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not self.values:
            raise ValueError(f"goal state on {self.screen!r} names no data path")
        object.__setattr__(self, "opens", tuple(self.opens))
        object.__setattr__(self, "taps", tuple(self.taps))
        if self.opens and not self.taps:
            raise ValueError(f"goal state on {self.screen!r} opens pages but names no tap")

    def to_params(self) -> dict[str, Any]:
        params: dict[str, Any] = {"screen": self.screen, "values": dict(self.values)}
        if self.taps:
            params.update(opens=[dict(o) for o in self.opens], taps=list(self.taps))
        return params


@dataclass(frozen=True)
class CurriculumTask:
    """One row of `curriculum_tasks`. Verifiable tasks carry how the simulator judges them:
    a train-split template instance (`template_id`, `template_seed`, `template_params`), a
    screen to reach (`goal_screen`) or data to leave behind (`goal_state`)."""

    task_id: str
    app: str
    instruction: str
    step_budget: int
    core_functionality: str
    variation_type: str  # one of ops.data.schemas.VARIATION_TYPES
    prerequisites: str | None
    source_trace_id: str  # id of the grounding trajectory (see module docstring)
    verifiable: bool
    template_id: str | None = None
    template_seed: int | None = None
    template_params: dict[str, Any] | None = None
    goal_screen: str | None = None
    goal_state: GoalState | None = None

    def __post_init__(self) -> None:
        problems = []
        if self.variation_type not in VARIATION_TYPES:
            problems.append(f"variation_type {self.variation_type!r} not in {VARIATION_TYPES}")
        if self.step_budget < 1:
            problems.append(f"step_budget {self.step_budget} < 1")
        if not self.instruction.strip():
            problems.append("empty instruction")
        if self.template_id is not None and (self.template_seed is None or self.template_params is None):
            problems.append("template_id needs template_seed and template_params")
        judges = sum(j is not None for j in (self.template_id, self.goal_screen, self.goal_state))
        if judges > 1:
            problems.append("a task is judged by one of template, goal screen or goal state, not several")
        if self.verifiable != (judges == 1):
            problems.append("verifiable must be true exactly when a template, goal screen or goal state is set")
        if problems:
            raise ValueError(f"curriculum task {self.task_id}: " + "; ".join(problems))

    def to_row(self) -> dict[str, Any]:
        """Row for the `curriculum_tasks` table (params as canonical JSON text)."""
        row = asdict(self)
        row["template_params"] = canonical_params(self.template_params) if self.template_params is not None else None
        row["goal_state"] = canonical_params(self.goal_state.to_params()) if self.goal_state is not None else None
        return row

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> CurriculumTask:
        data = dict(row)
        if data.get("template_params") is not None:
            data["template_params"] = json.loads(data["template_params"])
        if data.get("goal_state") is not None:
            data["goal_state"] = GoalState(**json.loads(data["goal_state"]))
        return cls(**data)

    def to_task_spec(self) -> TaskSpec:
        """What the rollout engine runs; `ops.environments.simulator.SimEnvironment` judges a goal screen
        from `params["goal_screen"]` and a goal state from `params["goal_state"]`."""
        params = dict(self.template_params or {})
        if self.goal_screen is not None:
            params["goal_screen"] = self.goal_screen
        if self.goal_state is not None:
            params["goal_state"] = self.goal_state.to_params()
        return TaskSpec(task_id=self.task_id, instruction=self.instruction, step_budget=self.step_budget,
                        app=self.app, template_id=self.template_id, params=params, seed=self.template_seed or 0)


def canonical_params(params: Mapping[str, Any]) -> str:
    return json.dumps(params, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def stable_phrase(phrases: Sequence[str], key: str) -> str:
    """One of `phrases`, chosen by `key` the same way in every run and process."""
    return phrases[sum(map(ord, key)) % len(phrases)]


def budget_with_slack(steps: int, slack_ratio: float, min_slack: int) -> int:
    """A step budget: `steps` plus max(`min_slack`, ceil(`slack_ratio` * steps))."""
    return steps + max(min_slack, math.ceil(slack_ratio * steps))


def trajectory_id(path: Trajectory) -> str:
    if not path:
        raise ValueError("a trajectory has at least one transition")
    return path[-1].transition_id


def trajectory_app(path: Trajectory) -> str:
    if not path:
        raise ValueError("a trajectory has at least one transition")
    return path[0].before.app


@dataclass(frozen=True)
class ScreenReach:
    """Where exploration reached a screen first: `steps` actions from the app's first screen."""

    app: str
    screen: str
    steps: int
    trajectory_id: str


def screens_reached(paths: Sequence[Trajectory]) -> dict[tuple[str, str], ScreenReach]:
    """Every (app, screen) the trajectories reach, with the fewest actions that reach it; ties go
    to the earlier trajectory, so the result is deterministic for a given order."""
    best: dict[tuple[str, str], ScreenReach] = {}

    def offer(app: str, screen: str, steps: int, tid: str) -> None:
        key = (app, screen)
        if key not in best or steps < best[key].steps:
            best[key] = ScreenReach(app, screen, steps, tid)

    for path in paths:
        tid = trajectory_id(path)
        offer(path[0].before.app, path[0].before.screen, 0, tid)
        for i, t in enumerate(path, start=1):
            offer(t.after.app, t.after.screen, i, tid)
    return best


def task_specs(tasks: pl.DataFrame, verifiable_only: bool, max_tasks: int | None) -> list[TaskSpec]:
    """Curriculum rows (a `curriculum_tasks` frame) as runnable tasks."""
    if verifiable_only:
        tasks = tasks.filter(pl.col("verifiable"))
    if max_tasks is not None:
        tasks = tasks.head(max_tasks)
    return [CurriculumTask.from_row(r).to_task_spec() for r in tasks.iter_rows(named=True)]
