"""Actions left to an entry-action goal, and the greedy taps that walk toward any goal.

An entry-action task (`ops.curriculum.entry_tasks`) asks for taps on one entry's page ("open
Ana Chen and tap Call"). Its goal state names the anchor screen (the last screen without page
parameters on the way, e.g. the contact list), the pages opened from there (`opens`: the label
tapped, the screen and the page parameters of each) and the labels to tap on the last page
(`taps`). The distance counts Back presses to the deepest page of that chain already on the
app's back stack, the opens still missing and the taps still needed; from any other screen it
is the static route to the anchor plus the chain. Approximate where the chain's rows sit below
the fold (a scroll is not counted) and where a dialog costs an extra Back.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ops.actions import Action, ActionType
from ops.prompts.hint_marks import element_name
from ops.sim_env import goal_state_met
from phonesim.apps import load_apps
from phonesim.phone import Phone

UNREACHABLE = 10_000  # distance of a state from which the goal cannot be reached in budget


def entry_distance(phone: Phone, app: str, goal: Mapping[str, Any]) -> int | None:
    """Fewest actions from `phone`'s state until `goal`'s values hold (0 when they do), under
    the chain model of the module docstring; None when the anchor cannot be reached."""
    if _holds(phone, goal):
        return 0
    spec = load_apps()[app]
    taps: Sequence[str] = goal["taps"]
    chain = [(goal["screen"], None)] + [(o["screen"], o["params"]) for o in goal["opens"]]
    stack = phone.state["os"]["tasks"].get(app) or []
    reopen = 0 if phone.current_app == app else 1
    if not stack:
        route = spec.route(spec.home, goal["screen"])
        return None if route is None else reopen + len(route) + len(chain) - 1 + len(taps)
    options = []
    if _same_page(stack[-1], chain[-1]):
        left = taps_left(phone, app, goal)
        if left is not None:
            options.append(left)
    for j, page in enumerate(stack):
        for k, step in enumerate(chain):
            if _same_page(page, step):
                options.append(len(stack) - 1 - j + len(chain) - 1 - k + len(taps))
    route = spec.route(stack[-1]["screen"], goal["screen"])
    if route is not None:
        options.append(len(route) + len(chain) - 1 + len(taps))
    return reopen + min(options) if options else None


def taps_left(phone: Phone, app: str, goal: Mapping[str, Any]) -> int | None:
    """The fewest of the goal's last taps (tapped by label, on a copy of the phone with `app`
    in front) that make its values hold, if any suffix does."""
    taps: Sequence[str] = goal["taps"]
    for left in range(1, len(taps) + 1):
        trial = phone.fork()
        trial.launch(app)
        if all(_tap_label(trial, label) for label in taps[len(taps) - left:]) and _holds(trial, goal):
            return left
    return None


def better_tap(phone: Phone, distance: Callable[[str | None], int]) -> Action | None:
    """The tap on one of the screen's elements that leaves the fewest actions to the goal (the
    first such element on ties), if any tap brings it closer than the phone's state is now.
    Leaves the phone in its state."""
    state = phone.snapshot()
    best, best_distance = None, distance(json.dumps(state))
    for element in phone.observe().elements:
        if not element.get("clickable"):
            continue
        phone.restore(state)
        action = Action(ActionType.CLICK, element=element["index"])
        if phone.step(action).ok and (d := distance(json.dumps(phone.snapshot()))) < best_distance:
            best, best_distance = action, d
    phone.restore(state)
    return best


def _tap_label(phone: Phone, label: str) -> bool:
    element = next((e for e in phone.observe().elements if e.get("clickable") and element_name(e) == label), None)
    return element is not None and phone.step(Action(ActionType.CLICK, element=element["index"])).ok


def _same_page(page: Mapping[str, Any], step: tuple[str, dict[str, Any] | None]) -> bool:
    screen, params = step
    return page["screen"] == screen and (params is None or page["params"] == params)


def _holds(phone: Phone, goal: Mapping[str, Any]) -> bool:
    met, total = goal_state_met(phone, goal)
    return met == total
