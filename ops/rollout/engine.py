"""Hint-guided multi-attempt rollout (MobileForge §2.3.1, eq. 8–9).

Attempts of one task run in order so hints from attempts 1..k-1 reach attempt k (without
hints they are independent and run side by side too); different tasks run side by side in
lockstep so the policy sees one batch per tick (one forward pass for all active episodes
instead of one per episode). Every finished attempt is saved before
the next one starts, so a crash loses at most the attempts in flight.

An `InfrastructureError` during an attempt (a device dropped, a connection lost) is the
environment's failure, not the policy's: the attempt is counted as an infrastructure failure,
its environment is discarded, and it runs again from the start on another environment. When the
factory has no environment free, new attempts wait for a running one to finish.
"""

from __future__ import annotations

import logging
from collections import deque
from dataclasses import dataclass, field
from typing import Callable, Iterable, Protocol, Sequence

from ops.actions import Action, ActionType, ParseFailure
from ops.environments.infrastructure import InfrastructureError
from ops.agent.reasoning_memory import ReasoningMemory
from ops.agent.step_outcome import verified_outcome
from ops.agent.episode import (
    AttemptRecord,
    Critic,
    CriticFeedback,
    Environment,
    Hint,
    Observation,
    Policy,
    PolicyRequest,
    StepRecord,
    TaskSpec,
)

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RolloutConfig:
    attempts: int = 3  # K attempts per task
    use_hints: bool = True  # append hints of attempts 1..k-1 to attempt k (MobileForge table 4 ablation)
    max_parallel_tasks: int = 32  # episodes stepped together in one batch
    loop_window: int = 4  # this many identical (screen, action) steps in a row end the attempt
    max_policy_errors: int = 3  # consecutive failed policy batches before the run stops
    max_infrastructure_retries: int = 3  # reruns of one attempt after infrastructure failures


class AttemptStore(Protocol):
    def completed(self, task: TaskSpec, policy_version: str) -> dict[int, CriticFeedback]:
        """Feedback of the attempts already stored for this task and policy, by attempt index."""

    def save(self, record: AttemptRecord) -> None: ...


def attempts_to_run(store: AttemptStore, tasks: Sequence[TaskSpec], policy_version: str, attempts: int) -> int:
    """How many of `attempts` per task `store` does not hold yet for this policy (what a resumed run has left)."""
    return sum(max(0, attempts - len(store.completed(t, policy_version))) for t in tasks)


@dataclass
class RolloutSummary:
    attempts_run: int = 0
    attempts_resumed: int = 0
    attempts_failed: int = 0  # attempts lost to policy, critic or infrastructure errors (not stored; rerun retries)
    infrastructure_failures: int = 0  # attempts interrupted by their environment and run again
    invalid_actions: int = 0
    errors: list[str] = field(default_factory=list)

    @classmethod
    def combined(cls, parts: list[RolloutSummary]) -> RolloutSummary:
        """The summary of rollouts run in parts (e.g. shards of the tasks in worker processes)."""
        return cls(*(sum(getattr(p, name) for p in parts) for name in (
            "attempts_run", "attempts_resumed", "attempts_failed", "infrastructure_failures", "invalid_actions")),
            [error for p in parts for error in p.errors])


class RolloutAborted(RuntimeError):
    """Raised when the policy keeps failing; finished attempts are already stored."""


@dataclass
class _Episode:
    """One attempt in flight."""

    task: TaskSpec
    attempt: int
    hints: list[Hint]
    env: Environment
    observation: Observation
    steps: list[StepRecord] = field(default_factory=list)
    history: list[str] = field(default_factory=list)
    memory: ReasoningMemory | None = None  # the structured-reasoning style's memory (MobileWizard eq. 2)
    answer: str | None = None
    repeat: int = 0
    last_key: tuple[str, str] | None = None

    def request(self) -> PolicyRequest:
        """The policy request of this episode's next step: history lines, or the memory that replaces them."""
        history = [] if self.memory is not None else list(self.history)
        return PolicyRequest(self.observation, self.task.instruction, history, self.hints, self.memory)


def _hints_of(feedback: Iterable[CriticFeedback]) -> list[Hint]:
    return [f.hint for f in feedback if f.hint]


