"""Function-aware depth-first exploration of one target app (MobileForge §2.2.1, appendix F).

Structural anchors (declared screens in the simulator, APK activities on devices) and the
current screen produce goals; the explorer pursues each goal depth-first, trying the
elements whose labels best match the goal first, and restores the parent state before
every branch (snapshot restore in the simulator; relaunch + replay of the action prefix on
devices, behind the same `restore`). Every transition is recorded with before/after
observation, action, target element and a one-line summary. Exploration discovers what is
reachable; it is not a demonstration of any task.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Any, Callable, Protocol

from ops.actions import Action, ActionType
from ops.agent.episode import Anchor, EnvStep, Observation


class ExplorableEnvironment(Protocol):
    def launch(self, app: str) -> Observation:
        """Start `app` from a clean state and return its first screen."""

    def anchors(self, app: str) -> list[Anchor]: ...

    def step(self, action: Action) -> EnvStep: ...

    def observe(self) -> Observation: ...

    def snapshot(self) -> Any: ...

    def restore(self, snapshot: Any) -> None: ...


@dataclass(frozen=True)
class ExplorationConfig:
    max_depth: int = 4  # actions from the app's first screen
    max_transitions: int = 80  # per app
    max_branches: int = 8  # elements tried per state
    type_text: str = "hello"  # text typed into editable fields


@dataclass(frozen=True)
class Transition:
    """One explored step. Transitions form a tree: follow `parent_id` back to the app's start."""

    transition_id: str
    parent_id: str | None
    depth: int
    goal: str
    before: Observation
    after: Observation
    action: Action
    target_element: dict[str, Any] | None
    summary: str


# goal generator: (app, anchors, first observation) -> goals; offline default or an LLM
GoalGenerator = Callable[[str, list[Anchor], Observation], list[str]]

_WORD = re.compile(r"[a-z0-9]+")
_EDITABLE = ("EditText", "edit", "input")


def offline_goals(app: str, anchors: list[Anchor], first: Observation) -> list[str]:
    """One goal per declared screen, worded as a user would: no LLM needed."""
    return [f"In {app}, open '{a.title}' and try what it offers" for a in anchors]


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


def _label(e: dict[str, Any]) -> str:
    return " ".join(str(e.get(k) or "") for k in ("text", "desc")).strip()


def state_key(obs: Observation) -> str:
    """Identity of a screen state for the visited set: screen id plus visible labels and flags."""
    parts = [obs.app, obs.screen] + [
        f"{_label(e)}|{e.get('checked')}|{e.get('focused')}" for e in obs.elements
    ]
    return hashlib.sha1("\x1f".join(parts).encode()).hexdigest()


def candidate_actions(obs: Observation, goal: str, config: ExplorationConfig) -> list[tuple[Action, dict]]:
    """Actions worth trying on this screen, the ones whose labels match the goal first."""
    goal_words = _words(goal)
    scored = []
    for e in obs.elements:
        if not e.get("enabled", True):
            continue
        cls = str(e.get("class", ""))
        if any(k in cls for k in _EDITABLE):
            action = Action(type=ActionType.TYPE, element=e["index"], text=config.type_text)
        elif e.get("clickable"):
            action = Action(type=ActionType.CLICK, element=e["index"])
        elif e.get("scrollable"):
            action = Action(type=ActionType.SWIPE, element=e["index"], direction="up")
        else:
            continue
        overlap = len(goal_words & _words(_label(e)))
        scored.append((-overlap, e["index"], action, e))
    scored.sort(key=lambda t: (t[0], t[1]))
    return [(a, e) for _, _, a, e in scored[: config.max_branches]]


def summarize(action: Action, element: dict[str, Any] | None, before: Observation,
              after: Observation) -> str:
    """One line describing a transition, e.g. `click 'Wi-Fi' on settings/main -> settings/wifi`."""
    what = f"'{_label(element)}'" if element else str(action.args)
    where = f"{before.app}/{before.screen}"
    result = f"{after.app}/{after.screen}" if (after.app, after.screen) != (before.app, before.screen) \
        else "same screen, content changed" if state_key(after) != state_key(before) else "no visible change"
    return f"{action.type.value} {what} on {where} -> {result}"


def explore_app(env: ExplorableEnvironment, app: str, config: ExplorationConfig = ExplorationConfig(),
                goals: GoalGenerator = offline_goals) -> list[Transition]:
    """Depth-first exploration of `app`, one search per goal, sharing a visited set."""
    first = env.launch(app)
    root = env.snapshot()
    visited = {state_key(first)}
    out: list[Transition] = []
    for g, goal in enumerate(goals(app, env.anchors(app), first)):
        if len(out) >= config.max_transitions:
            break
        _dfs(env, goal, f"{app}-g{g}", None, root, first, 0, visited, out, config)
    return out


def _dfs(env: ExplorableEnvironment, goal: str, prefix: str, parent: str | None, snapshot: Any,
         obs: Observation, depth: int, visited: set[str], out: list[Transition],
         config: ExplorationConfig) -> None:
    if depth >= config.max_depth:
        return
    for b, (action, element) in enumerate(candidate_actions(obs, goal, config)):
        if len(out) >= config.max_transitions:
            return
        env.restore(snapshot)  # back to the parent state before every branch
        if not env.step(action).ok:
            continue
        after = env.observe()
        key = state_key(after)
        if key in visited or after.app != obs.app:  # leaving the app explores nothing of it
            continue
        visited.add(key)
        tid = f"{prefix}.{b}"
        out.append(Transition(tid, parent, depth, goal, obs, after, action, element,
                              summarize(action, element, obs, after)))
        _dfs(env, goal, tid, tid, env.snapshot(), after, depth + 1, visited, out, config)


def trajectories(transitions: list[Transition]) -> list[list[Transition]]:
    """Root-to-leaf paths of the exploration tree: the trajectories the curriculum mines."""
    by_id = {t.transition_id: t for t in transitions}
    parents = {t.parent_id for t in transitions}
    paths = []
    for leaf in (t for t in transitions if t.transition_id not in parents):
        path = [leaf]
        while path[-1].parent_id is not None:
            path.append(by_id[path[-1].parent_id])
        paths.append(path[::-1])
    return paths


def transitions_from_rows(rows: list[dict[str, Any]]) -> list[Transition]:
    """Transitions rebuilt from `exploration_transitions` rows (ops.data.schemas).

    The table keeps screenshots, screens and a11y trees but not the flat element lists, so
    the rebuilt observations carry the target element only (`elements` holds it when known).
    """
    import json

    out = []
    for r in rows:
        target = json.loads(r["target_element"]) if r["target_element"] else None
        elements = [target] if target else []
        before = Observation(r["before_screenshot_png"], elements, json.loads(r["before_a11y"]), r["app"],
                             r["before_screen_id"])
        after = Observation(r["after_screenshot_png"], [], json.loads(r["after_a11y"]), r["app"],
                            r["after_screen_id"])
        out.append(Transition(r["transition_id"], r["parent_id"], r["step"], r["goal"], before, after,
                              Action.from_json(r["action"]), target, r["summary"]))
    return out
