"""Shortest action sequences to a task's goal by A* over concrete states.

Candidate actions at a state are the agent's real options, narrowed the way a person
would: tap each distinct clickable element, long-press where possible, type a task hint
into an empty focused field, set sliders to hinted values, scroll, back, open a task app,
and answer once the evidence is on screen. States with unexpected side effects are not
expanded (a clean solution never passes through one), nor are apps the task does not use.
`distance_to_goal` is the length of that path: the programmatic critic calls a step
reasonable iff it lowers it. `shortcuts=False` searches without long presses and without typing
into search fields (plans of taps and scrolls; the critic's `direct_plans` hints them), with
its own memory.

Exactness. The search is A* with an admissible heuristic, so its lengths equal those of the
breadth-first search over the same candidate actions (`bfs_path`; `benchmarks/solver_bench.py`
compares both on every template's initial state and along simulated rollouts; a check of
318 random rollout states of the contacts/settings templates against the previous BFS
solver found no difference). The heuristic is the larger of
  * 1 while the goal is unmet, plus one `type` action for each *new* text hint not yet
    anywhere in the state. A hint is new if neither it nor all of its words occur in the
    task's initial state, world data or app view (a new phone number or email, not a
    contact's name typed into search): such text only enters by typing, and typing changes
    page fields only, never the device data or answer that goal checks read;
  * a lower bound remembered from earlier searches of the same task: a state reached after
    g actions from a state at distance D is at distance ≥ D − g (triangle inequality).
States on a found shortest path get their exact remaining path cached, so a rollout that
follows or returns to a known optimal path costs a dictionary lookup, and the remembered
bounds prune most of the rest: the critic's per-step queries after the first one per task
take ~0.1–15 ms. Where this can be off (assumptions that hold for every current template):
a hint is never typed into a page that already shows it in another field (no goal needs the
same text twice on one form); every new hint of a template is needed (an unneeded new text
would make distances too long by one per such text); goal checks never read page fields.

Cost of the first (cold) query per task, from the initial state (2 shared cores, load ≈ 6,
so absolute times are inflated ~2×): contacts.edit_phone 5.0 s with the previous BFS
(1109 expansions) → 1.5–3 s (~940); contacts.create 4.6 s → 0.6–1.4 s (89–602);
multi_bluetooth_then_call 6.9 s → ~3 s (~720). Most of the gain on those is from the
candidate and state-key narrowing, frame reuse and side-effect memo, not the heuristic
(weak on forms: it cannot tell that the create form is useless for an edit task).
Everything else is ≤ ~0.6 s cold, most ≤ 0.1 s. Per node, the search keeps states marshalled
(a restore is one `marshal.loads`) and computes a state's canonical-JSON key once per distinct
marshalled form: solving the pretraining world's 326 checked templates went from 51 to 32 CPU s
(same paths for those and every target template).
"""

from __future__ import annotations

import hashlib
import heapq
import json
import marshal
from collections import OrderedDict
from dataclasses import dataclass, field
from functools import lru_cache

from phonesim import layout as L
from phonesim.actions import GRID, Action
from phonesim.phone import Phone
from phonesim.system import LAUNCHER
from phonesim.state import canonical_json
from phonesim.tasks import TaskInstance
from phonesim.widgets import CANVAS_H, CANVAS_W

MAX_NODES = 6000
MAX_TASKS = 32  # tasks whose search memory (exact paths, lower bounds) is kept
MAX_STATES_PER_TASK = 50_000  # per table; keys are 16-byte digests, so ≲ 10 MB per task


def _grid_point(x: float, y: float) -> tuple[int, int]:
    return min(GRID, max(0, round(x * GRID / CANVAS_W))), min(GRID, max(0, round(y * GRID / CANVAS_H)))


def _state_key(phone: Phone) -> bytes:
    """State identity for de-duplication. Left out, because they multiply states without
    changing what is reachable in practice: empty field values (same as absent), keyboard focus
    (a targeted `type` focuses by itself) and the page stacks of background apps (`open_app`
    resumes them as they are, and re-navigating costs the same from any of them). Paths stay
    valid: search replays real states. A digest of canonical JSON."""
    return _keys(phone)[0]


