"""Relabel stored rollouts with another critic (the evaluator ablation of MobileForge table 6).

Attempts are read back from the attempt store and judged again; nothing is written, so the
stored originals (and their feedback) stay as they were. A failure is recorded in place for
its attempt, never raised, so one bad attempt does not sink a relabelling run.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import NamedTuple, Sequence

from ops.data.attempt_store import ParquetAttemptStore, load_attempt
from ops.agent.episode import Critic, CriticFeedback


class Rejudged(NamedTuple):
    task_id: str
    attempt: int
    outcome: CriticFeedback | Exception  # the new feedback, or what stopped this attempt's judgement


def rejudge(store: ParquetAttemptStore, policy_version: str, task_ids: Sequence[str], critic: Critic,
            max_workers: int = 1) -> list[Rejudged]:
    """Judge every stored attempt of `task_ids` with `critic`, in task then attempt order.

    `max_workers` attempts are judged at once (the critic must then be thread-safe, as
    `LLMCritic` is). A load or evaluation error becomes that attempt's outcome.
    """
    if max_workers < 1:
        raise ValueError(f"rejudge: max_workers must be >= 1, got {max_workers}")
    keys = [(task_id, s["attempt"]) for task_id in task_ids for s in store.summaries(policy_version, task_id)]

    def judge(key: tuple[str, int]) -> Rejudged:
        task_id, attempt = key
        try:
            record = load_attempt(store, policy_version, task_id, attempt)
            return Rejudged(task_id, attempt, critic.evaluate(record))
        except Exception as exc:  # noqa: BLE001 — collected per attempt, by design
            return Rejudged(task_id, attempt, exc)

    if max_workers == 1:
        return [judge(k) for k in keys]
    with ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="rejudge") as pool:
        return list(pool.map(judge, keys))
