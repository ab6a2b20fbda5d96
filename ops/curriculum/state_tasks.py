"""Toggle variants: switches exploration flipped become "turn X on/off" tasks judged by data.

An explored transition that stays on its screen, hits a switch (or a row whose next element is
a switch) and changes the device's data is a function of the app the curriculum should teach:
"Turn off Use location." The transition's trajectory is replayed (`ops.curriculum.replay`)
to read the switch's label and state after the tap and the data paths the tap changed. The
task starts at the launcher and succeeds when those paths hold the values the tap gave them
(`GoalState`). Only screens without page parameters qualify: there the screen alone says which
switch is meant (presses on an entry's page are `entry_tasks`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ops.curriculum.model import (
    CurriculumTask,
    GoalState,
    Trajectory,
    budget_with_slack,
    stable_phrase,
    trajectory_app,
    trajectory_id,
)
from ops.curriculum.replay import replay
from ops.agent.hint_marks import element_name
from phonesim.apps import load_apps
from phonesim.phone import Phone
from phonesim.state import flatten

TOGGLE_PHRASES = (
    "In {app}, turn {state} {name}.",
    "Turn {state} {name} in {app}.",
    "Turn {state} {name}.",
)
_SWITCH_CLASSES = ("Switch", "CheckBox", "ToggleButton")


@dataclass(frozen=True)
class Toggle:
    """One switch flip seen during exploration, replayed."""

    app: str
    screen: str
    name: str  # the switch's row label (first line)
    turned_on: bool  # the switch's state after the tap
    values: dict[str, Any]  # data paths the tap changed -> their new values
    steps: int  # actions from the app's first screen, the tap included
    trajectory_id: str


def toggles_in(path: Trajectory, world_seed: int, size: tuple[int, int]) -> list[Toggle]:
    """The switch flips along one trajectory, replayed (`ops.curriculum.replay`). Only steps that
    stayed on a screen without page parameters are looked at, and the replay stops after the
    last of them."""
    app = trajectory_app(path)
    screens = load_apps()[app].screens
    candidates = {i for i, t in enumerate(path) if t.before.screen == t.after.screen
                  and t.after.app == app and not screens[t.before.screen].params}
    if not candidates:
        return []
    out = []
    for step in replay(path, world_seed, size, stop=max(candidates) + 1):
        phone = step.phone
        if step.index not in candidates or not step.changed:
            continue
        switch = switch_of(step.elements, step.action.element)
        if switch is None or (phone.current_app, phone.current_screen) != (app, step.screen):
            continue
        state = next((e for e in phone.observe().elements if e["index"] == switch[1]), None)
        if state is None:
            continue
        after = flatten(phone.logical_state())
        out.append(Toggle(app, step.screen, switch[0], bool(state.get("checked")),
                          {p: after.get(p) for p in step.changed}, step.index + 1, trajectory_id(path)))
    return out


def switch_of(elements: Sequence[dict[str, Any]], index: int | None) -> tuple[str, int] | None:
    """(row label, switch element index) when the tapped element is a switch (named by the row
    before it) or a row whose next element is a switch."""
    if index is None or not 0 <= index < len(elements):
        return None

    def is_switch(i: int) -> bool:
        return 0 <= i < len(elements) and any(c in str(elements[i].get("class", "")) for c in _SWITCH_CLASSES)

    if is_switch(index):
        row, switch = index - 1, index
    elif is_switch(index + 1):
        row, switch = index, index + 1
    else:
        return None
    name = element_name(elements[row]).strip() if row >= 0 else ""
    return (name, switch) if name else None


def toggle_tasks(paths: Sequence[Trajectory], world_seed: int, size: tuple[int, int], slack_ratio: float,
                 min_slack: int) -> list[CurriculumTask]:
    """One task per distinct (app, screen, switch, outcome) flipped in `paths`, with the fewest
    steps any trajectory needed; budget = steps + open the app + slack, as navigation tasks.
    Flips back to how a fresh phone starts (a switch turned on, then off again) are no task."""
    initial = flatten(Phone(world_seed, size).logical_state())
    best: dict[tuple, Toggle] = {}
    for path in paths:
        for t in toggles_in(path, world_seed, size):
            if all(initial.get(p) == v for p, v in t.values.items()):
                continue
            key = (t.app, t.screen, t.name, tuple(sorted(t.values.items(), key=lambda kv: kv[0])))
            if key not in best or t.steps < best[key].steps:
                best[key] = t
    apps = load_apps()
    out = []
    for t in sorted(best.values(), key=lambda t: (t.app, t.screen, t.name, t.turned_on)):
        phrase = stable_phrase(TOGGLE_PHRASES, f"{t.app}/{t.screen}/{t.name}")
        steps = t.steps + 1  # + open the app from the home screen
        state = "on" if t.turned_on else "off"
        out.append(CurriculumTask(
            task_id=f"toggle:{t.app}/{t.screen}/{t.name}/{state}", app=t.app,
            instruction=phrase.format(app=apps[t.app].label, name=t.name, state=state),
            step_budget=budget_with_slack(steps, slack_ratio, min_slack),
            core_functionality=f"{t.app}: turn {state} {t.name}", variation_type="simplification",
            prerequisites=None, source_trace_id=t.trajectory_id, verifiable=True,
            goal_state=GoalState(screen=t.screen, values=t.values)))
    return out