# digest of a marshalled state -> its `_keys` (~0.2 kB an entry), and digest of marshalled device data ->
# the hash of its canonical JSON (~0.5 kB); a full table is cleared
_STATE_KEYS: dict[bytes, tuple[bytes, bytes]] = {}
_DATA_HASHES: dict[bytes, "hashlib._Hash"] = {}
MAX_STATE_KEYS, MAX_DATA_HASHES = 100_000, 20_000


def _keys(phone: Phone, blob: bytes | None = None) -> tuple[bytes, bytes]:
    """16-byte digests of (the state key, the device data alone), defined by canonical JSON (key
    order does not matter). That is computed once per distinct marshalled form (`blob`: the state
    marshalled, if the caller has it): marshalling is several times cheaper, and equal marshalled
    bytes mean equal values (unequal bytes may still be equal values: then only a cache miss)."""
    blob = marshal.dumps(phone.state) if blob is None else blob
    fingerprint = hashlib.blake2b(blob, digest_size=16).digest()
    return _memo(_STATE_KEYS, fingerprint, MAX_STATE_KEYS, lambda: _canonical_keys(phone.state))


def _memo(table: dict, key: bytes, limit: int, compute):
    """`table[key]`, computed on a miss; a table at `limit` entries is cleared first."""
    value = table.get(key)
    if value is None:
        if len(table) >= limit:
            table.clear()
        value = table[key] = compute()
    return value


def _canonical_keys(state: dict) -> tuple[bytes, bytes]:
    os_ = state["os"]
    pages = [[p["screen"], p["params"], p["scroll"], {f: v for f, v in p["fields"].items() if v}, p["ui"],
              p["dialog"], p["menu"]] for p in os_["tasks"].get(os_["foreground"], [])]
    data_fingerprint = hashlib.blake2b(marshal.dumps(state["data"]), digest_size=16).digest()
    data = _memo(_DATA_HASHES, data_fingerprint, MAX_DATA_HASHES,
                 lambda: hashlib.blake2b(canonical_json(state["data"]).encode(), digest_size=16))
    rest = canonical_json([os_["foreground"], sorted(os_["tasks"]), pages, os_["answer"]]
                          + ([os_["launcher_page"]] if os_.get("launcher_page") else [])).encode()
    key = data.copy()
    key.update(rest)
    return key.digest(), data.digest()


@lru_cache(maxsize=1 << 16)
def _action(kind: str, point: tuple[int, int] | None = None, text: str | None = None, direction: str | None = None,
            button: str | None = None, app: str | None = None) -> Action:
    """A candidate action, built and validated once (actions are immutable; a search makes ~10 per expansion)."""
    return Action(kind, point=point, text=text, direction=direction, button=button, app=app)


def candidate_actions(phone: Phone, task: TaskInstance, shortcuts: bool = True) -> list[Action]:
    """The actions the search tries from the phone's current state (see module docstring).
    Without `shortcuts`: no long presses and no searches (typing into a search field), so a plan
    walks lists and pages with taps and scrolls where it can."""
    frame = phone.frame()
    elements, nodes = L.element_nodes(frame)
    hints = task.template.hints(task.params)
    values = [h for h in hints if isinstance(h, int)]
    shown_in_fields = {n.text for n in nodes if n.kind in ("field", "search") and n.text}
    texts = [h for h in hints if isinstance(h, str) and h not in shown_in_fields]
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
            if not n.text and (shortcuts or n.kind == "field"):
                center = _grid_point((x1 + x2) / 2, (y1 + y2) / 2)
                out += [_action("type", text=t, point=center) for t in texts]
            continue
        if n.clickable:
            if n.kind == "slider":
                for v in values:  # inside the bar at both ends: its right edge is not part of it
                    x = x1 + 1 + (x2 - x1 - 2) * v / 100
                    out.append(_action("click", point=_grid_point(x, (y1 + y2) / 2)))
            else:
                key = repr(n.tap)
                if key not in seen_targets:
                    seen_targets.add(key)
                    out.append(_action("click", point=_grid_point((x1 + x2) / 2, (y1 + y2) / 2)))
        if shortcuts and n.long_tap is not None and not irrelevant(n.long_tap):
            out.append(_action("long_press", point=_grid_point((x1 + x2) / 2, (y1 + y2) / 2)))
    page = phone.top_page() if phone.current_app in phone.apps else None
    if frame.body is not None and frame.scroll_max and not frame.modal:
        if page["scroll"] < frame.scroll_max:
            out.append(_action("swipe", direction="up"))
        if min(page["scroll"], frame.scroll_max) > 0:
            out.append(_action("swipe", direction="down"))
    out.append(_action("system_button", button="back"))
    out += [_action("open_app", app=a) for a in task.apps if a != phone.current_app]
    if task.answer_spec is not None and phone.answer is None:
        if task.evidence_shown(elements):
            gold = task.answer_spec.gold
            out.append(_action("answer", text=f"{gold:g}" if isinstance(gold, float) else str(gold)))
    return out


