"""`Phone`: one simulated device. Runtime state is one JSON dict over shared read-only world
data; the OS layer (launcher, per-app back stacks, recents, keyboard, dialogs, menus, toasts,
back dispatch) and action execution live here. Rendering happens only when observed."""

from __future__ import annotations

import marshal
from collections.abc import Mapping
from typing import Any

from phonesim import layout as L
from phonesim.app import App
from phonesim.apps import load_apps
from phonesim.context import Ctx, new_page
from phonesim.observation import Observation
from phonesim.phone_input import PhoneInput
from phonesim.state import copy_json
from phonesim.system import LAUNCHER, RECENTS, default_system, status_icons
from phonesim.widgets import CANVAS_H, CANVAS_W, PAD, Node, tap

DEFAULT_SIZE = (1080, 2400)
APPS_PER_PAGE = 16  # launcher icons per page (4 × 4); more apps go to further pages

_WORLDS: dict[tuple[str, int], dict[str, Any]] = {}  # shared read-only world data
_BASES: dict[tuple[int, tuple[str, ...]], dict[str, Any]] = {}  # initial runtime state per world




class Phone(PhoneInput):
    """A simulated phone. Create many; they share world data and render caches."""

    def __init__(self, world_seed: int = 0, size: tuple[int, int] = DEFAULT_SIZE,
                 apps: list[str] | None = None, catalog: Mapping[str, App] | None = None) -> None:
        """`catalog`: the apps this phone can have (default: the target apps, `load_apps()`; the
        pretraining world's phones get `phonesim.pretrain.load_pretrain_apps()`); `apps`: which of them
        it has (default: all)."""
        registry = load_apps() if catalog is None else catalog
        names = tuple(sorted(registry)) if apps is None else tuple(apps)
        unknown = [n for n in names if n not in registry]
        if unknown:
            raise ValueError(f"unknown apps {unknown}; registered: {sorted(registry)}")
        if size[0] < 180 or size[1] < 320:
            raise ValueError(f"screen size {size} too small (min 180×320)")
        self.apps: dict[str, App] = {n: registry[n] for n in names}
        self.world_seed = world_seed
        self.size = (int(size[0]), int(size[1]))
        self.state: dict[str, Any] = copy_json(self._base())
        self._frame: L.Frame | None = None

    # --- state -----------------------------------------------------------------------------
    def _base(self) -> dict[str, Any]:
        key = (self.world_seed, tuple(self.apps))
        if key not in _BASES:
            data = {"system": default_system(self.world_seed)}
            for name, app in self.apps.items():
                data[name] = app.initial_data(self.world(name))
            _BASES[key] = {
                "os": {"foreground": LAUNCHER, "tasks": {}, "recents": [], "toast": None, "answer": None,
                       "terminated": None, "prev": LAUNCHER},
                "data": data,
            }
        return _BASES[key]

    def world(self, app: str) -> dict[str, Any]:
        key = (app, self.world_seed)
        if key not in _WORLDS:
            _WORLDS[key] = self.apps[app].make_world(self.world_seed)
        return _WORLDS[key]

    def data(self, app: str) -> dict[str, Any]:
        return self.state["data"][app]

    def logical_state(self) -> dict[str, Any]:
        """Device data as judges see it: each app's `view` (world merged with runtime), plus system."""
        data = self.state["data"]
        out = {"system": data["system"]}
        for name, app in self.apps.items():
            out[name] = app.view(self.world(name), data[name]) if app.view else data[name]
        return out

    def reset(self) -> None:
        """Back to the world's initial state (launcher, no tasks)."""
        self.restore(self._base())

    def snapshot(self) -> dict[str, Any]:
        """A JSON copy of the full runtime state."""
        return copy_json(self.state)

    def snapshot_bytes(self) -> bytes:
        """The runtime state marshalled: the cheapest copy to keep many of and restore from (solver)."""
        return marshal.dumps(self.state)

    def restore(self, snap: dict[str, Any] | bytes, frame: L.Frame | None = None) -> None:
        """Set the state to a copy of `snap` (a `snapshot()` or `snapshot_bytes()`). `frame`, if given,
        must be the frame composed from exactly this snapshot (frames are immutable), which saves
        recomposing it (solver)."""
        self.state = marshal.loads(snap) if isinstance(snap, bytes) else copy_json(snap)
        self._frame = frame

    def fork(self) -> "Phone":
        """An independent phone with a copy of this one's state (world data shared)."""
        other = object.__new__(Phone)
        other.apps, other.world_seed, other.size = self.apps, self.world_seed, self.size
        other.state = copy_json(self.state)
        other._frame = None
        return other

    def invalidate(self) -> None:
        """Drop the cached screen; call after editing `state` directly (actions do it themselves)."""
        self._frame = None

    # --- where are we -------------------------------------------------------------------------
    @property
    def current_app(self) -> str:
        return self.state["os"]["foreground"]

    def top_page(self, app: str | None = None) -> dict[str, Any] | None:
        stack = self.state["os"]["tasks"].get(app or self.current_app)
        return stack[-1] if stack else None

    @property
    def current_screen(self) -> str:
        page = self.top_page()
        return page["screen"] if page else self.current_app

    @property
    def answer(self) -> str | None:
        return self.state["os"]["answer"]

    @property
    def terminated(self) -> str | None:
        return self.state["os"]["terminated"]

    # --- navigation primitives (used by the OS and by Ctx.go/back) ---------------------------
    def push_page(self, app: str, screen: str, params: dict[str, Any]) -> None:
        spec = self.apps[app].screens[screen]
        stack = self.state["os"]["tasks"][app]
        if stack:
            stack[-1]["focus"] = None
        missing = [k for k in spec.params if k not in params]
        if missing:
            raise KeyError(f"app {app}: screen {screen!r} opened without params {missing}")
        page = new_page(screen, {k: params[k] for k in spec.params})
        stack.append(page)
        if spec.on_open is not None:
            spec.on_open(Ctx(self, app, page))

    def pop_page(self, app: str) -> None:
        stack = self.state["os"]["tasks"][app]
        if len(stack) > 1:
            stack.pop()
        else:
            self._go_home()

    def _go_home(self) -> None:
        os_ = self.state["os"]
        page = self.top_page()
        if page is not None:
            page["focus"] = None
        os_["prev"] = os_["foreground"] if os_["foreground"] != RECENTS else os_["prev"]
        os_["foreground"] = LAUNCHER

    def launch(self, name: str) -> None:
        os_ = self.state["os"]
        if name not in os_["tasks"]:
            os_["tasks"][name] = [new_page(self.apps[name].home)]
        if name in os_["recents"]:
            os_["recents"].remove(name)
        os_["recents"].insert(0, name)
        os_["foreground"] = name

    def resolve_app(self, name: str) -> str | None:
        key = name.strip().lower()
        for app in self.apps.values():
            if key in (app.name.lower(), app.label.lower(), app.package.lower()):
                return app.name
        return None

    # --- composition ----------------------------------------------------------------------------
    def frame(self) -> L.Frame:
        if self._frame is None:
            self._frame = self._compose()
        return self._frame

    def _compose(self) -> L.Frame:
        os_, system = self.state["os"], self.state["data"]["system"]
        nodes: list[Node] = []
        fg, body, scroll_max, clip, modal, kb = os_["foreground"], None, 0, (0, CANVAS_H), False, False
        if fg == LAUNCHER:
            nodes += self._launcher_nodes()
            package, screen = "com.android.launcher", LAUNCHER
        elif fg == RECENTS:
            nodes += self._recents_nodes()
            package, screen = "com.android.systemui", RECENTS
        else:
            app, page = self.apps[fg], self.top_page()
            ctx = Ctx(self, fg, page)
            built = app.screens[page["screen"]].build(ctx)
            kb = page["focus"] is not None
            content, body, scroll_max, clip = L.layout_page(built, page["scroll"], kb)
            nodes += content
            if page["menu"]:
                nodes += L.menu_nodes(page["menu"])
                modal = True
            elif page["dialog"]:
                nodes += L.dialog_nodes(page["dialog"])
                modal = True
            if kb:
                nodes.append(L.keyboard())
            package, screen = app.package, page["screen"]
        if os_["toast"]:
            nodes.append(L.toast_node(os_["toast"], kb))
        nodes.insert(0, L.status_bar(system["clock"], status_icons(system)))
        nodes.append(L.nav_bar())
        return L.Frame(package, screen, nodes, body, scroll_max, modal, kb, clip)

    def launcher_pages(self) -> int:
        return max(1, -(-len(self.apps) // APPS_PER_PAGE))

    def _launcher_nodes(self) -> list[Node]:
        system = self.state["data"]["system"]
        out = [Node("clock", "android.widget.TextClock", 0, 80, CANVAS_W, 120, text=system["clock"],
                    sub=system["date"], rid="clock")]
        pages = self.launcher_pages()
        page = min(self.state["os"].get("launcher_page", 0), pages - 1)
        shown = list(self.apps.values())[page * APPS_PER_PAGE:(page + 1) * APPS_PER_PAGE]
        for i, app in enumerate(shown):
            col, row = i % 4, i // 4
            out.append(Node("appicon", "android.widget.TextView", 12 + col * 84, 260 + row * 110, 84, 104,
                            text=app.label, desc=app.label, tap=tap("os.launch", app=app.name),
                            value=(app.color, app.glyph), rid=f"icon_{app.name}"))
        if pages > 1:  # swipe left / right to change page
            out.append(Node("pagedots", "android.widget.LinearLayout", 0, 704, CANVAS_W, 24,
                            desc=f"Page {page + 1} of {pages}", value=(page, pages), rid="page_indicator"))
        return out

    def _recents_nodes(self) -> list[Node]:
        recents = self.state["os"]["recents"]
        out = [Node("title", "android.widget.TextView", PAD, 32, 300, 48, text="Recent apps", rid="recents_title")]
        if not recents:
            out.append(Node("paragraph", "android.widget.TextView", PAD, 120, 328, 40, text="No recent items"))
            return out
        for i, name in enumerate(recents[:5]):
            app, page = self.apps[name], self.top_page(name)
            title = self.apps[name].screens[page["screen"]].doc or page["screen"]
            out.append(Node("card", "android.widget.FrameLayout", 24, 96 + i * 116, CANVAS_W - 48, 104,
                            text=app.label, sub=title, tap=tap("os.switch", app=name), value=app.color,
                            rid=f"recent_{name}"))
        out.append(Node("textbutton", "android.widget.Button", 110, 96 + min(5, len(recents)) * 116 + 8, 140, 48,
                        text="Clear all", tap=tap("os.clear_recents"), rid="clear_all"))
        return out

    def observe(self) -> Observation:
        frame = self.frame()
        elements, _ = L.element_nodes(frame)
        sx, sy = self.size[0] / CANVAS_W, self.size[1] / CANVAS_H
        px = [dict(e, bounds=[round(e["bounds"][0] * sx), round(e["bounds"][1] * sy), round(e["bounds"][2] * sx),
                              round(e["bounds"][3] * sy)]) for e in elements]
        return Observation(self.current_app, frame.screen, px, L.a11y_tree(frame, (sx, sy)), self.size, frame,
                           bool(self.state["data"]["system"]["dark_theme"]))
