"""The simulator's solver as the corrective teacher (MobileWizard §3.4.4): a template task's shortest
solution, or for a navigation, toggle or entry-action task a greedy descent of the programmatic
critic's goal distance. Imported only where the environment is the simulator."""

from __future__ import annotations

import json
from typing import Callable

from ops.actions import Action, ActionType
from ops.agent.episode import TaskSpec
from ops.judging.critic.goal_distance import UNREACHABLE, better_action, goal_distance_fn
from ops.remedial.teachers import TeacherFailure, TeachingRequest
from ops.samples.step_samples import FINISH
from phonesim.phone import Phone
from phonesim.solver import shortest_path
from phonesim.tasks import instantiate, world_phone


class SolverTeacher:
    """The simulator's solver as teacher; its plan ends with "finish the task" where the budget
    leaves room for it."""

    name = "solver"

    def __init__(self, world_seed: int = 0):
        self.world_seed = world_seed

    def complete(self, request: TeachingRequest) -> list[Action]:
        phone = world_phone(request.task.template_id, self.world_seed)
        phone.restore(json.loads(request.state))
        task = request.task
        plan = self._shortest(phone, task, request.steps_left) if task.template_id \
            else self._descent(phone, task, request.steps_left)
        return plan + [FINISH] if len(plan) < request.steps_left else plan

    def _shortest(self, phone: Phone, task: TaskSpec, steps_left: int) -> list[Action]:
        plan = shortest_path(phone, instantiate(task.template_id, task.seed, self.world_seed))
        if plan is None:
            raise TeacherFailure("no_plan", f"no clean solution within the task's {task.step_budget} steps")
        if len(plan) > steps_left:
            raise TeacherFailure("over_budget", f"the shortest solution takes {len(plan)} steps, {steps_left} are left")
        return plan

    def _descent(self, phone: Phone, task: TaskSpec, steps_left: int) -> list[Action]:
        """Each step the action that leaves the fewest actions to the goal: a tap on the screen,
        opening the task's app, back or home. Where none does (the goal distance counts screens, so
        a tab or a folder on the way leaves it as it was), a tap after which one does."""
        distance = goal_distance_fn(task, self.world_seed)
        plan: list[Action] = []
        while (left := distance(json.dumps(phone.snapshot()))) > 0:
            if left >= UNREACHABLE:
                raise TeacherFailure("no_plan", f"no route to the goal from '{phone.current_screen}'")
            if len(plan) >= steps_left:
                raise TeacherFailure("over_budget", f"{left} actions still needed after {steps_left} steps")
            action = better_action(phone, distance, _descent_candidates(phone, task)) \
                or _plateau_tap(phone, task, distance, left)
            if action is None:
                raise TeacherFailure("no_plan", f"no action brings the goal closer on '{phone.current_screen}'")
            phone.step(action)
            plan.append(action)
        return plan


def _taps(phone: Phone) -> list[Action]:
    return [Action(ActionType.CLICK, element=e["index"]) for e in phone.observe().elements if e.get("clickable")]


def _descent_candidates(phone: Phone, task: TaskSpec) -> list[Action]:
    opens = [Action(ActionType.OPEN_APP, app=task.app)] if task.app and phone.current_app != task.app else []
    return _taps(phone) + opens + [Action(ActionType.SYSTEM_BUTTON, button=b) for b in ("back", "home")]


def _plateau_tap(phone: Phone, task: TaskSpec, distance: Callable[[str | None], int], left: int) -> Action | None:
    """The first tap that leaves the goal distance at `left` and after which some action lowers it.
    Leaves the phone in its state."""
    state = phone.snapshot()
    try:
        for tap in _taps(phone):
            phone.restore(state)
            if phone.step(tap).ok and distance(json.dumps(phone.snapshot())) == left \
                    and better_action(phone, distance, _descent_candidates(phone, task)) is not None:
                return tap
        return None
    finally:
        phone.restore(state)