@dataclass
class _TaskMemory:
    """What searches of one task learned: exact optimal paths and distance lower bounds."""

    new_hints: tuple[bytes, ...]  # UTF-8
    paths: dict[bytes, list[Action] | None] = field(default_factory=dict)  # exact (None: unreachable)
    lower: dict[bytes, int] = field(default_factory=dict)
    side_effects: dict[bytes, tuple[str, ...]] = field(default_factory=dict)  # per device data

    def trim(self) -> None:
        for d in (self.paths, self.lower, self.side_effects):
            if len(d) > MAX_STATES_PER_TASK:
                d.clear()


_MEMORY: OrderedDict[str, _TaskMemory] = OrderedDict()


def _memory(task: TaskInstance, shortcuts: bool = True) -> _TaskMemory:
    key = f"{task.id}@{task.world_seed}" + ("" if shortcuts else "/direct")
    mem = _MEMORY.get(key)
    if mem is None:
        phone = task.make_phone()
        known = json.dumps([task.initial, phone.logical_state()], ensure_ascii=False, default=str)
        known += "".join(_world_text(phone, a) for a in task.apps)
        texts = [h for h in task.template.hints(task.params) if isinstance(h, str)]
        new = tuple(t for t in texts if t not in known and not all(w in known for w in t.split()))
        mem = _MEMORY[key] = _TaskMemory(tuple(t.encode() for t in new))
        if len(_MEMORY) > MAX_TASKS:
            _MEMORY.popitem(last=False)
    else:
        _MEMORY.move_to_end(key)
    return mem


_WORLD_TEXT: dict[tuple[str, int], str] = {}


def _world_text(phone: Phone, app: str) -> str:
    key = (app, phone.world_seed)
    if key not in _WORLD_TEXT:
        _WORLD_TEXT[key] = json.dumps(phone.world(app), ensure_ascii=False, default=str)
    return _WORLD_TEXT[key]


def clear_memory() -> None:
    """Forget what earlier searches learned (benchmarks time cold searches with it)."""
    _MEMORY.clear()


def _heuristic(blob: bytes, key: bytes, mem: _TaskMemory) -> int:
    """Admissible lower bound on the actions left from a non-goal state (module docstring);
    `blob` is the marshalled state (strings appear in it as UTF-8)."""
    h = 1 + sum(1 for t in mem.new_hints if t not in blob)
    return max(h, mem.lower.get(key, 0))