def run_rollouts(
    tasks: list[TaskSpec],
    env_factory: Callable[[], Environment],
    policy: Policy,
    critic: Critic,
    store: AttemptStore,
    config: RolloutConfig = RolloutConfig(),
    on_attempt: Callable[[AttemptRecord], None] | None = None,
) -> RolloutSummary:
    """Run K attempts per task, resuming from `store`; returns counts of what happened.

    With hints, the attempts of a task run one after another (attempt k reads the hints of
    1..k-1); without, they are independent and all wait in the queue at once, so batches stay
    full to the end of the run instead of draining into one chain of attempts.
    """
    summary = RolloutSummary()
    # (task, attempt index, hints so far): with hints one entry per task (its next attempt),
    # without hints every attempt left to run
    pending: deque[tuple[TaskSpec, int, list[Hint]]] = deque()
    for task in tasks:
        done = store.completed(task, policy.version)
        summary.attempts_resumed += len(done)
        todo = [k for k in range(1, config.attempts + 1) if k not in done]
        if not todo:
            continue
        if config.use_hints:
            pending.append((task, todo[0], _hints_of(done[k] for k in sorted(done) if k < todo[0])))
        else:
            pending.extend((task, k, []) for k in todo)

    free_envs: list[Environment] = []
    active: list[_Episode] = []
    consecutive_errors = 0
    env_limit: int | None = None  # environments the factory could give, once it ran out
    interruptions: dict[tuple[str, int], int] = {}

    def interrupted(task: TaskSpec, attempt: int, hints: list[Hint], exc: InfrastructureError) -> None:
        """Count an infrastructure failure; queue the attempt again unless it ran out of reruns."""
        nonlocal env_limit
        env_limit = None  # the factory may have another environment in place of the lost one
        summary.infrastructure_failures += 1
        key = (task.task_id, attempt)
        interruptions[key] = interruptions.get(key, 0) + 1
        if interruptions[key] > config.max_infrastructure_retries:
            summary.attempts_failed += 1
            summary.errors.append(f"infrastructure: {task.task_id}#{attempt} given up after "
                                  f"{interruptions[key]} interruptions, last: {exc}")
        else:
            summary.errors.append(f"infrastructure: {task.task_id}#{attempt} interrupted, run again: {exc}")
            pending.appendleft((task, attempt, hints))
        log.warning(summary.errors[-1])

    def start(task: TaskSpec, attempt: int, hints: list[Hint]) -> bool:
        """Start an attempt; False when no environment is free (it waits at the head of the queue)."""
        nonlocal env_limit
        if free_envs:
            env = free_envs.pop()
        else:
            try:
                env = env_factory()
            except InfrastructureError as exc:
                if not active:
                    raise RolloutAborted(f"no environment to run on: {exc}; {summary.attempts_run} attempts "
                                         "were stored and will be resumed") from exc
                env_limit = len(active)
                pending.appendleft((task, attempt, hints))
                return False
        try:
            observation = env.reset(task)
        except InfrastructureError as exc:
            interrupted(task, attempt, hints, exc)
            return True
        active.append(_Episode(task, attempt, hints, env, observation,
                               memory=ReasoningMemory() if policy.keeps_memory else None))
        return True

    def finish(ep: _Episode, end_reason: str) -> None:
        # the environment is read before the episode lets go of it: a failure here is an interruption
        record = AttemptRecord(
            task=ep.task, attempt=ep.attempt, policy_version=policy.version, hints=ep.hints,
            steps=ep.steps, end_reason=end_reason, answer=ep.answer,
            final_state=ep.env.snapshot(), final_screenshot_png=ep.env.observe().screenshot_png,
        )
        terminated = end_reason == "terminated"
        record.ground_truth = ep.env.ground_truth(ep.task, ep.answer, terminated, len(ep.steps))
        active.remove(ep)
        free_envs.append(ep.env)
        try:
            record.feedback = critic.evaluate(record)
        except Exception as exc:  # a critic failure loses this attempt only; rerun retries it
            summary.attempts_failed += 1
            summary.errors.append(f"critic {critic.name} on {ep.task.task_id}#{ep.attempt}: {exc}")
            log.warning(summary.errors[-1])
            return
        store.save(record)
        summary.attempts_run += 1
        if on_attempt:
            on_attempt(record)
        if config.use_hints and ep.attempt < config.attempts:
            hints = ep.hints + ([record.feedback.hint] if record.feedback.hint else [])
            pending.appendleft((ep.task, ep.attempt + 1, hints))

    while pending or active:
        while pending and len(active) < config.max_parallel_tasks and (
                free_envs or env_limit is None or len(active) < env_limit):
            if not start(*pending.popleft()):
                break
        if not active:
            continue
        requests = [ep.request() for ep in active]
        try:
            outputs = policy.act_batch(requests)
        except Exception as exc:
            consecutive_errors += 1
            summary.errors.append(f"policy {policy.version}: {exc}")
            log.warning(summary.errors[-1])
            if consecutive_errors >= config.max_policy_errors:
                summary.attempts_failed += len(active)
                raise RolloutAborted(
                    f"policy failed {consecutive_errors} times in a row, last: {exc}; "
                    f"{summary.attempts_run} attempts were stored and will be resumed"
                ) from exc
            continue
        consecutive_errors = 0
        for ep, out in zip(list(active), outputs):
            try:
                _advance(ep, out, policy.parse, summary, finish, config)
            except InfrastructureError as exc:
                if ep in active:
                    active.remove(ep)
                interrupted(ep.task, ep.attempt, ep.hints, exc)
    return summary


