"""The pure parts of AdaGRPO (MobileRL §2.2): trajectory rewards with shortest-path adjustment,
group-relative advantages, the positive replay buffer and the failure curriculum.

No torch and no simulator here: these take rewards, lengths and task keys, so each rule can be
checked on hand-computed cases. `training.methods.adagrpo.trainer` drives them around its episode loop.
"""

from __future__ import annotations

import json
import math
import random
import statistics
from collections.abc import Hashable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Generic, TypeVar

Payload = TypeVar("Payload")


def spa_rewards(rewards: Sequence[float], lengths: Sequence[int], successes: Sequence[bool],
                alpha: float = 1.0) -> list[float]:
    """Shortest-path reward adjustment (MobileRL §2.2.1, eq. 2) over one group:
    R_i = r_i · (1 − α · (T_i − T_min) / T_i), T_min the length of the group's shortest success.

    Only successful trajectories are rescaled: eq. 2 is written for r ∈ {0, 1}, where failures
    stay 0 whatever their length; with a progress-shaped reward a failure keeps its shaped value
    (rescaling it by the successes' T_min could reward a failure for being short). A group without
    a success is returned unchanged.
    """
    if not len(rewards) == len(lengths) == len(successes):
        raise ValueError(f"spa_rewards: {len(rewards)} rewards, {len(lengths)} lengths, {len(successes)} successes")
    if not 0 < alpha <= 1:
        raise ValueError(f"spa_rewards: alpha must be in (0, 1] (MobileRL eq. 2), got {alpha}")
    if any(t < 1 for t in lengths):
        raise ValueError(f"spa_rewards: every trajectory needs at least one step, got lengths {list(lengths)}")
    succeeded = [t for t, ok in zip(lengths, successes) if ok]
    if not succeeded:
        return [float(r) for r in rewards]
    shortest = min(succeeded)
    return [r * (1 - alpha * (t - shortest) / t) if ok else float(r)
            for r, t, ok in zip(rewards, lengths, successes)]


def trajectory_step_weights(lengths: Sequence[int]) -> list[float]:
    """Per-trajectory weight w_i = B / (N · T_i) for its step rows (B rows in all, N trajectories):
    a loss that averages over the B rows then equals MobileRL eq. 1's (1/N) Σ_i (1/T_i) Σ_t, so a
    long trajectory counts as much as a short one, not T_i times as much."""
    if any(t < 1 for t in lengths):
        raise ValueError(f"trajectory_step_weights: every trajectory needs at least one step, got {list(lengths)}")
    rows = sum(lengths)
    return [rows / (len(lengths) * t) for t in lengths]


def group_advantages(rewards: Sequence[float], epsilon: float = 1e-4) -> list[float]:
    """Group-relative trajectory advantages Â_i = (R_i − μ_R) / (σ_R + ε) (MobileRL §2.1, the
    GRPO estimator, σ the sample standard deviation as in TRL); a group whose rewards are all
    equal has no signal and gets zeros."""
    if len(rewards) < 2:
        raise ValueError(f"group_advantages: a group needs at least 2 trajectories, got {len(rewards)}")
    mean = statistics.fmean(rewards)
    std = statistics.stdev(rewards)
    if std == 0:
        return [0.0] * len(rewards)
    return [(r - mean) / (std + epsilon) for r in rewards]


@dataclass(frozen=True)
class Scored(Generic[Payload]):
    """A trajectory (any payload) with its group-relative advantage and whether it succeeded."""

    advantage: float
    success: bool
    payload: Payload