def _search(phone: Phone, task: TaskInstance, depth_cap: int, max_nodes: int,
            informed: bool = True, shortcuts: bool = True) -> list[Action] | None:
    """A* from the phone's state. `informed=False` is the plain breadth-first baseline: no
    heuristic, no memory read or written (benchmarks compare the two)."""
    mem = _memory(task, shortcuts) if informed else _TaskMemory(())
    probe = phone.fork()
    start_key = _state_key(probe)
    if start_key in mem.paths:
        known = mem.paths[start_key]
        if known is None or len(known) <= depth_cap:
            return known
    verdict = task.judge(probe)
    if verdict.success and verdict.clean:
        return []
    if verdict.answer_ok is False and probe.answer is not None:  # the answer cannot be re-given
        return None
    allowed = set(task.apps) | {LAUNCHER}
    # heap entries (f, -g, -tie, key): among equal f deeper first, then newest; a node is re-pushed if reached
    # with a smaller g (the memory bounds make the heuristic admissible but not consistent)
    best_g: dict[bytes, int] = {start_key: 0}
    start = probe.snapshot_bytes()
    node: dict[bytes, tuple[bytes, list[Action]]] = {start_key: (start, [])}  # marshalled state, path
    heap = [(_heuristic(start, start_key, mem) if informed else 0, 0, 0, start_key)]
    tie, expanded = 1, 0
    best: list[Action] | None = None
    while heap and expanded < max_nodes:
        if best is not None and heap[0][0] >= len(best):
            break
        _, neg_g, _, key = heapq.heappop(heap)
        g = -neg_g
        if g != best_g[key] or g >= depth_cap:
            continue
        expanded += 1
        snap, path = node[key]
        probe.restore(snap)
        actions = candidate_actions(probe, task, shortcuts)
        frame = probe.frame()
        for a in actions:
            probe.restore(snap, frame)
            if not probe.step(a).ok:
                continue
            blob = marshal.dumps(probe.state)
            child, data_key = _keys(probe, blob)
            if best_g.get(child, depth_cap + 1) <= g + 1:
                continue
            if child in mem.paths:  # exact remaining path already known
                rest = mem.paths[child]
                total = depth_cap + 1 if rest is None else g + 1 + len(rest)
                if total <= depth_cap and (best is None or total < len(best)):
                    best = path + [a] + rest
                continue
            side = mem.side_effects.get(data_key)
            verdict = None
            if side is None:
                verdict = task.judge(probe)
                side = mem.side_effects[data_key] = verdict.side_effects
            if side:
                continue
            verdict = verdict or task.judge(probe)
            if verdict.success:
                if best is None or g + 1 < len(best):
                    best = path + [a]
                continue
            if probe.current_app not in allowed or (verdict.answer_ok is False and probe.answer is not None):
                continue
            best_g[child] = g + 1
            node[child] = (blob, path + [a])
            h = _heuristic(blob, child, mem) if informed else 0
            heapq.heappush(heap, (g + 1 + h, -(g + 1), -tie, child))
            tie += 1
        if best is not None and not informed:  # breadth-first: the first goal found is nearest
            break
    proven = not heap or (best is not None and heap[0][0] >= len(best))  # else the node limit cut it short
    if informed and proven:
        _remember(phone, task, mem, start_key, best, best_g, depth_cap)
    return best


def _remember(phone: Phone, task: TaskInstance, mem: _TaskMemory, start_key: bytes,
              best: list[Action] | None, best_g: dict[bytes, int], depth_cap: int) -> None:
    if best is not None:  # every state on an optimal path is at exactly the remaining length
        replay = phone.fork()
        for i, a in enumerate(best):
            mem.paths[_state_key(replay)] = best[i:]
            replay.step(a)
        for k, g in best_g.items():  # triangle inequality: d(k) ≥ d(start) − g
            if len(best) - g > mem.lower.get(k, 0):
                mem.lower[k] = len(best) - g
    elif depth_cap >= task.step_budget:  # exhausted: no clean success within the budget
        mem.paths[start_key] = None
    mem.trim()


def shortest_path(phone: Phone, task: TaskInstance, max_depth: int | None = None,
                  max_nodes: int = MAX_NODES, shortcuts: bool = True) -> list[Action] | None:
    """Fewest actions from `phone`'s state to clean success, or None if not found within the
    depth (default: the task's step budget) and node limits. `phone` is not modified. Without
    `shortcuts`, among plans without long presses and searches (`candidate_actions`)."""
    path = _search(phone, task, task.step_budget if max_depth is None else max_depth, max_nodes,
                   shortcuts=shortcuts)
    return None if path is None else list(path)


def solve(phone: Phone, task: TaskInstance, shortcuts: bool = True) -> list[Action]:
    """`shortest_path`, raising `RuntimeError` when there is none within the step budget."""
    path = shortest_path(phone, task, shortcuts=shortcuts)
    if path is None:
        raise RuntimeError(f"{task.id}: no solution found within the step budget")
    return path


def bfs_path(phone: Phone, task: TaskInstance, max_nodes: int = MAX_NODES) -> list[Action] | None:
    """The uninformed breadth-first baseline of `shortest_path` (same candidates, no heuristic,
    no memory): for exactness checks and speed ratios in benchmarks."""
    return _search(phone, task, task.step_budget, max_nodes, informed=False)


def distance_to_goal(phone: Phone, task: TaskInstance) -> int | None:
    """Minimum number of actions from the phone's state to clean success (None: unreachable
    within the budget, e.g. after an irreversible side effect). Memoized per (task, state)."""
    path = shortest_path(phone, task)
    return None if path is None else len(path)
