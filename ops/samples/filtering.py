"""HiFPO task filtering and step selection (MobileForge §2.3.2–2.3.3, eq. 10–14, appendix C).

Order matters (appendix C): the success-rate filter uses the whole attempt group of a task,
then the best attempt k* is chosen, then only its reasonable steps are kept.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

# The step-sample options every config that builds step samples offers (step_datasets, RFT), described once.
FINISH_AT_GOAL = (
    "End a successful attempt that acted on after its goal held (the critic labels it: `goal_held`) at its first "
    "such step, with 'finish the task' as that step's target (not in MobileForge or UI-Voyager). Off by default: with "
    "the tiny base, RFT trained this way declares success after a few steps of anything (held-out false complete "
    "0.95) and HiFPO still never terminates.")
HINT_FREE_COPIES = (
    "Also add each hinted step with its prompt as it would read without the hints, so training covers the hint-free "
    "prompts of test time (a policy that copies the hinted action learns nothing transferable from hinted prompts "
    "alone). Ours, not MobileForge's: false = hint-contextualized prompts only, exactly MobileForge's recipe.")


@dataclass(frozen=True)
class FilterConfig:
    sr_min: float = 0.0  # keep tasks with sr_min <= SR(x) <= sr_max
    sr_max: float = 0.9  # the default drops mastered (SR = 1) tasks only, for K <= 10
    best_attempt: bool = True  # pick k* by eq. 13; False keeps reasonable steps of every attempt
    reasonable_only: bool = True  # eq. 14; False keeps every step of the chosen attempt(s)
    # a successful attempt that acted on after its goal held ends, in the samples, at the first such
    # step, relabelled "finish" (not in MobileForge; see AttemptLabels and FINISH_AT_GOAL)
    finish_at_goal: bool = False

    def __post_init__(self) -> None:
        if not 0.0 <= self.sr_min <= self.sr_max <= 1.0:
            raise ValueError(f"need 0 <= sr_min <= sr_max <= 1, got [{self.sr_min}, {self.sr_max}]")


@dataclass(frozen=True)
class AttemptLabels:
    """Critic labels of one attempt: outcome z_k and per-step reasonableness v_k^(t)."""

    attempt: int
    decision: int
    reasonable: Sequence[bool]
    # first step taken when the goal already held (critics that can tell, e.g. the programmatic one);
    # a policy that never terminates reaches the goal and keeps acting, so its successful attempts
    # teach that acting on is right, unless they end there with "finish"
    goal_held_at: int | None = None

    @property
    def quality(self) -> float:
        """Q_k: fraction of reasonable steps (eq. 12); 0 for an attempt with no steps."""
        return sum(self.reasonable) / len(self.reasonable) if self.reasonable else 0.0


@dataclass(frozen=True)
class TaskSelection:
    task_id: str
    success_rate: float
    kept: bool
    drop_reason: str | None  # "mastered" | "sr_below_min" | "sr_above_max" | "no_reasonable_steps"
    chosen_attempts: tuple[int, ...]
    steps: tuple[tuple[int, int], ...]  # (attempt, step index) pairs selected for training
    finish_steps: tuple[tuple[int, int], ...] = ()  # (attempt, step) whose target becomes "finish the task"


def success_rate(attempts: Sequence[AttemptLabels]) -> float:
    """SR(x) = mean outcome over the K attempts (eq. 10)."""
    if not attempts:
        raise ValueError("success rate of a task with no attempts")
    return sum(a.decision for a in attempts) / len(attempts)


def select_best_attempt(attempts: Sequence[AttemptLabels]) -> AttemptLabels:
    """k*(x): the successful attempt with the highest Q_k, else the highest-Q_k attempt (eq. 13).

    Ties go to the earlier attempt (it saw fewer hints, so its prompt is closer to test time).
    """
    successes = [a for a in attempts if a.decision == 1]
    pool = successes or list(attempts)
    return max(pool, key=lambda a: (a.quality, -a.attempt))


def select_steps(task_id: str, attempts: Sequence[AttemptLabels],
                 config: FilterConfig = FilterConfig()) -> TaskSelection:
    """Apply the SR filter, k* selection and reasonable-step filter to one task."""
    sr = success_rate(attempts)
    if sr < config.sr_min or sr > config.sr_max:
        reason = "mastered" if sr == 1.0 else ("sr_below_min" if sr < config.sr_min else "sr_above_max")
        return TaskSelection(task_id, sr, False, reason, (), ())
    chosen = [select_best_attempt(attempts)] if config.best_attempt else list(attempts)
    steps, finish = [], []
    for a in chosen:
        end = _finish_step(a) if config.finish_at_goal else None
        steps += [(a.attempt, t) for t, ok in enumerate(a.reasonable[:end])
                  if ok or not config.reasonable_only]
        if end is not None:
            finish.append((a.attempt, end))
    if not steps and not finish:
        return TaskSelection(task_id, sr, False, "no_reasonable_steps",
                             tuple(a.attempt for a in chosen), ())
    return TaskSelection(task_id, sr, True, None, tuple(a.attempt for a in chosen), tuple(steps), tuple(finish))


def _finish_step(attempt: AttemptLabels) -> int | None:
    """Where a successful attempt should have finished: its first step taken with the goal held."""
    if attempt.decision != 1 or attempt.goal_held_at is None:
        return None
    if not 0 <= attempt.goal_held_at < len(attempt.reasonable):
        raise ValueError(f"attempt {attempt.attempt}: goal_held_at {attempt.goal_held_at} is not one of its "
                         f"{len(attempt.reasonable)} steps")
    return attempt.goal_held_at
