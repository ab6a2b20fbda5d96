"""Shortest action sequences to a task's goal by breadth-first search over concrete states.

Candidate actions at a state are the agent's real options, narrowed the way a person
would: tap each distinct clickable element, long-press where possible, type a task hint
into an empty focused field, set sliders to hinted values, scroll, back, open a task app,
and answer once the evidence is on screen. States with unexpected side effects are not
expanded (a clean solution never passes through one), nor are apps the task does not use.
`distance_to_goal` is the length of that path: the programmatic critic calls a step
reasonable iff it lowers it.
"""

from __future__ import annotations

from collections import OrderedDict, deque
from typing import TYPE_CHECKING

from ops.actions import GRID, Action
from phonesim import layout as L
from phonesim.phone import LAUNCHER, Phone
from phonesim.state import canonical_json
from phonesim.widgets import CANVAS_H, CANVAS_W

if TYPE_CHECKING:
    from phonesim.tasks import TaskInstance

MAX_NODES = 6000


def _grid_point(x: float, y: float) -> tuple[int, int]:
    return min(GRID, max(0, round(x * GRID / CANVAS_W))), min(GRID, max(0, round(y * GRID / CANVAS_H)))


def _state_key(phone: Phone) -> str:
    """State identity for de-duplication. Left out, because they multiply states without
    changing what is reachable in practice: keyboard focus (a targeted `type` focuses by
    itself) and the page stacks of background apps (`open_app` resumes them as they are, and
    re-navigating costs the same from any of them). Paths stay valid: BFS replays real states."""
    os_ = phone.state["os"]
    pages = [[p["screen"], p["params"], p["scroll"], p["fields"], p["ui"], p["dialog"], p["menu"]]
             for p in os_["tasks"].get(os_["foreground"], [])]
    return canonical_json([phone.state["data"], os_["foreground"], sorted(os_["tasks"]), pages, os_["answer"]])


def candidate_actions(phone: Phone, task: "TaskInstance") -> list[Action]:
    """The actions BFS tries from the phone's current state (see module docstring)."""
    frame = phone.frame()
    elements, nodes = L.element_nodes(frame)
    hints = task.template.hints(task.params)
    texts = [h for h in hints if isinstance(h, str)]
    values = [h for h in hints if isinstance(h, int)]
    app = phone.apps.get(phone.current_app)
    entity_keys = app.entity_params if app else ()
    relevant = {str(v) for v in task.params.values()}
    out: list[Action] = []
    seen_targets: set[str] = set()

    def irrelevant(target) -> bool:
        return any(k in target[1] and str(target[1][k]) not in relevant for k in entity_keys)

    for e, n in zip(elements, nodes):
        x1, y1, x2, y2 = e["bounds"]
        if n.clickable and irrelevant(n.tap):
            continue
        if n.kind in ("field", "search"):  # focus+type in one targeted action, into empty fields only
            if not n.text:
                center = _grid_point((x1 + x2) / 2, (y1 + y2) / 2)
                out += [Action("type", text=t, point=center) for t in texts]
            continue
        if n.clickable:
            if n.kind == "slider":
                for v in values:
                    out.append(Action("click", point=_grid_point(x1 + (x2 - x1) * v / 100, (y1 + y2) / 2)))
            else:
                key = canonical_json(n.tap)
                if key not in seen_targets:
                    seen_targets.add(key)
                    out.append(Action("click", point=_grid_point((x1 + x2) / 2, (y1 + y2) / 2)))
        if n.long_tap is not None and not irrelevant(n.long_tap):
            out.append(Action("long_press", point=_grid_point((x1 + x2) / 2, (y1 + y2) / 2)))
    page = phone.top_page() if phone.current_app in phone.apps else None
    if frame.body is not None and frame.scroll_max and not frame.modal:
        if page["scroll"] < frame.scroll_max:
            out.append(Action("swipe", direction="up"))
        if min(page["scroll"], frame.scroll_max) > 0:
            out.append(Action("swipe", direction="down"))
    out.append(Action("system_button", button="back"))
    out += [Action("open_app", app=a) for a in task.apps if a != phone.current_app]
    if task.answer_spec is not None and phone.answer is None:
        shown = [f"{e['text']}\n{e['desc']}" for e in elements]
        if any(ev in s for ev in task.evidence() for s in shown):
            gold = task.answer_spec.gold
            out.append(Action("answer", text=f"{gold:g}" if isinstance(gold, float) else str(gold)))
    return out


def shortest_path(phone: Phone, task: "TaskInstance", max_depth: int | None = None,
                  max_nodes: int = MAX_NODES) -> list[Action] | None:
    """Fewest actions from `phone`'s state to clean success, or None if not found within the
    depth (default: the task's step budget) and node limits. `phone` is not modified."""
    depth_cap = task.step_budget if max_depth is None else max_depth
    probe = phone.fork()
    start = probe.snapshot()
    verdict = task.judge(probe)
    if verdict.success and verdict.clean:
        return []
    allowed = set(task.apps) | {LAUNCHER}
    seen = {_state_key(probe)}
    queue: deque[tuple[dict, list[Action]]] = deque([(start, [])])
    expanded = 0
    while queue and expanded < max_nodes:
        snap, path = queue.popleft()
        if len(path) >= depth_cap:
            continue
        expanded += 1
        probe.restore(snap)
        actions = candidate_actions(probe, task)
        for a in actions:
            probe.restore(snap)
            if not probe.step(a).ok:
                continue
            key = _state_key(probe)
            if key in seen:
                continue
            seen.add(key)
            verdict = task.judge(probe)
            if verdict.side_effects:
                continue
            if verdict.success:
                return path + [a]
            if probe.current_app not in allowed or (verdict.answer_ok is False and probe.answer is not None):
                continue
            queue.append((probe.snapshot(), path + [a]))
    return None


_DISTANCES: OrderedDict[tuple[str, str], int | None] = OrderedDict()


def distance_to_goal(phone: Phone, task: "TaskInstance") -> int | None:
    """Minimum number of actions from the phone's state to clean success (None: unreachable
    within the budget, e.g. after an irreversible side effect). Cached per (task, state)."""
    key = (f"{task.id}@{task.world_seed}", _state_key(phone))
    if key not in _DISTANCES:
        path = shortest_path(phone, task)
        _DISTANCES[key] = None if path is None else len(path)
        if len(_DISTANCES) > 4096:
            _DISTANCES.popitem(last=False)
    return _DISTANCES[key]
