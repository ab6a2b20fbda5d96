"""App definition: identity, world-data generator, declarative navigation graph, screens.

The navigation graph is an extended FSM (MobileGym appendix B): screens are states,
transitions are fired by elements (`[transition_id, params]` taps), guarded by predicates
on state, run an effect on runtime data, and move to a destination screen. The same
declaration drives the UI and static BFS over screens (`App.route`).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable

from phonesim.context import Ctx
from phonesim.widgets import Page

BACK = "<back>"  # transition destination: pop the current page


@dataclass(frozen=True)
class Screen:
    """A UI state. `build(ctx)` returns the page for the current data and page params."""

    id: str
    build: Callable[[Ctx], Page]
    params: tuple[str, ...] = ()  # page parameters (e.g. contact id); part of the UI state
    doc: str = ""  # human title (recents cards, docs)
    on_open: Callable[[Ctx], None] | None = None  # prefill page UI state (e.g. edit fields)


@dataclass(frozen=True)
class Transition:
    """An edge of the navigation graph fired by an element tap.

    `src`: screen ids where elements may fire it ("*" = any). `dst`: screen to push (its
    params are taken from the tap params), `BACK` to pop, or None to stay. `guard(ctx, params)`
    returning a string rejects the tap with that reason. `effect(ctx, params)` mutates runtime
    data / UI state; `pos` (0–1 fraction along the element) is passed for sliders.
    """

    id: str
    src: tuple[str, ...]
    dst: str | None = None
    effect: Callable[[Ctx, dict[str, Any]], None] | None = None
    guard: Callable[[Ctx, dict[str, Any]], str | None] | None = None
    doc: str = ""


@dataclass
class App:
    name: str  # id used by open_app and as the runtime data key
    label: str  # launcher label
    package: str
    color: str  # launcher icon colour
    glyph: str
    home: str  # root screen id
    screens: dict[str, Screen]
    transitions: dict[str, Transition]
    make_world: Callable[[int], dict[str, Any]]  # world seed -> read-only world data
    initial_data: Callable[[dict[str, Any]], dict[str, Any]]  # world -> runtime data (JSON)
    # Logical view of runtime data for judging/diffing (e.g. overlay merged over world data);
    # None = the runtime data itself.
    view: Callable[[dict[str, Any], dict[str, Any]], Any] | None = None
    # Tap parameters that name a world entity (contact id, network...). The solver only taps
    # elements whose entity parameters are among the task's parameter values.
    entity_params: tuple[str, ...] = ()
    templates: list[Any] = field(default_factory=list)  # TaskTemplate, filled by the registry

    def __post_init__(self) -> None:
        if self.home not in self.screens:
            raise ValueError(f"app {self.name}: home screen {self.home!r} is not declared")
        for t in self.transitions.values():
            for s in t.src:
                if s != "*" and s not in self.screens:
                    raise ValueError(f"app {self.name}: transition {t.id} from unknown screen {s!r}")
            if t.dst not in (None, BACK) and t.dst not in self.screens:
                raise ValueError(f"app {self.name}: transition {t.id} to unknown screen {t.dst!r}")

    def edges(self) -> dict[str, list[tuple[str, str]]]:
        """screen -> [(transition id, destination screen)] for forward transitions."""
        out: dict[str, list[tuple[str, str]]] = {s: [] for s in self.screens}
        for t in self.transitions.values():
            if t.dst in (None, BACK):
                continue
            for s in (self.screens if "*" in t.src else t.src):
                out[s].append((t.id, t.dst))
        return out

    def route(self, src: str, dst: str) -> list[str] | None:
        """Shortest list of transition ids from screen `src` to screen `dst` (static BFS)."""
        edges, prev = self.edges(), {src: None}
        queue = deque([src])
        while queue:
            s = queue.popleft()
            if s == dst:
                path = []
                while prev[s] is not None:
                    s, tid = prev[s]
                    path.append(tid)
                return path[::-1]
            for tid, nxt in edges[s]:
                if nxt not in prev:
                    prev[nxt] = (s, tid)
                    queue.append(nxt)
        return None
