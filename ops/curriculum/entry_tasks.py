"""Entry-action variants: buttons exploration pressed on an entry's page become tasks judged by data.

Exploration opens entries (a contact, a to-do task, a recording) and presses what their pages
offer: Call, Add to favourites, Mark done, Delete, Move -> a folder. Each such press that
changed the device's data is a function of the app the curriculum should teach, named by the
entry: "In Contacts, open Ana Chen and tap Call." The trajectory is replayed
(`ops.curriculum.replay`) to read the label of every row tapped on the way, the page parameters
of the pages it opened and the data the press changed. The goal state records the anchor (the
last screen without page parameters on the way), the chain of pages opened from it and the
labels pressed on the last page, so the critic can count the actions left
(`ops.judging.critic.goal_distance`). Presses on a screen without page parameters (add a world-clock
city, connect to a Wi-Fi network) are the same with an empty chain. Switches are left to
`state_tasks` and sliders to the templates; presses after typing are skipped (the typed text
would be part of the goal but not of the instruction), and so are presses whose only effect is
a timestamp. Every mined task is checked by walking it from a fresh phone with the critic's
greedy taps; a task that walk cannot finish within its budget is dropped and counted.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ops.actions import ActionType
from ops.judging.critic.goal_distance import UNREACHABLE, better_tap, entry_distance
from ops.curriculum.model import (
    CurriculumTask,
    GoalState,
    Trajectory,
    budget_with_slack,
    stable_phrase,
    trajectory_app,
    trajectory_id,
)
from ops.curriculum.replay import ReplayedStep, replay
from ops.curriculum.state_tasks import switch_of
from ops.agent.hint_marks import element_name
from phonesim.apps import load_apps
from phonesim.phone import Phone
from phonesim.state import flatten

ENTRY_PHRASES = (
    "In {app}, open {entry} and tap {taps}.",
    "Open {entry} in {app} and tap {taps}.",
    "Open {entry} and tap {taps}.",
)
SCREEN_PHRASES = (
    "In {app}, go to {title} and tap {taps}.",
    "Tap {taps} on the {title} screen of {app}.",
)
MAX_TAPS = 2  # presses on the entry's page, the data-changing one included
_BOOKKEEPING = ("modified",)  # leaf keys a save updates even when nothing else changed
_SKIPPED_CLASSES = ("SeekBar",)


@dataclass(frozen=True)
class EntryAction:
    """One data-changing press on a page, with the chain of pages opened to reach it."""

    app: str
    anchor: str  # last screen without page parameters on the back stack
    opens: tuple[dict[str, Any], ...]  # {label, screen, params} of each page above the anchor
    taps: tuple[str, ...]  # labels pressed on the last page, the data-changing one last
    values: dict[str, Any]  # data paths the press changed -> their new values
    steps: int  # actions from the app's first screen, the press included
    trajectory_id: str

    @property
    def goal(self) -> GoalState:
        return GoalState(screen=self.anchor, values=self.values, opens=self.opens, taps=self.taps)


@dataclass
class EntryMining:
    tasks: list[CurriculumTask] = field(default_factory=list)
    unwalkable: list[str] = field(default_factory=list)  # mined, but the critic's greedy walk failed


def entry_actions_in(path: Trajectory, world_seed: int, size: tuple[int, int]) -> list[EntryAction]:
    """The data-changing presses along one replayed trajectory (see the module docstring)."""
    app = trajectory_app(path)
    opened: list[dict[str, Any]] = []  # per back-stack page: the label that opened it, screen, params
    pending: list[str] = []  # presses on the top page since it last showed no dialog or menu
    out = []
    for step in replay(path, world_seed, size):
        phone = step.phone
        label = _tapped_label(step)
        if not opened:  # the app's first page, opened by the launch
            opened = [{"label": None, "screen": step.screen, "params": dict(step.page["params"])}]
        if not (step.page.get("dialog") or step.page.get("menu")):
            pending = []
        if step.changed and label is not None and phone.current_app == app:
            found = _entry_action(app, step, opened, pending + [label], trajectory_id(path))
            if found is not None:
                out.append(found)
        stack = phone.state["os"]["tasks"].get(app) or []
        opened = _track_pages(opened, stack, label if len(stack) == step.stack_depth + 1 else None)
        top = stack[-1] if stack else {}
        if label is not None and not step.changed and (top.get("dialog") or top.get("menu")):
            pending.append(label)
    return out


def _tapped_label(step: ReplayedStep) -> str | None:
    """The first line of the element a click hit, unless it is unnamed, a switch or a slider."""
    index = step.action.element
    if step.action.type != ActionType.CLICK or index is None or not 0 <= index < len(step.elements):
        return None
    element = step.elements[index]
    if any(c in str(element.get("class", "")) for c in _SKIPPED_CLASSES) or switch_of(step.elements, index):
        return None  # a switch (or its row) is a toggle task
    return element_name(element).strip() or None


def _track_pages(opened: list[dict[str, Any]], stack: list[dict[str, Any]],
                 pushed_by: str | None) -> list[dict[str, Any]]:
    """`opened` updated to the back stack after a step: pages still in place keep their label, a
    page the step pushed gets `pushed_by`, any other new page an unknown (None) label."""
    out = []
    for depth, page in enumerate(stack):
        kept = opened[depth] if depth < len(opened) else None
        if kept is not None and (kept["screen"], kept["params"]) == (page["screen"], page["params"]):
            out.append(kept)
        else:
            label = pushed_by if depth == len(stack) - 1 else None
            out.append({"label": label, "screen": page["screen"], "params": dict(page["params"])})
    return out


def _entry_action(app: str, step: ReplayedStep, opened: list[dict[str, Any]], taps: list[str],
                  tid: str) -> EntryAction | None:
    if len(taps) > MAX_TAPS or step.page.get("fields"):
        return None
    screens = load_apps()[app].screens
    anchor = len(opened) - 1
    while anchor >= 0 and screens[opened[anchor]["screen"]].params:
        anchor -= 1
    chain = opened[anchor + 1:]
    if anchor < 0 or any(not page["label"] for page in chain):
        return None
    after = flatten(step.phone.logical_state())
    values = {p: after.get(p) for p in step.changed}
    if all(p.rsplit(".", 1)[-1] in _BOOKKEEPING for p in values):
        return None
    opens = tuple({"label": p["label"], "screen": p["screen"], "params": p["params"]} for p in chain)
    return EntryAction(app, opened[anchor]["screen"], opens, tuple(taps), values, step.index + 1, tid)


def entry_tasks(paths: Sequence[Trajectory], world_seed: int, size: tuple[int, int], slack_ratio: float,
                min_slack: int) -> EntryMining:
    """One task per distinct (app, chain, presses, effect) in `paths`, with the fewest steps any
    trajectory needed; budget = steps + open the app + slack, as navigation tasks. Effects that
    leave the data as a fresh phone has it (a favourite added, then removed) are no task."""
    initial = flatten(Phone(world_seed, size).logical_state())
    best: dict[str, EntryAction] = {}
    for path in paths:
        for found in entry_actions_in(path, world_seed, size):
            if all(initial.get(p) == v for p, v in found.values.items()):
                continue
            key = json.dumps([found.app, found.goal.to_params()], sort_keys=True)
            if key not in best or found.steps < best[key].steps:
                best[key] = found
    apps = load_apps()
    mining = EntryMining()
    for found in sorted(best.values(), key=lambda f: (f.app, f.anchor, _entry_name(f), f.taps)):
        task = _task(found, apps[found.app], slack_ratio, min_slack)
        if _walkable(task, world_seed, size):
            mining.tasks.append(task)
        else:
            mining.unwalkable.append(task.task_id)
    return mining


def _entry_name(found: EntryAction) -> str:
    return found.opens[-1]["label"] if found.opens else ""


def _task(found: EntryAction, app: Any, slack_ratio: float, min_slack: int) -> CurriculumTask:
    taps = ", then ".join(found.taps)
    entry = _entry_name(found)
    if found.opens:
        key = f"{found.app}/{found.opens[-1]['screen']}/{entry}/{'+'.join(found.taps)}"
        instruction = stable_phrase(ENTRY_PHRASES, key).format(app=app.label, entry=entry, taps=taps)
        what = f"open {entry}, tap {taps}"
    else:
        key = f"{found.app}/{found.anchor}/{'+'.join(found.taps)}"
        title = app.screens[found.anchor].doc or found.anchor
        instruction = stable_phrase(SCREEN_PHRASES, key).format(app=app.label, title=title, taps=taps)
        what = f"tap {taps} on {title}"
    return CurriculumTask(
        task_id=f"entry:{key}", app=found.app, instruction=instruction,
        step_budget=budget_with_slack(found.steps + 1, slack_ratio, min_slack),  # + open the app
        core_functionality=f"{found.app}: {what}", variation_type="simplification", prerequisites=None,
        source_trace_id=found.trajectory_id, verifiable=True, goal_state=found.goal)


def _walkable(task: CurriculumTask, world_seed: int, size: tuple[int, int]) -> bool:
    """Whether the critic's greedy taps (the ones its hints name) finish the task from a fresh
    phone within the budget: the distance model and the live phone agree on every step."""
    goal = task.goal_state.to_params()
    phone, probe = Phone(world_seed, size), Phone(world_seed, size)

    def distance(state: str | None) -> int:
        probe.restore(json.loads(state))
        d = entry_distance(probe, task.app, goal)
        return UNREACHABLE if d is None else d

    for _ in range(task.step_budget):
        action = better_tap(phone, distance)  # none once the goal holds: no tap gets closer than 0
        if action is None:
            break
        phone.step(action)
    return distance(json.dumps(phone.snapshot())) == 0