class PositiveReplayBuffer(Generic[Payload]):
    """Difficulty-adaptive positive replay (MobileRL §2.2.2, AdaPR).

    Admission: of each iteration's rollout set, the top `kappa` fraction by advantage, among the
    successful trajectories with positive advantage (a success in a group that mostly failed, i.e.
    a hard task, has the largest advantage, so hard successes come in first). When full, the
    lowest-advantage entries go. Draws take the highest-advantage entries and remove them: a
    stored trajectory is meant to be replayed about once (MobileRL appendix B.3).
    """

    def __init__(self, capacity: int = 256, kappa: float = 0.25):
        if capacity < 1:
            raise ValueError(f"PositiveReplayBuffer: capacity must be >= 1, got {capacity}")
        if not 0 < kappa <= 1:
            raise ValueError(f"PositiveReplayBuffer: kappa must be in (0, 1], got {kappa}")
        self.capacity, self.kappa = capacity, kappa
        self.items: list[Scored[Payload]] = []

    def __len__(self) -> int:
        return len(self.items)

    def admit(self, rollouts: Sequence[Scored[Payload]]) -> int:
        """Insert the top-κ of `rollouts` that qualify; returns how many went in."""
        quota = math.floor(self.kappa * len(rollouts))
        candidates = sorted((s for s in rollouts if s.success and s.advantage > 0),
                            key=lambda s: s.advantage, reverse=True)[:quota]
        self.items.extend(candidates)
        self.items.sort(key=lambda s: s.advantage, reverse=True)
        del self.items[self.capacity:]
        return sum(any(c is i for i in self.items) for c in candidates)

    def draw(self, count: int) -> list[Scored[Payload]]:
        """Remove and return up to `count` entries, highest advantage first."""
        drawn, self.items = self.items[:max(count, 0)], self.items[max(count, 0):]
        return drawn


def mixed_batch(on_policy: Sequence[Scored[Payload]], buffer: PositiveReplayBuffer[Payload] | None,
                batch_size: int, gamma: float, rng: random.Random) -> tuple[list[Scored[Payload]], int]:
    """One update's trajectories from q(τ) = γ·p_B(τ) + (1 − γ)·p_on(τ) (MobileRL §2.2.2): at
    most ⌊γ·M⌋ replayed (highest advantage first), on-policy trajectories filling the rest of the
    M = `batch_size` slots (a random subset when there are more). Returns (batch, replayed count)."""
    if not 0 <= gamma <= 1:
        raise ValueError(f"mixed_batch: gamma must be in [0, 1], got {gamma}")
    if batch_size < 1:
        raise ValueError(f"mixed_batch: batch_size must be >= 1, got {batch_size}")
    replayed = buffer.draw(math.floor(gamma * batch_size)) if buffer is not None else []
    room = batch_size - len(replayed)
    fresh = list(on_policy) if len(on_policy) <= room else rng.sample(list(on_policy), room)
    return replayed + fresh, len(replayed)


def replay_update_batch(scored: Sequence[Scored[Payload]], buffer: PositiveReplayBuffer[Payload] | None,
                        batch_size: int, gamma: float, replay_from: str,
                        rng: random.Random) -> tuple[list[Scored[Payload]], int]:
    """One epoch's update batch under AdaPR (`mixed_batch` of its informative trajectories, those with a
    non-zero advantage) and the buffer's admission of its top-κ, in the order `replay_from` names:
    'earlier_epochs' draws what earlier epochs admitted and admits this epoch's after; 'same_epoch'
    admits first. Returns (batch, replayed count)."""
    if replay_from not in ("earlier_epochs", "same_epoch"):
        raise ValueError(f"replay_from must be 'earlier_epochs' or 'same_epoch', got {replay_from!r}")
    informative = [s for s in scored if s.advantage != 0]
    if buffer is None:
        return mixed_batch(informative, None, batch_size, 0.0, rng)
    if replay_from == "same_epoch":
        buffer.admit(scored)
    batch = mixed_batch(informative, buffer, batch_size, gamma, rng)
    if replay_from == "earlier_epochs":
        buffer.admit(scored)
    return batch


@dataclass
class TaskFailures:
    """One task's failure record: consecutive all-zero epochs, cooldown epochs left, removed."""

    failed_epochs: int = 0
    cooldown_left: int = 0
    removed: bool = False


