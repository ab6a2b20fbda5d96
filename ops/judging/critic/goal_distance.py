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
from ops.agent.episode import TaskSpec
from ops.agent.hint_marks import element_name
from ops.environments.simulator import goal_state_met
from phonesim.apps import load_apps
from phonesim.phone import Phone
from phonesim.solver import distance_to_goal
from phonesim.tasks import instantiate, world_phone

UNREACHABLE = 10_000  # distance of a state from which the goal cannot be reached in budget


def goal_distance_fn(task: TaskSpec, world_seed: int) -> Callable[[str | None], int]:
    """Fewest actions from a stored phone state (JSON) to `task`'s goal, `UNREACHABLE` when there is
    no route (or no state): a template task's shortest solution (the simulator's solver); a
    navigation or toggle task's route to its screen (plus the tap, for a toggle whose data does not
    hold yet); an entry-action task's chain of pages and taps (`entry_distance`)."""
    phone = world_phone(task.template_id, world_seed)
    if task.template_id:
        instance = instantiate(task.template_id, task.seed, world_seed)

        def distance(state: str | None) -> int:
            if state is None:
                return UNREACHABLE
            phone.restore(json.loads(state))
            d = distance_to_goal(phone, instance)
            return UNREACHABLE if d is None else d
        return distance
    app = load_apps()[task.app]
    goal_state = task.params.get("goal_state")
    goal = goal_state["screen"] if goal_state else task.params["goal_screen"]

    def screen_distance(state: str | None) -> int:
        if state is None:
            return UNREACHABLE
        phone.restore(json.loads(state))
        if goal_state and goal_state.get("taps"):
            d = entry_distance(phone, task.app, goal_state)
            return UNREACHABLE if d is None else d
        tap = 0  # a toggle task: one tap on its screen, unless the data already holds
        if goal_state:
            met, total = goal_state_met(phone, goal_state)
            if met == total:
                return 0
            tap = 1
        if phone.current_app != task.app:
            route = app.route(app.home, goal)
            return UNREACHABLE if route is None else len(route) + 1 + tap  # +1 to open the app
        route = app.route(phone.current_screen, goal)
        return UNREACHABLE if route is None else len(route) + tap
    return screen_distance


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
    taps = [Action(ActionType.CLICK, element=e["index"]) for e in phone.observe().elements if e.get("clickable")]
    return better_action(phone, distance, taps)


def better_action(phone: Phone, distance: Callable[[str | None], int], actions: Sequence[Action]) -> Action | None:
    """The action of `actions` that leaves the fewest actions to the goal (the first on ties), if
    any brings it closer than the phone's state is now. Leaves the phone in its state."""
    state = phone.snapshot()
    best, best_distance = None, distance(json.dumps(state))
    for action in actions:
        phone.restore(state)
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
