"""Fork points between successful and failed attempts of one task (UI-Voyager §3.3.1, GRSD).

Each attempt is prepared once: actions, trees and tree signatures eagerly (cheap), and the
visual features of each screenshot — thumbnail φ(o), mean hash, SSIM window statistics —
on first use, so a screenshot is decoded at most once and only if some comparison needs it.
SAME(o_i+, o_j−) is "trees agree (when both sides have one) and SSIM >= θ" (UI-Voyager eq. 3
plus training.methods.grsd.forks.tree), used everywhere Algorithm 1 asks SAME: alignment, candidates, eq. 4.
The conjunction is evaluated cheapest first: tree signatures, then the mean-hash pre-filter,
then the identical-thumbnail shortcut, then SSIM. With trees, a failed step whose tree
matches no successful step is therefore never decoded.
"""

from __future__ import annotations

import hashlib
from collections.abc import MutableMapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from training.methods.grsd.forks.actions import ActionContext, actions_equivalent, check_action
from training.methods.grsd.forks.algorithm import match_fork_points
from training.methods.grsd.forks.images import hash_similarity, mean_hash, thumbnail, to_image
from training.methods.grsd.forks.model import (
    ForkConfig,
    ForkInputError,
    ForkPoint,
    MatchStats,
    PairForks,
    Screenshot,
    Step,
    Trajectory,
)
from training.methods.grsd.forks.ssim import SsimStats, ssim, ssim_stats
from training.methods.grsd.forks.tree import TreeSignature, parse_elements, same_tree_state, tree_signature

# digest of encoded screenshot bytes + thumbnail geometry -> (uint8 thumbnail, (width, height))
ThumbnailCache = MutableMapping[bytes, tuple[np.ndarray, tuple[int, int]]]


@dataclass(frozen=True, slots=True)
class VisualFeatures:
    """What the visual comparison needs from one screenshot."""

    hash_bits: np.ndarray  # mean hash, hash_size² bools
    thumb_key: bytes  # digest of the thumbnail, for the identical shortcut
    stats: SsimStats  # φ(o) and its SSIM window statistics


@dataclass(slots=True)
class PreparedTrajectory:
    """One attempt ready for comparisons; visual features are computed on first use."""

    attempt_id: str
    success: bool
    steps: tuple[Step, ...]
    actions: tuple[dict | None, ...]
    contexts: tuple[ActionContext, ...]
    signatures: tuple[TreeSignature | None, ...]
    config: ForkConfig
    cache: ThumbnailCache | None = None
    _features: list[VisualFeatures | None] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.steps)

    def features(self, t: int) -> VisualFeatures:
        """Visual features of step t, decoding its screenshot the first time."""
        if self._features[t] is None:
            try:
                thumb = _thumbnail(self.steps[t].screenshot, self.config, self.cache)[0]
            except ForkInputError as exc:
                raise ForkInputError(f"trajectory {self.attempt_id!r} step {t}: {exc}") from None
            self._features[t] = VisualFeatures(
                hash_bits=mean_hash(thumb.astype(np.float64)[None], self.config.hash_size)[0],
                thumb_key=hashlib.blake2b(thumb.tobytes(), digest_size=16).digest(),
                stats=ssim_stats(thumb, self.config.ssim_window),
            )
        return self._features[t]

    @property
    def decoded(self) -> int:
        """How many screenshots have been decoded so far."""
        return sum(f is not None for f in self._features)

    def load_all(self) -> PreparedTrajectory:
        """Decode every screenshot now (e.g. ahead of many comparisons); returns self."""
        for t in range(len(self)):
            self.features(t)
        return self


def prepare_trajectory(
    trajectory: Trajectory, config: ForkConfig = ForkConfig(), cache: ThumbnailCache | None = None
) -> PreparedTrajectory:
    """Check and parse actions and trees; screenshots are decoded later, when first compared.

    Malformed actions and trees fail here, naming the step. `cache` (optional) maps a digest
    of encoded screenshot bytes to its thumbnail, so a screen stored byte-identically in
    several attempts is decoded only once.
    """
    actions, contexts, signatures = [], [], []
    for t, step in enumerate(trajectory.steps):
        try:
            actions.append(check_action(step.action))
            elements = parse_elements(step.tree) if step.tree is not None else None
            size = _screen_size(step.screenshot) if elements is not None else (0, 0)
        except ForkInputError as exc:
            raise ForkInputError(f"trajectory {trajectory.attempt_id!r} step {t}: {exc}") from None
        contexts.append(ActionContext(elements, size, config.tree_bounds == "grid"))
        if elements is None or not config.use_trees:
            signatures.append(None)
        else:
            full_height = 1000.0 if config.tree_bounds == "grid" else float(size[1])
            signatures.append(tree_signature(elements, full_height * config.status_bar_ratio))
    return PreparedTrajectory(
        attempt_id=trajectory.attempt_id,
        success=trajectory.success,
        steps=trajectory.steps,
        actions=tuple(actions),
        contexts=tuple(contexts),
        signatures=tuple(signatures),
        config=config,
        cache=cache,
        _features=[None] * len(trajectory.steps),
    )


def _screen_size(screenshot: Screenshot) -> tuple[int, int]:
    """(width, height) without decoding: the PNG header or the array shape."""
    if isinstance(screenshot, np.ndarray):
        return int(screenshot.shape[1]), int(screenshot.shape[0])
    return to_image(screenshot, header_only=True).size


