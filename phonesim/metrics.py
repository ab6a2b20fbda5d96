"""Episodes and their metrics (MobileGym §4.3): success, progress, false complete, unexpected
side effects, overdue termination; and the shaped training reward of MobileGym appendix G."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from phonesim.actions import Action, ActionType, ParseFailure
from phonesim.observation import StepResult
from phonesim.phone import Phone
from phonesim.tasks import JudgeResult, TaskInstance

CLEAN_PENALTY = 8.0  # goal reached with unexpected side effects
FALSE_COMPLETE_PENALTY = 8.0  # declared success without it
ABORT_PENALTY = 5.0  # declared failure after reaching the goal
OVERDUE_PENALTY = 5.0  # reached the goal but ran into the step budget


@dataclass(frozen=True)
class EpisodeMetrics:
    success: bool
    progress: float
    false_complete: bool  # terminated with "success" but the task is not a full success
    side_effects: tuple[str, ...]
    overdue: bool  # goal reached at some step, yet no terminate before the budget ran out
    post_success_abort: bool
    steps: int
    invalid_steps: int  # recorded no-ops
    status: str | None  # terminate status, None when truncated
    shaped_reward: float

    @property
    def unexpected_side_effects(self) -> bool:
        return bool(self.side_effects)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["side_effects"] = list(self.side_effects)
        return d


def shaped_reward(j: JudgeResult, status: str | None, overdue: bool, answer_spec_present: bool) -> float:
    """MobileGym appendix G: progress p' divided by 8 if success is unclean, by 8 on a false
    complete with p' > 0, by 5 on a post-success abort, by 5 when overdue. For answer tasks a
    wrong submitted answer earns no credit for the bookkeeping "answer_submitted" check."""
    checks = list(j.checks)
    if answer_spec_present and j.answer_ok is False:
        checks = [c for c in checks if c[0] != "answer_submitted"]
    p = sum(ok for _, ok in checks) / len(checks) if checks else 1.0
    r = p
    if j.success and j.side_effects:
        r /= CLEAN_PENALTY
    if status == "success" and not (j.success and j.clean) and p > 0:
        r /= FALSE_COMPLETE_PENALTY
    if j.success and status == "failure":
        r /= ABORT_PENALTY
    if overdue:
        r /= OVERDUE_PENALTY
    return r


@dataclass
class Episode:
    """One attempt at a task: steps actions until terminate or the step budget, then scores."""

    task: TaskInstance
    phone: Phone | None = None
    history: list[StepResult] = field(default_factory=list)
    goal_reached_at: int | None = None

    def __post_init__(self) -> None:
        if self.phone is None:
            self.phone = self.task.make_phone()

    @property
    def done(self) -> bool:
        return self.phone.terminated is not None or len(self.history) >= self.task.step_budget

    def step(self, action: Action | ParseFailure | dict | str) -> StepResult:
        if self.done:
            return StepResult(False, "episode is over")
        result = self.phone.step(action)
        self.history.append(result)
        if self.goal_reached_at is None and result.ok:
            j = self.task.judge(self.phone)
            if j.success:
                self.goal_reached_at = len(self.history)
        return result

    def metrics(self) -> EpisodeMetrics:
        j = self.task.judge(self.phone)
        status = self.phone.terminated
        overdue = status is None and self.goal_reached_at is not None and len(self.history) >= self.task.step_budget
        return EpisodeMetrics(
            success=j.success, progress=j.progress,
            false_complete=status == "success" and not j.success,
            side_effects=j.side_effects, overdue=overdue,
            post_success_abort=j.success and status == "failure",
            steps=len(self.history), invalid_steps=sum(not r.ok for r in self.history), status=status,
            shaped_reward=shaped_reward(j, status, overdue, self.task.answer_spec is not None))


def run_actions(task: TaskInstance, actions: list[Action], terminate: bool = True) -> EpisodeMetrics:
    """Play a fixed action list (then `terminate success` if asked) and score it."""
    ep = Episode(task)
    for a in actions:
        ep.step(a)
    if terminate and not ep.done:
        ep.step(Action(ActionType.TERMINATE, status="success"))
    return ep.metrics()
