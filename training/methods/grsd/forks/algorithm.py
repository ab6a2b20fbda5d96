"""Algorithm 1 of UI-Voyager (fork point detection), over any observation-equivalence oracle.

The oracle answers SAME(o_i+, o_j−) (eq. 3), the similarity used to rank teachers (eq. 5),
whether the two actions at (i, j) are equivalent, and whether a successful step can teach
(has an action). The fast image pipeline and the benchmark's baseline both plug in here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from training.methods.grsd.forks.model import Divergence


class StateOracle(Protocol):
    n_success: int  # T+ + 1 observations
    n_failed: int  # T− + 1 observations

    def same(self, i: int, j: int) -> bool: ...

    def similarity(self, i: int, j: int) -> float: ...

    def actions_equivalent(self, i: int, j: int) -> bool: ...

    def can_teach(self, i: int) -> bool: ...


@dataclass(frozen=True, slots=True)
class ForkMatch:
    failed_step: int  # j
    success_step: int  # i*(j)
    divergence: Divergence


def match_fork_points(oracle: StateOracle, action_aware: bool = True) -> list[ForkMatch]:
    """Fork set M of Algorithm 1 (UI-Voyager), in failed-step order."""
    last_i, last_j = oracle.n_success - 1, oracle.n_failed - 1
    matches: list[ForkMatch] = []
    i_min = 0
    for j in range(oracle.n_failed):
        # Transition alignment (Alg. 1 lines 3-5): the failed attempt made the teacher's
        # move from here. The earliest such i is taken, as in the public release, so a
        # loop back to an earlier screen cannot push i_min past states still to come.
        aligned = None
        if j < last_j:
            aligned = next(
                (i for i in range(i_min, last_i) if oracle.same(i, j) and oracle.same(i + 1, j + 1)),
                None,
            )
        if aligned is not None:
            i_min = aligned + 1
            continue
        # Teacher candidates C(j) (Alg. 1 line 6): same state (eq. 3) and divergent transition (eq. 4).
        candidates: list[tuple[int, Divergence]] = []
        for i in range(i_min, oracle.n_success):
            if not oracle.same(i, j) or not oracle.can_teach(i):
                continue
            divergence = _diverge(oracle, i, j, last_i, last_j)
            if divergence is None or (action_aware and oracle.actions_equivalent(i, j)):
                continue
            candidates.append((i, divergence))
        if not candidates:
            continue
        # Teacher step selection (eq. 5): highest SSIM, ties to the smallest successful index.
        best, divergence = max(candidates, key=lambda c: (oracle.similarity(c[0], j), -c[0]))
        matches.append(ForkMatch(failed_step=j, success_step=best, divergence=divergence))
        i_min = best  # monotonicity (Alg. 1 line 11): later failed steps match i >= i*(j)
    return matches


def _diverge(oracle: StateOracle, i: int, j: int, last_i: int, last_j: int) -> Divergence | None:
    """DIVERGE(i, j) of UI-Voyager eq. 4; None when the next observations are the same state."""
    if i == last_i or j == last_j:
        return "terminal"
    if oracle.same(i + 1, j + 1):
        return None
    return "next_state_differs"