def _thumbnail(
    screenshot: Screenshot, config: ForkConfig, cache: ThumbnailCache | None
) -> tuple[np.ndarray, tuple[int, int]]:
    """uint8 thumbnail and the original (width, height), through the cache for encoded bytes."""
    key = None
    if cache is not None and isinstance(screenshot, (bytes, bytearray)):
        geometry = f"{config.thumb_width}x{config.thumb_height}/{config.status_bar_ratio!r}".encode()
        key = hashlib.blake2b(screenshot, digest_size=16).digest() + geometry  # φ depends on both
        hit = cache.get(key)
        if hit is not None:
            return hit
    image = to_image(screenshot)
    result = (thumbnail(image, config).astype(np.uint8), image.size)
    if key is not None:
        cache[key] = result
    return result


class _PairOracle:
    """SAME / SSIM answers for one (successful, failed) pair, each decided once, cheapest test first."""

    def __init__(self, success: PreparedTrajectory, failed: PreparedTrajectory, config: ForkConfig):
        self.success, self.failed, self.config = success, failed, config
        self.n_success, self.n_failed = len(success), len(failed)
        self.stats = MatchStats(pairs=self.n_success * self.n_failed)
        self._sim: dict[tuple[int, int], float] = {}
        self._same: dict[tuple[int, int], bool] = {}

    def tree_match(self, i: int, j: int) -> bool | None:
        """Tree signatures agree; None when either step has no tree (or trees are off)."""
        a, b = self.success.signatures[i], self.failed.signatures[j]
        if a is None or b is None:
            return None
        return same_tree_state(a, b, self.config.max_static_text_differences)

    def similarity(self, i: int, j: int) -> float:
        """SSIM(φ(o_i+), φ(o_j−)); NaN when the mean-hash pre-filter rejects the pair."""
        if (i, j) not in self._sim:
            a, b = self.success.features(i), self.failed.features(j)
            if hash_similarity(a.hash_bits, b.hash_bits) < self.config.hash_threshold:  # UI-Voyager §3.3.1
                self.stats.hash_rejected += 1
                value = float("nan")
            elif a.thumb_key == b.thumb_key:
                self.stats.identical += 1
                value = 1.0
            else:
                self.stats.ssim_computed += 1
                value = ssim(a.stats, b.stats)
            self._sim[(i, j)] = value
        return self._sim[(i, j)]

    def known_similarity(self, i: int, j: int) -> float | None:
        value = self._sim.get((i, j))
        return None if value is None or np.isnan(value) else value

    def same(self, i: int, j: int) -> bool:
        """SAME: trees agree when both are present, and SSIM >= θ (UI-Voyager eq. 3; NaN fails)."""
        if (i, j) not in self._same:
            if self.tree_match(i, j) is False:
                self.stats.tree_rejected += 1
                result = False
            else:
                result = self.similarity(i, j) >= self.config.ssim_threshold
                self.stats.visual_matches += result
            self._same[(i, j)] = result
        return self._same[(i, j)]

    def actions_equivalent(self, i: int, j: int) -> bool:
        return actions_equivalent(
            self.success.actions[i],
            self.failed.actions[j],
            self.success.contexts[i],
            self.failed.contexts[j],
            self.config.point_tolerance,
        )

    def can_teach(self, i: int) -> bool:
        return self.success.actions[i] is not None  # a teacher step must have a response to distil


def detect_fork_points(
    success: Trajectory | PreparedTrajectory,
    failed: Trajectory | PreparedTrajectory,
    config: ForkConfig = ForkConfig(),
) -> PairForks:
    """Fork points M of Algorithm 1 (UI-Voyager) between a successful and a failed attempt."""
    s, f = (_prepared(t, config) for t in (success, failed))
    oracle = _PairOracle(s, f, config)
    forks = []
    for match in match_fork_points(oracle, action_aware=config.action_aware):
        i, j = match.success_step, match.failed_step
        terminal = match.divergence == "terminal"
        forks.append(
            ForkPoint(
                success_step=i,
                failed_step=j,
                similarity=oracle.similarity(i, j),
                next_similarity=None if terminal else oracle.known_similarity(i + 1, j + 1),
                tree_match=oracle.tree_match(i, j),
                divergence=match.divergence,
            )
        )
    return PairForks(success_id=s.attempt_id, failed_id=f.attempt_id, forks=forks, stats=oracle.stats)


def _prepared(t: Trajectory | PreparedTrajectory, config: ForkConfig) -> PreparedTrajectory:
    if isinstance(t, PreparedTrajectory):
        if t.config != config:
            raise ForkInputError(f"trajectory {t.attempt_id!r} was prepared with a different ForkConfig")
        return t
    return prepare_trajectory(t, config)


def detect_group_fork_points(
    attempts: Sequence[Trajectory],
    config: ForkConfig = ForkConfig(),
    teachers: Literal["shortest", "all"] = "shortest",
    cache: ThumbnailCache | None = None,
) -> list[PairForks]:
    """Fork points of every failed attempt of one task against its teacher(s).

    GRSD (UI-Voyager §3.3) takes the shortest successful attempt as the teacher (ties: the
    earliest); `teachers="all"` compares every successful attempt with every failed one.
    Tasks without both a success and a failure yield no pairs.
    """
    ids = [a.attempt_id for a in attempts]
    if len(set(ids)) != len(ids):
        raise ForkInputError(f"attempt ids of one task must be unique, got {ids}")
    if teachers not in ("shortest", "all"):
        raise ForkInputError(f"teachers must be 'shortest' or 'all', got {teachers!r}")
    successes = [a for a in attempts if a.success]
    failures = [a for a in attempts if not a.success]
    if not successes or not failures:
        return []
    if teachers == "shortest":
        successes = [min(successes, key=lambda a: len(a.steps))]
    prepared_s = [prepare_trajectory(a, config, cache) for a in successes]
    results = []
    for failure in failures:
        prepared_f = prepare_trajectory(failure, config, cache)
        results.extend(detect_fork_points(s, prepared_f, config) for s in prepared_s)
    return results
