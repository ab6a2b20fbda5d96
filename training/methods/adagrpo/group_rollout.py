"""Groups of episodes for trajectory-level GRPO (MobileRL §2.1): G episodes of one task, every
one forked from the same snapshot of the task's initial state, stepped in batches across many
simulator instances by the rollout engine (`ops.rollout.engine.run_rollouts`), rewarded by the
simulator's judge.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ops.agent.episode import AttemptRecord, CriticFeedback, Observation, Policy, TaskSpec
from ops.rollout.engine import RolloutConfig, RolloutSummary, run_rollouts
from ops.environments.simulator import SimEnvironment
from phonesim.metrics import shaped_reward
from phonesim.phone import Phone
from phonesim.tasks import TaskInstance
from phonesim.state import copy_json


@dataclass(frozen=True)
class GroupStart:
    """The snapshot every episode of a task's group starts from, and the instance that judges it."""

    instance: TaskInstance
    snapshot: str  # JSON of the phone state after the template's setup


class ForkingSimEnvironment(SimEnvironment):
    """A simulator whose `reset` forks a task's group snapshot: the first reset of a task builds
    its instance and takes the snapshot, every later one restores that same JSON, so the G
    episodes of a group start from byte-identical state."""

    def __init__(self, starts: dict[str, GroupStart], size: tuple[int, int] = (1080, 2400), world_seed: int = 0):
        super().__init__(size, world_seed)
        self.starts = starts

    def reset(self, task: TaskSpec) -> Observation:
        if not task.template_id:
            raise ValueError(f"{task.task_id}: group rollouts need a verifiable template task")
        start = self.starts.get(task.task_id)
        if start is None:
            super().reset(task)
            self.starts[task.task_id] = GroupStart(self.instance, self.snapshot())
            return self.observe()
        self.instance = start.instance
        self.phone = Phone(self.world_seed, self.size)
        self.restore(start.snapshot)
        self._initial_view = copy_json(self.phone.logical_state())
        return self.observe()


class SimulatorJudge:
    """`Critic` whose decision is the simulator judge's verdict (the verifiable reward of online
    RL); it writes no hints and labels no steps."""

    name = "simulator-judge"

    def evaluate(self, attempt: AttemptRecord) -> CriticFeedback:
        if attempt.ground_truth is None:
            raise ValueError(f"{attempt.task.task_id}: no simulator verdict (not a verifiable task)")
        success = attempt.ground_truth.success
        return CriticFeedback(decision=int(success), reason="simulator judge", failure_step=None, task_feasible=True,
                              step_analysis=[], hint=None, critic=self.name)


class GroupCollector:
    """An attempt store that keeps one run's attempts in memory, grouped by task (no resuming:
    every epoch samples fresh instances)."""

    def __init__(self) -> None:
        self.groups: dict[str, list[AttemptRecord]] = defaultdict(list)

    def completed(self, task: TaskSpec, policy_version: str) -> dict:
        return {}

    def save(self, record: AttemptRecord) -> None:
        self.groups[record.task.task_id].append(record)


def run_groups(tasks: Sequence[TaskSpec], group_size: int, policy: Policy, starts: dict[str, GroupStart],
               env_factory: Callable[[], ForkingSimEnvironment], max_parallel: int = 64,
               ) -> tuple[dict[str, list[AttemptRecord]], RolloutSummary]:
    """G = `group_size` independent episodes of each task (no hints), all tasks' episodes stepped
    together in batches of up to `max_parallel`; returns the attempts by task id and the engine's
    counts. Episodes lost to errors are missing from their group (the summary counts them)."""
    collector = GroupCollector()
    summary = run_rollouts(list(tasks), env_factory, policy, SimulatorJudge(), collector,
                           RolloutConfig(attempts=group_size, use_hints=False, max_parallel_tasks=max_parallel))
    return dict(collector.groups), summary


def episode_reward(record: AttemptRecord, start: GroupStart, shaped: bool) -> float:
    """The trajectory reward: the judge's outcome (1 success, 0 otherwise), or with `shaped` the
    progress-shaped reward of MobileGym appendix G (`phonesim.metrics.shaped_reward`) computed
    from the episode's final state."""
    truth = record.ground_truth
    if truth is None or record.final_state is None:
        raise ValueError(f"{record.task.task_id}#{record.attempt}: no final state or verdict to reward")
    if not shaped:
        return float(truth.success)
    phone = Phone(start.instance.world_seed)
    phone.restore(json.loads(record.final_state))
    verdict = start.instance.judge(phone, record.answer)
    return shaped_reward(verdict, phone.terminated, truth.overdue, start.instance.answer_spec is not None)