@dataclass
class FailureCurriculum:
    """Failure curriculum filtering (MobileRL §2.2.3, FCF).

    A task whose group rewards were all zero `fail_epochs` (2) epochs in a row enters a cooldown of
    `cooldown_epochs` (3) epochs, sampled with weight exp(−f), f its consecutive failure epochs;
    when the cooldown has run out it leaves the pool for good. Reading of the paper's rule where it
    is silent: cooldown epochs pass whether or not the task was drawn, and a non-zero reward during
    the cooldown ends it (the task is solvable after all) and resets f. The record survives runs
    (`save` / `load`), as MobileRL keeps failure histories from previous training.
    """

    fail_epochs: int = 2
    cooldown_epochs: int = 3
    tasks: dict[str, TaskFailures] = field(default_factory=dict)
    epochs_seen: int = 0  # epochs recorded over all runs (fresh template seeds continue from here)

    def weight(self, task: Hashable) -> float:
        """Sampling weight: 1, exp(−f) while cooling down, 0 once removed."""
        record = self.tasks.get(str(task))
        if record is None or (record.cooldown_left == 0 and not record.removed):
            return 1.0
        return 0.0 if record.removed else math.exp(-record.failed_epochs)

    def pool(self, tasks: Sequence[Hashable]) -> list[Hashable]:
        """The tasks still in the pool (not removed)."""
        return [t for t in tasks if self.weight(t) > 0]

    def record_epoch(self, all_zero: dict[Hashable, bool]) -> None:
        """Update after an epoch: `all_zero[task]` is True when every trajectory of the task's
        groups this epoch had reward 0. Tasks in cooldown that were not drawn still count down."""
        for key, failed in all_zero.items():
            record = self.tasks.setdefault(str(key), TaskFailures())
            if record.removed:
                continue
            if not failed:
                record.failed_epochs, record.cooldown_left = 0, 0
                continue
            record.failed_epochs += 1
            if record.cooldown_left == 0 and record.failed_epochs >= self.fail_epochs:
                record.cooldown_left = self.cooldown_epochs + 1  # this epoch's count-down follows below
        for key, record in self.tasks.items():
            if record.cooldown_left > 0 and not record.removed:
                record.cooldown_left -= 1
                if record.cooldown_left == 0:
                    record.removed = True
        self.epochs_seen += 1

    def counts(self) -> dict[str, int]:
        return {"cooling_down": sum(r.cooldown_left > 0 and not r.removed for r in self.tasks.values()),
                "removed": sum(r.removed for r in self.tasks.values())}

    def to_json(self) -> str:
        return json.dumps({"fail_epochs": self.fail_epochs, "cooldown_epochs": self.cooldown_epochs,
                           "epochs_seen": self.epochs_seen, "tasks": {k: asdict(v) for k, v in self.tasks.items()}},
                          indent=1, sort_keys=True)

    @classmethod
    def from_json(cls, text: str | None, fail_epochs: int = 2, cooldown_epochs: int = 3) -> FailureCurriculum:
        """The history stored as `text` (None: a fresh one) under these thresholds; an unreadable
        history is a clear error, never silently reset."""
        if text is None:
            return cls(fail_epochs, cooldown_epochs)
        try:
            data = json.loads(text)
            tasks = {k: TaskFailures(**v) for k, v in data["tasks"].items()}
            return cls(fail_epochs, cooldown_epochs, tasks, int(data["epochs_seen"]))
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise ValueError(f"failure history is unreadable ({type(exc).__name__}: {exc}); "
                             "move it away to start afresh") from None


def weighted_sample(keys: Sequence[Hashable], weights: Sequence[float], count: int,
                    rng: random.Random) -> list[Hashable]:
    """Up to `count` distinct keys drawn without replacement with probability ∝ weight
    (Efraimidis–Spirakis keys u^(1/w)); zero-weight keys are never drawn."""
    live = [(k, w) for k, w in zip(keys, weights) if w > 0]
    ranked = sorted(live, key=lambda kw: rng.random() ** (1 / kw[1]), reverse=True)
    return [k for k, _ in ranked[:count]]
