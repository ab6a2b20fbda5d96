"""Groups of episodes for trajectory-level GRPO (MobileRL §2.1): G episodes of one task, every one
started from the same initial state (on the simulator a forked snapshot,
`ops.environments.simulator.ForkingSimEnvironment`; on a device the app cleared), stepped in batches
by the rollout engine (`ops.rollout.engine.run_rollouts`), rewarded by the run's judge
(`ops.judging.judges`: the simulator's judges, or the critic's verdict on a device).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence

from ops.agent.episode import AttemptRecord, Environment, Policy, TaskSpec
from ops.judging.judges import Judge, verdict_critic
from ops.rollout.engine import RolloutConfig, RolloutSummary, run_rollouts


class GroupCollector:
    """An attempt store that keeps one run's attempts in memory, grouped by task (no resuming:
    every epoch samples fresh instances)."""

    def __init__(self) -> None:
        self.groups: dict[str, list[AttemptRecord]] = defaultdict(list)

    def completed(self, task: TaskSpec, policy_version: str) -> dict:
        return {}

    def save(self, record: AttemptRecord) -> None:
        self.groups[record.task.task_id].append(record)


def run_groups(tasks: Sequence[TaskSpec], group_size: int, policy: Policy, judge: Judge,
               env_factory: Callable[[], Environment], max_parallel: int = 64,
               ) -> tuple[dict[str, list[AttemptRecord]], RolloutSummary]:
    """G = `group_size` independent episodes of each task (no hints), all tasks' episodes stepped
    together in batches of up to `max_parallel`, each judged by `judge`; returns the attempts by task
    id and the engine's counts. Episodes lost to errors are missing from their group (the summary counts them)."""
    collector = GroupCollector()
    summary = run_rollouts(list(tasks), env_factory, policy, verdict_critic(judge), collector,
                           RolloutConfig(attempts=group_size, use_hints=False, max_parallel_tasks=max_parallel))
    return dict(collector.groups), summary


def episode_reward(record: AttemptRecord, shaped: bool) -> float:
    """The trajectory reward: the judge's verdict (1 success, 0 otherwise), or with `shaped` the
    environment judge's progress-shaped reward (MobileGym appendix G; only the simulator's judges
    shape one)."""
    if record.feedback is None:
        raise ValueError(f"{record.task.task_id}#{record.attempt}: no verdict to reward")
    if not shaped:
        return float(record.feedback.decision)
    if record.ground_truth is None or record.ground_truth.reward is None:
        raise ValueError(f"{record.task.task_id}#{record.attempt}: reward 'shaped' needs an environment judge that "
                         f"shapes rewards (the simulator's); {record.feedback.critic} gives an outcome only: "
                         "use reward 'outcome'")
    return record.ground_truth.reward

