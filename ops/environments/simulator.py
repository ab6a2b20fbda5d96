"""The embedded simulator behind the `Environment` and `ExplorableEnvironment` interfaces.

Tasks with a `template_id` start from that template's initial state and are judged by its
deterministic judge. Tasks without one (curriculum navigation and toggle variants) start on
the home screen and are judged by screen reach (a `goal_screen` param) or by data left behind
(a `goal_state` param: logical-state paths and their values, `goal_state_met`).
"""

from __future__ import annotations

import json
from typing import Any

from ops.actions import Action
from ops.agent.episode import SIMULATOR_JUDGE, Anchor, EnvStep, GroundTruth, Observation, TaskSpec
from phonesim.apps import load_apps
from phonesim.metrics import shaped_reward
from phonesim.phone import Phone
from phonesim.tasks import TaskInstance, instantiate
from phonesim.state import copy_json, diff_paths, flatten


def goal_state_met(phone: Phone, goal: dict[str, Any]) -> tuple[int, int]:
    """(paths holding their goal value, paths) of a `goal_state` param on `phone`."""
    values = goal["values"]
    state = phone.logical_state()
    tops = {p.split(".", 1)[0] for p in values}  # flatten only the apps the goal names
    now = flatten({k: state[k] for k in tops if k in state})
    return sum(now.get(p) == v for p, v in values.items()), len(values)


def template_task_spec(instance: TaskInstance, task_id: str | None = None) -> TaskSpec:
    """The runnable task of a template instance: its own instruction, params, step budget and first
    app, so `SimEnvironment.reset` builds and judges the very instance the instruction describes."""
    return TaskSpec(task_id=task_id or instance.id, instruction=instance.instruction,
                    step_budget=instance.step_budget, app=instance.apps[0], template_id=instance.template.id,
                    params=dict(instance.params), seed=instance.seed)


def template_instance_spec(template_id: str, seed: int, world_seed: int, task_id: str) -> TaskSpec:
    """The runnable task of `template_id` instantiated at `seed` in world `world_seed`."""
    return template_task_spec(instantiate(template_id, seed, world_seed), task_id)


class SimEnvironment:
    """One simulated phone; create one per concurrent episode (they share world data)."""

    def __init__(self, size: tuple[int, int] = (1080, 2400), world_seed: int = 0):
        self.size = size
        self.world_seed = world_seed
        self.phone = Phone(world_seed, size)
        self.instance: TaskInstance | None = None
        self._initial_view: Any = None

    # --- Environment --------------------------------------------------------------------
    def reset(self, task: TaskSpec) -> Observation:
        if task.template_id:
            self.instance = instantiate(task.template_id, task.seed, self.world_seed)
            self.phone = self.instance.make_phone(self.size)
        else:
            self.instance = None
            self.phone = Phone(self.world_seed, self.size)
        self._initial_view = copy_json(self.phone.logical_state())  # the system part is live state
        return self.observe()

    def step(self, action: Action) -> EnvStep:
        result = self.phone.step(action)
        return EnvStep(result.ok, result.reason)

    def observe(self) -> Observation:
        obs = self.phone.observe()
        return Observation(screenshot_png=obs.png, elements=obs.elements, a11y=obs.a11y,
                           app=obs.app, screen=obs.screen)

    def snapshot(self) -> str:
        return json.dumps(self.phone.snapshot(), separators=(",", ":"))

    def restore(self, snapshot: str) -> None:
        self.phone.restore(json.loads(snapshot))

    def ground_truth(self, task: TaskSpec, answer: str | None, terminated: bool,
                     n_steps: int) -> GroundTruth | None:
        """Simulator verdict. Overdue (MobileGym §4.3: goal reached but the agent kept acting
        until truncation) is approximated from the final state: success without terminating. The
        reward is MobileGym appendix G's progress-shaped reward for a template task, the progress
        for a navigation or goal-state task."""
        claimed = self.phone.terminated == "success"
        reward = None
        if self.instance is not None:
            verdict = self.instance.judge(self.phone, answer)
            success, progress, side = verdict.success, verdict.progress, len(verdict.side_effects)
            reward = shaped_reward(verdict, self.phone.terminated, success and not terminated,
                                   self.instance.answer_spec is not None)
        elif task.params.get("goal_screen"):
            success = (self.phone.current_app, self.phone.current_screen) == (
                task.app, task.params["goal_screen"])
            progress = float(success)
            side = len(diff_paths(self._initial_view, self.phone.logical_state()))
        elif task.params.get("goal_state"):
            goal = task.params["goal_state"]
            met, total = goal_state_met(self.phone, goal)
            success, progress = met == total, met / total
            side = len(set(diff_paths(self._initial_view, self.phone.logical_state())) - set(goal["values"]))
        else:
            return None
        return GroundTruth(success=success, progress=progress,
                           false_complete=claimed and not success, side_effects=side,
                           overdue=success and not terminated, judge=SIMULATOR_JUDGE,
                           reward=progress if reward is None else reward)

    # --- ExplorableEnvironment ----------------------------------------------------------
    def launch(self, app: str) -> Observation:
        self.phone = Phone(self.world_seed, self.size)
        self.phone.launch(app)
        return self.observe()

    def anchors(self, app: str) -> list[Anchor]:
        screens = load_apps()[app].screens
        return [Anchor(s.id, s.doc or s.id) for s in screens.values()]


class ForkingSimEnvironment(SimEnvironment):
    """A simulator whose `reset` forks a task's group snapshot (online RL, MobileRL §2.1): the first
    reset of a task builds its instance and takes the snapshot (into `starts`, shared by every
    environment of one batch of groups), every later one restores that same JSON, so the G episodes
    of a group start from byte-identical state."""

    def __init__(self, starts: dict[str, tuple[TaskInstance, str]], size: tuple[int, int] = (1080, 2400),
                 world_seed: int = 0):
        super().__init__(size, world_seed)
        self.starts = starts

    def reset(self, task: TaskSpec) -> Observation:
        if not task.template_id:
            raise ValueError(f"{task.task_id}: group rollouts need a verifiable template task")
        start = self.starts.get(task.task_id)
        if start is None:
            super().reset(task)
            self.starts[task.task_id] = (self.instance, self.snapshot())
            return self.observe()
        self.instance = start[0]
        self.phone = self.instance.make_phone(self.size)  # a phone of the task's world (its apps)
        self.restore(start[1])
        self._initial_view = copy_json(self.phone.logical_state())
        return self.observe()