def _advance(ep: _Episode, out, parse: Callable, summary: RolloutSummary,
             finish: Callable[[_Episode, str], None], config: RolloutConfig) -> None:
    """Apply one policy output to its episode and end the episode when it is over."""
    parsed_output = parse(out.raw_text, ep.observation)
    parsed, conclusion = parsed_output.action, parsed_output.conclusion or ""
    obs = ep.observation
    state = ep.env.snapshot()
    env_ok, env_reason, blocked = False, None, False
    if isinstance(parsed, ParseFailure):
        summary.invalid_actions += 1
        env_reason = f"invalid action: {parsed.reason}"
    else:
        # terminate and answer reach the environment too: the simulator records them for its judge
        if parsed.type == ActionType.ANSWER:
            ep.answer = parsed.text
        result = ep.env.step(parsed)
        env_ok, env_reason, blocked = result.ok, result.reason, result.ends_episode
    record = StepRecord(
        step=len(ep.steps), screenshot_png=obs.screenshot_png, elements=obs.elements,
        a11y=obs.a11y, app=obs.app, screen=obs.screen, prompt=out.prompt,
        raw_output=out.raw_text,
        action=parsed.to_dict() if isinstance(parsed, Action) else None,
        parse_error=parsed.reason if isinstance(parsed, ParseFailure) else None,
        conclusion=conclusion, latency_s=out.latency_s, env_ok=env_ok, env_reason=env_reason,
        state=state, reasoning=parsed_output.reasoning,
    )
    ep.steps.append(record)
    ep.history.append(conclusion or describe_action(parsed))
    if isinstance(parsed, Action) and parsed.type == ActionType.TERMINATE:
        finish(ep, "terminated")
        return
    if blocked:
        finish(ep, "blocked_by_guard")
        return
    if len(ep.steps) >= ep.task.step_budget:
        finish(ep, "budget")
        return
    ep.observation = ep.env.observe()
    if ep.memory is not None:  # the next prompt shows this step with what it visibly did (ops.agent.step_outcome)
        record.verified_outcome = verified_outcome(parsed, env_ok, obs, ep.observation)
        ep.memory.update(parsed_output, record.verified_outcome)
    key = (ep.observation.screen, out.raw_text)
    ep.repeat = ep.repeat + 1 if key == ep.last_key else 1
    ep.last_key = key
    if ep.repeat >= config.loop_window:
        finish(ep, "loop")


def describe_action(parsed: Action | ParseFailure) -> str:
    """The history line of a step whose output carried no conclusion."""
    if isinstance(parsed, ParseFailure):
        return f"(invalid output: {parsed.reason})"
    return f"{parsed.type.value} {parsed.args}"
