"""One interface wherever the loop needs a verdict on an episode: the rollout outcome, RFT's later
rounds, AdaGRPO's episode reward, the benchmark's success and critic calibration.

A `Judge` gives a `Verdict` that names the judge it came from. Two kinds exist:

- `EnvironmentJudge`: the environment's own judge, where it has one (the simulator's task judges,
  AndroidWorld's `is_successful` where its suite runs); it reads the attempt's ground truth.
- `CriticJudge`: the critic's trajectory verdict (MobileForge §2.3.1), the only judge on a user's
  own device: the LLM critic through litellm.

Callers never ask the simulator: they hold a judge (`resources.judging.episode_judge` picks it from
the environment).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from ops.agent.episode import ANDROIDWORLD_JUDGE, SIMULATOR_JUDGE, AttemptRecord, Critic, CriticFeedback

PROGRAMMATIC_CRITIC = "programmatic"  # the critic whose decision is the simulator's judge
ENVIRONMENT_JUDGES = frozenset({SIMULATOR_JUDGE, ANDROIDWORLD_JUDGE})
# critics whose decision *is* an environment judge's verdict: calibrating them against it measures nothing
JUDGE_CRITICS = ENVIRONMENT_JUDGES | {PROGRAMMATIC_CRITIC}


class NoVerdict(ValueError):
    """The judge cannot decide this attempt (an environment judge on a task it has no judge for)."""


@dataclass(frozen=True)
class Verdict:
    """Success or failure of one episode, why, and which judge said so. `progress` and `reward`
    only where the judge measures them (the simulator's goal checks and its shaped reward)."""

    success: bool
    judge: str
    reason: str
    progress: float | None = None
    reward: float | None = None


class Judge(Protocol):
    name: str

    def verdict(self, attempt: AttemptRecord) -> Verdict: ...


class EnvironmentJudge:
    """The environment's own verdict, carried by the attempt's ground truth."""

    def __init__(self, name: str) -> None:
        self.name = name

    def verdict(self, attempt: AttemptRecord) -> Verdict:
        truth = attempt.ground_truth
        if truth is None:
            raise NoVerdict(f"{attempt.task.task_id}: the {self.name} judge has no verdict on this task "
                            "(no judge for it in the environment); judge it with the critic")
        return Verdict(truth.success, truth.judge, f"{truth.judge} judge", truth.progress, truth.reward)


class CriticJudge:
    """The critic's trajectory verdict: its decision (MobileForge §2.3.1), with its reason."""

    def __init__(self, critic: Critic) -> None:
        self.critic = critic
        self.name = critic.name

    def verdict(self, attempt: AttemptRecord) -> Verdict:
        feedback = attempt.feedback if attempt.feedback is not None else self.critic.evaluate(attempt)
        return Verdict(bool(feedback.decision), feedback.critic, feedback.reason)


class VerdictCritic:
    """A `Critic` that gives a judge's verdict and nothing else (no step labels, no hints): for the
    benchmark and online RL, where only the outcome matters."""

    def __init__(self, judge: Judge) -> None:
        self.judge = judge
        self.name = judge.name

    def evaluate(self, attempt: AttemptRecord) -> CriticFeedback:
        verdict = self.judge.verdict(attempt)
        return CriticFeedback(decision=int(verdict.success), reason=verdict.reason, failure_step=None,
                              task_feasible=True, step_analysis=[], hint=None, critic=verdict.judge)


def verdict_critic(judge: Judge) -> Critic:
    """The critic that records `judge`'s verdicts: the critic itself for a critic's verdict (its full
    feedback is worth keeping), else a `VerdictCritic`."""
    return judge.critic if isinstance(judge, CriticJudge) else VerdictCritic(judge)

