"""Inputs, outputs and settings of fork-point detection (plain dataclasses, no project imports)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

# A screenshot is either encoded image bytes (PNG as stored in the tables) or a decoded
# uint8 array of shape (H, W), (H, W, 3) or (H, W, 4).
Screenshot = bytes | np.ndarray


class ForkInputError(ValueError):
    """A trajectory, step, tree or action that fork detection cannot use; the message names it."""


@dataclass(frozen=True, slots=True)
class Step:
    """One observation of a trajectory and the action taken on it.

    `tree` is the accessibility tree as JSON (a list of element dicts, a dict with an
    `elements` list, or nested nodes with `children`); None when the source has none.
    `action` is the canonical action dict `{"type": ..., "args": {...}}`; None when no action
    was taken on this observation (e.g. a final screen recorded after the last action).
    """

    screenshot: Screenshot
    action: dict[str, Any] | None = None
    tree: list[Any] | dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class Trajectory:
    """One attempt at a task: its id, whether it succeeded, and its steps in order."""

    attempt_id: str
    success: bool
    steps: tuple[Step, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "steps", tuple(self.steps))
        if not self.steps:
            raise ForkInputError(f"trajectory {self.attempt_id!r} has no steps")


@dataclass(frozen=True, slots=True)
class ForkConfig:
    """Settings of the detector. Defaults follow UI-Voyager §3.3.1 and its public release
    (θ = 0.95, 16×16 mean hash with a 0.80 pre-filter, top 25/878 of the screen cropped)."""

    ssim_threshold: float = 0.95  # θ in UI-Voyager eq. 3
    hash_threshold: float = 0.80  # mean-hash similarity below this skips SSIM (UI-Voyager §3.3.1)
    hash_size: int = 16  # mean hash is hash_size × hash_size bits
    status_bar_ratio: float = 25 / 878  # fraction of the screen height cropped from the top
    thumb_width: int = 135  # grayscale thumbnail φ(o): 1/8 of a 1080×2332 cropped screen
    thumb_height: int = 292
    ssim_window: int = 7  # square window of the box-filter SSIM (scikit-image's default)
    use_trees: bool = True  # compare accessibility trees after the visual match when present
    action_aware: bool = True  # equivalent actions on the same state are not a fork
    point_tolerance: float = 40.0  # two points closer than this (0–1000 grid) hit the same target
    max_static_text_differences: int = 0  # non-field, non-state elements allowed to differ
    tree_bounds: Literal["pixels", "grid"] = "pixels"  # unit of element `bounds` in trees

    def __post_init__(self) -> None:
        if not 0.0 < self.ssim_threshold <= 1.0:
            raise ForkInputError(f"ssim_threshold must be in (0, 1], got {self.ssim_threshold}")
        if not 0.0 <= self.hash_threshold <= 1.0:
            raise ForkInputError(f"hash_threshold must be in [0, 1], got {self.hash_threshold}")
        if self.hash_size < 2:
            raise ForkInputError(f"hash_size must be at least 2, got {self.hash_size}")
        if not 0.0 <= self.status_bar_ratio < 0.5:
            raise ForkInputError(f"status_bar_ratio must be in [0, 0.5), got {self.status_bar_ratio}")
        if self.ssim_window < 3 or self.ssim_window % 2 == 0:
            raise ForkInputError(f"ssim_window must be odd and >= 3, got {self.ssim_window}")
        if min(self.thumb_width, self.thumb_height) < max(self.ssim_window, self.hash_size):
            raise ForkInputError(
                f"thumbnail {self.thumb_width}x{self.thumb_height} is smaller than the SSIM "
                f"window ({self.ssim_window}) or the hash grid ({self.hash_size})"
            )
        if self.point_tolerance < 0:
            raise ForkInputError(f"point_tolerance must be >= 0, got {self.point_tolerance}")
        if self.max_static_text_differences < 0:
            raise ForkInputError("max_static_text_differences must be >= 0")
        if self.tree_bounds not in ("pixels", "grid"):
            raise ForkInputError(f"tree_bounds must be 'pixels' or 'grid', got {self.tree_bounds!r}")


Divergence = Literal["terminal", "next_state_differs"]


@dataclass(frozen=True, slots=True)
class ForkPoint:
    """Failed step `failed_step` saw the state of successful step `success_step` but diverged.

    `similarity` is SSIM(φ(o_i+), φ(o_j−)); `next_similarity` the SSIM of the following
    observations when it was computed (None when either step is the last one,
    `divergence == "terminal"`, or when the trees or the mean hash already told the next
    observations apart).
    `tree_match` is True when both trees were present and matched, None when visual-only.
    """

    success_step: int
    failed_step: int
    similarity: float
    next_similarity: float | None
    tree_match: bool | None
    divergence: Divergence


@dataclass(slots=True)
class MatchStats:
    """How the observation pairs Algorithm 1 looked at were decided (each pair counted once)."""

    pairs: int = 0  # size of the |τ+| × |τ−| grid
    tree_rejected: int = 0  # trees differ: not the same state, pixels not needed
    hash_rejected: int = 0  # discarded by the mean-hash pre-filter
    identical: int = 0  # pixel-identical thumbnails (SSIM 1 without computing it)
    ssim_computed: int = 0
    visual_matches: int = 0  # SAME: trees agree (or absent) and SSIM >= θ


@dataclass(slots=True)
class PairForks:
    """Fork points between one successful (teacher) and one failed (student) attempt."""

    success_id: str
    failed_id: str
    forks: list[ForkPoint] = field(default_factory=list)
    stats: MatchStats = field(default_factory=MatchStats)
