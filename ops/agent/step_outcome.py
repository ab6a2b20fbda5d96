"""The verified outcome of one agent step, the `s` the structured-reasoning memory keeps with each
action guidance (MobileWizard §3.3, eq. 2: M_action = (g_1(s), …, g_{n-1}(s))).

MobileWizard takes `s` from the next step's self-verification, the model's own judgement. Rollouts
here verify it from what the device showed, which a real deployment can do as well (no judge, no
goal, no solver is consulted, so nothing of the task's answer reaches the prompt):

- failure: the output was not a valid action, the environment did not apply it, or an action meant
  to change the screen (tap, long press, swipe, drag, typing, a key, a system button, opening an
  app) left the foreground app, the screen and its element list (texts, check states) as they were;
- success: such an action changed one of them;
- unverified: an applied action with nothing to see on screen (wait, answer, terminate).

"Changed" is not "changed as intended": whether the change was the right one is the model's own
self-verification on the next step (and the critic's, afterwards). Pixels are not compared: an
element list is what an accessibility dump also gives on a device, where a ticking status-bar
clock would make every screenshot differ.
"""

from __future__ import annotations

from typing import Any, Protocol

from ops.actions import Action, ActionType, ParseFailure
from ops.agent.reasoning_memory import StepOutcome

NOTHING_TO_SEE = frozenset({ActionType.WAIT, ActionType.ANSWER, ActionType.TERMINATE})


class Screen(Protocol):
    """What a step saw, as far as its outcome goes: an `ops.agent.episode.Observation`, a `StepRecord`."""

    app: str
    screen: str
    elements: list[dict[str, Any]]


def visible_change(before: Screen, after: Screen) -> bool:
    """The foreground app, the screen identity or the element list differ."""
    return (before.app, before.screen, before.elements) != (after.app, after.screen, after.elements)


def verified_outcome(action: Action | ParseFailure, applied: bool, before: Screen, after: Screen) -> StepOutcome:
    """The outcome of a step that showed `before`, acted `action` (`applied`: the environment
    applied it) and left `after` (module docstring)."""
    if not isinstance(action, Action) or not applied:
        return StepOutcome.FAILURE
    if action.type in NOTHING_TO_SEE:
        return StepOutcome.UNVERIFIED
    return StepOutcome.SUCCESS if visible_change(before, after) else StepOutcome.FAILURE
