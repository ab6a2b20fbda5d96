"""Fork-point detection between successful and failed attempts of a task (GRSD, UI-Voyager §3.3.1).

    attempts = [Trajectory("a0", True, steps0), Trajectory("a1", False, steps1), ...]
    for pair in detect_group_fork_points(attempts):      # shortest success vs each failure
        for fork in pair.forks:                          # failed step j saw success step i
            sample = (failed_context(pair.failed_id, fork.failed_step),
                      success_response(pair.success_id, fork.success_step))  # UI-Voyager eq. 6

Steps carry a screenshot (PNG bytes or array), the canonical action dict and, optionally,
the accessibility tree; with trees on both sides a visual match must also match the tree.
"""

from training.methods.grsd.forks.actions import ActionContext, actions_equivalent
from training.methods.grsd.forks.algorithm import ForkMatch, StateOracle, match_fork_points
from training.methods.grsd.forks.detect import (
    PreparedTrajectory,
    ThumbnailCache,
    detect_fork_points,
    detect_group_fork_points,
    prepare_trajectory,
)
from training.methods.grsd.forks.model import (
    ForkConfig,
    ForkInputError,
    ForkPoint,
    MatchStats,
    PairForks,
    Step,
    Trajectory,
)

__all__ = [
    "ActionContext",
    "ForkConfig",
    "ForkInputError",
    "ForkMatch",
    "ForkPoint",
    "MatchStats",
    "PairForks",
    "PreparedTrajectory",
    "StateOracle",
    "Step",
    "ThumbnailCache",
    "Trajectory",
    "actions_equivalent",
    "detect_fork_points",
    "detect_group_fork_points",
    "match_fork_points",
    "prepare_trajectory",
]
