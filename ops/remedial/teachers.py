"""Teachers of corrective teaching (MobileWizard §3.4.4): who completes a failed task from the
state just before the step the verifier named.

`SolverTeacher`, the embedded default, is the simulator's solver: a template task's shortest
solution (the search the programmatic critic's distances and hints come from), or for a
navigation, toggle or entry-action task a greedy descent of the critic's goal distance. A
stronger policy (MobileWizard's UI-TARS-1.5) plugs in through `PolicyTeacher`, which lets any
`ops.agent.episode.Policy` act from that state in an environment of its own.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from typing import Callable, Protocol

from ops.actions import Action, ActionType
from ops.judging.critic.goal_distance import UNREACHABLE, better_action, goal_distance_fn
from ops.agent.episode import Environment, Policy, PolicyRequest, TaskSpec
from ops.agent.reasoning_memory import ReasoningMemory
from ops.rollout.engine import describe_action
from ops.agent.step_outcome import verified_outcome
from ops.samples.step_samples import FINISH
from phonesim.phone import Phone
from phonesim.solver import shortest_path
from phonesim.tasks import instantiate


class TeacherFailure(Exception):
    """The teacher could not complete the task; `reason` is a short key the report counts by."""

    def __init__(self, reason: str, detail: str):
        super().__init__(f"{reason}: {detail}")
        self.reason, self.detail = reason, detail


@dataclass(frozen=True)
class TeachingRequest:
    """Where the teacher takes over."""

    task: TaskSpec
    state: str  # environment snapshot (JSON) before the failing step
    steps_left: int  # of the task's step budget, a final terminate included
    history: list[str]  # the agent's history lines of the steps it keeps
    memory: ReasoningMemory | None = None  # the agent's memory after those steps (structured style); read, not changed


class Teacher(Protocol):
    name: str

    def complete(self, request: TeachingRequest) -> list[Action]:
        """Actions that finish the task from `request.state` in at most `request.steps_left`
        steps; raises `TeacherFailure` when it cannot."""


class SolverTeacher:
    """The simulator's solver as teacher; its plan ends with "finish the task" where the budget
    leaves room for it."""

    name = "solver"

    def __init__(self, world_seed: int = 0):
        self.world_seed = world_seed

    def complete(self, request: TeachingRequest) -> list[Action]:
        phone = Phone(self.world_seed)
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


class RestorableEnvironment(Environment, Protocol):
    def restore(self, snapshot: str) -> None: ...


class PolicyTeacher:
    """A policy as teacher: it acts from the failing step's state, in an environment restored
    there, with the agent's history so far, until it terminates or the budget is spent. A teacher
    in the structured-reasoning style (`keeps_memory`) carries a memory instead: the agent's (when
    the agent wrote in that style too) or a fresh one, updated with each step's parse and verified
    outcome as in rollouts."""

    def __init__(self, policy: Policy, env_factory: Callable[[], RestorableEnvironment], name: str | None = None):
        self.policy, self.env_factory = policy, env_factory
        self.name = name or f"policy:{policy.version}"

    def complete(self, request: TeachingRequest) -> list[Action]:
        env = self.env_factory()
        env.reset(request.task)
        env.restore(request.state)
        history, actions = list(request.history), []
        memory = None
        if self.policy.keeps_memory:  # its requests carry the memory, never history lines
            memory = copy.deepcopy(request.memory) if request.memory is not None else ReasoningMemory()
        while len(actions) < request.steps_left:
            observation = env.observe()
            [output] = self.policy.act_batch([PolicyRequest(observation, request.task.instruction,
                                                            [] if memory is not None else list(history), [], memory)])
            parsed = self.policy.parse(output.raw_text, observation)
            if not parsed.ok:
                raise TeacherFailure("invalid_output", f"step {len(actions) + 1}: {parsed.action.reason}")
            action = parsed.action
            actions.append(action)
            history.append(parsed.conclusion or describe_action(action))
            if action.type == ActionType.TERMINATE:
                if action.status != "success":
                    raise TeacherFailure("gave_up", f"terminated with status {action.status!r}")
                break
            result = env.step(action)
            if not result.ok:
                raise TeacherFailure("action_rejected", f"{action.to_json()}: {result.reason}")
            if memory is not None:
                memory.update(parsed, verified_outcome(action, result.ok, observation, env.observe()))
        return actions
