"""Teachers of corrective teaching (MobileWizard §3.4.4): who completes a failed task from the
state just before the step the verifier named.

`SolverTeacher` (`ops.remedial.solver_teacher`, imported only on the simulator), the embedded default,
is the simulator's solver: a template task's shortest
solution (the search the programmatic critic's distances and hints come from), or for a
navigation, toggle or entry-action task a greedy descent of the critic's goal distance. A
stronger policy (MobileWizard's UI-TARS-1.5) plugs in through `PolicyTeacher`, which lets any
`ops.agent.episode.Policy` act from that state in an environment of its own.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Callable, Protocol

from ops.actions import Action, ActionType
from ops.agent.episode import Environment, Policy, PolicyRequest, TaskSpec
from ops.agent.reasoning_memory import ReasoningMemory
from ops.rollout.engine import describe_action
from ops.agent.step_outcome import verified_outcome


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
