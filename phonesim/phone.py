"""`Phone`: one simulated device. Runtime state is one JSON dict over shared read-only world
data; the OS layer (launcher, per-app back stacks, recents, keyboard, dialogs, menus, toasts,
back dispatch) and action execution live here. Rendering happens only when observed."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from phonesim import layout as L
from phonesim.actions import GRID, Action, ActionError, ActionType, ParseFailure
from phonesim.app import BACK, App
from phonesim.apps import load_apps
from phonesim.context import Ctx, new_page
from phonesim.state import copy_json
from phonesim.system import default_system, status_icons
from phonesim.widgets import CANVAS_H, CANVAS_W, PAD, Node, tap

LAUNCHER, RECENTS = "launcher", "recents"
DEFAULT_SIZE = (1080, 2400)
APPS_PER_PAGE = 16  # launcher icons per page (4 × 4); more apps go to further pages

_WORLDS: dict[tuple[str, int], dict[str, Any]] = {}  # shared read-only world data
_BASES: dict[tuple[int, tuple[str, ...]], dict[str, Any]] = {}  # initial runtime state per world


@dataclass(frozen=True, slots=True)
class StepResult:
    """Outcome of one action. `ok=False` means a recorded no-op; `reason` says why."""

    ok: bool
    reason: str | None = None
    event: str = ""  # what the action did, e.g. "tap contacts.open_detail"
    action: Action | None = None


@dataclass
class Observation:
    """What an agent sees. The screenshot is rendered (and PNG-encoded) only when accessed."""

    app: str
    screen: str
    elements: list[dict[str, Any]]
    a11y: dict[str, Any]
    size: tuple[int, int]
    _frame: L.Frame = field(repr=False)
    _dark: bool = field(repr=False, default=False)
    _image: Any = field(default=None, repr=False)
    _png: bytes | None = field(default=None, repr=False)

    @property
    def screenshot(self):
        """PIL image of the screen (cached per identical screen across phones)."""
        if self._image is None:
            from phonesim.render import render_frame
            self._image = render_frame(self._frame, self.size, self._dark)
        return self._image

    @property
    def png(self) -> bytes:
        if self._png is None:
            from phonesim.render import render_png
            self._png = render_png(self._frame, self.size, self._dark)
        return self._png

    def to_dict(self) -> dict[str, Any]:
        """JSON-able view without the image."""
        return {"app": self.app, "screen": self.screen, "size": list(self.size), "elements": self.elements,
                "a11y": self.a11y}


class Phone:
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

    def restore(self, snap: dict[str, Any], frame: L.Frame | None = None) -> None:
        """Set the state to a copy of `snap`. `frame`, if given, must be the frame composed from
        exactly this snapshot (frames are immutable), which saves recomposing it (solver)."""
        self.state = copy_json(snap)
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

    # --- actions ----------------------------------------------------------------------------
    def step(self, action: Action | ParseFailure | dict | str) -> StepResult:
        """Execute one canonical action. Bad or pointless actions are recorded no-ops, never errors."""
        if isinstance(action, ParseFailure):
            return StepResult(False, f"unparseable action: {action.reason}")
        if isinstance(action, (dict, str)):
            try:
                action = Action.from_dict(action) if isinstance(action, dict) else Action.from_json(action)
            except ActionError as exc:
                return StepResult(False, f"malformed action: {exc}")
        if not isinstance(action, Action):
            return StepResult(False, f"not an action: {type(action).__name__}")
        if self.state["os"]["toast"]:
            self.state["os"]["toast"] = None
            self.invalidate()
        ok, reason, event = self._dispatch(action)
        self.invalidate()
        return StepResult(ok, reason, event, action)

    def _dispatch(self, a: Action) -> tuple[bool, str | None, str]:
        t = a.type
        if t in (ActionType.CLICK, ActionType.DOUBLE_TAP, ActionType.LONG_PRESS):  # double tap acts as a tap
            return self._tap(a, long=t == ActionType.LONG_PRESS)
        if t == ActionType.TYPE:
            return self._type(a)
        if t in (ActionType.SWIPE, ActionType.DRAG):
            return self._swipe(a)
        if t == ActionType.SYSTEM_BUTTON:
            return self._button(a.button)
        if t == ActionType.KEY:
            return self._key(a.key)
        if t == ActionType.OPEN_APP:
            name = self.resolve_app(a.app)
            if name is None:
                return False, f"unknown app {a.app!r}", ""
            self.launch(name)
            return True, None, f"open {name}"
        if t == ActionType.ANSWER:
            self.state["os"]["answer"] = a.text
            return True, None, "answer"
        if t == ActionType.TERMINATE:
            self.state["os"]["terminated"] = a.status
            return True, None, f"terminate {a.status}"
        if t == ActionType.WAIT:
            return True, None, "wait"
        return False, f"unsupported action type {t.value}", ""

    def _point(self, a: Action) -> tuple[float, float] | str:
        """Logical target point of a pointed action, or a reason it has none."""
        if a.element is not None:
            elements, nodes = L.element_nodes(self.frame())
            if a.element >= len(elements):
                return f"element {a.element} out of range (0..{len(elements) - 1})"
            x1, y1, x2, y2 = elements[a.element]["bounds"]
            return (x1 + x2) / 2, (y1 + y2) / 2
        if a.point is None:
            return "no target point"
        return a.point[0] * CANVAS_W / GRID, a.point[1] * CANVAS_H / GRID

    def _tap(self, a: Action, long: bool = False) -> tuple[bool, str | None, str]:
        pt = self._point(a)
        if isinstance(pt, str):
            return False, pt, ""
        node = L.hit_test(self.frame(), *pt, long=long)
        if node is None:
            if long and L.hit_test(self.frame(), *pt) is not None:
                return False, "element has no long-press action", ""
            return False, "tap on nothing", ""
        target = node.long_tap if long else node.tap
        pos = min(1.0, max(0.0, (pt[0] - node.x) / node.w)) if node.kind == "slider" else None
        return self.fire(target, pos)

    def fire(self, target: list, pos: float | None = None) -> tuple[bool, str | None, str]:
        """Run a tap target `[trigger, params]`: an `os.*` trigger or an app transition."""
        trig, params = target[0], dict(target[1])
        if trig.startswith("os."):
            return self._os_trigger(trig[3:], params)
        app = self.apps[self.current_app]
        tr = app.transitions.get(trig)
        if tr is None:
            raise KeyError(f"app {app.name}: element fires undeclared transition {trig!r}")
        page = self.top_page()
        if "*" not in tr.src and page["screen"] not in tr.src:
            raise KeyError(f"app {app.name}: transition {trig!r} fired on screen {page['screen']!r}, "
                           f"declared for {tr.src}")
        if pos is not None and "pos" in params:
            params["pos"] = round(pos, 4)
        ctx = Ctx(self, app.name, page)
        if tr.guard is not None:
            why = tr.guard(ctx, params)
            if why:
                return False, why, f"guard {trig}"
        ctx.close_overlay()
        if tr.effect is not None:
            tr.effect(ctx, params)
        if tr.dst == BACK:
            self.pop_page(app.name)
        elif tr.dst is not None:
            self.push_page(app.name, tr.dst, params)
        return True, None, f"tap {trig}"

    def _os_trigger(self, name: str, p: dict[str, Any]) -> tuple[bool, str | None, str]:
        page = self.top_page() if self.current_app not in (LAUNCHER, RECENTS) else None
        if name == "back":
            return self._button("back")
        if name == "home":
            return self._button("home")
        if name == "recents":
            return self._button("recent")
        if name == "up":
            self.pop_page(self.current_app)
            return True, None, "navigate up"
        if name == "launch":
            self.launch(p["app"])
            return True, None, f"open {p['app']}"
        if name == "switch":
            self.launch(p["app"])
            return True, None, f"switch {p['app']}"
        if name == "clear_recents":
            os_ = self.state["os"]
            os_["tasks"], os_["recents"], os_["foreground"] = {}, [], LAUNCHER
            return True, None, "clear recents"
        if name == "dismiss" and page is not None:
            page["dialog"], page["menu"] = None, None
            return True, None, "dismiss overlay"
        if name == "focus" and page is not None:
            page["focus"] = p["field"]
            return True, None, f"focus {p['field']}"
        if name == "clear" and page is not None:
            page["fields"][p["field"]] = ""
            return True, None, f"clear {p['field']}"
        if name == "key":
            return self._key(p["k"])
        raise KeyError(f"unknown system trigger os.{name}")

    def _focused_page(self) -> dict[str, Any] | None:
        if self.current_app in (LAUNCHER, RECENTS):
            return None
        page = self.top_page()
        return page if page["focus"] is not None and not (page["dialog"] or page["menu"]) else None

    def _type(self, a: Action) -> tuple[bool, str | None, str]:
        if a.point is not None or a.element is not None:
            ok, reason, _ = self._tap(a)
            if not ok:
                return False, f"could not focus target: {reason}", ""
        page = self._focused_page()
        if page is None:
            return False, "no focused text field", ""
        fid = page["focus"]
        page["fields"][fid] = page["fields"].get(fid, "") + a.text
        return True, None, f"type {fid}"

    def _key(self, key: str) -> tuple[bool, str | None, str]:
        k = key.strip().lower()
        if k in ("back", "escape", "esc"):
            return self._button("back")
        if k == "home":
            return self._button("home")
        page = self._focused_page()
        if k == "enter":
            if page is None:
                return False, "enter with no focused field", ""
            page["focus"] = None
            return True, None, "enter"
        if page is None:
            return False, f"key {key!r} with no focused text field", ""
        fid = page["focus"]
        value = page["fields"].get(fid, "")
        if k in ("backspace", "del", "delete"):
            if not value:
                return False, "backspace on empty field", ""
            page["fields"][fid] = value[:-1]
            return True, None, f"backspace {fid}"
        char = " " if k == "space" else key if len(key) == 1 else None
        if char is None:
            return False, f"unknown key {key!r}", ""
        page["fields"][fid] = value + char
        return True, None, f"type {fid}"

    def _button(self, button: str) -> tuple[bool, str | None, str]:
        os_ = self.state["os"]
        fg = os_["foreground"]
        if button == "home":
            if fg == LAUNCHER:
                return False, "already on the home screen", ""
            self._go_home()
            return True, None, "home"
        if button == "recent":
            if fg != RECENTS:
                os_["prev"] = fg
            os_["foreground"] = RECENTS
            if fg in self.apps:
                self.top_page(fg)["focus"] = None
            return True, None, "recents"
        if button == "enter":
            return self._key("enter")
        if button == "menu":
            return False, "no options menu on this screen", ""
        # back: dialog/menu > keyboard > page > home (MobileGym appendix A.4 priority chain)
        if fg == LAUNCHER:
            return False, "back on the home screen does nothing", ""
        if fg == RECENTS:
            prev = os_["prev"]
            os_["foreground"] = prev if prev in self.apps and prev in os_["tasks"] else LAUNCHER
            return True, None, "back from recents"
        page = self.top_page()
        if page["dialog"] or page["menu"]:
            page["dialog"], page["menu"] = None, None
            return True, None, "back: dismiss overlay"
        if page["focus"] is not None:
            page["focus"] = None
            return True, None, "back: hide keyboard"
        stack = os_["tasks"][fg]
        if len(stack) > 1:
            stack.pop()
            return True, None, "back: page"
        self._go_home()
        return True, None, "back: home"

    def _swipe(self, a: Action) -> tuple[bool, str | None, str]:
        frame = self.frame()
        if a.direction is not None:
            dx, dy = {"up": (0, -1), "down": (0, 1), "left": (-1, 0), "right": (1, 0)}[a.direction]
            start = self._point(a) if (a.point is not None or a.element is not None) else None
        else:
            start = (a.point[0] * CANVAS_W / GRID, a.point[1] * CANVAS_H / GRID)
            dx = (a.end_point[0] - a.point[0]) * CANVAS_W / GRID
            dy = (a.end_point[1] - a.point[1]) * CANVAS_H / GRID
        if isinstance(start, str):
            return False, start, ""
        if self.current_app == LAUNCHER and abs(dx) > abs(dy) and not frame.modal:
            page = min(self.state["os"].get("launcher_page", 0), self.launcher_pages() - 1)
            new = page + (1 if dx < 0 else -1)  # swipe left shows the next page
            if not 0 <= new < self.launcher_pages():
                return False, "no more launcher pages", ""
            if new:
                self.state["os"]["launcher_page"] = new
            else:
                self.state["os"].pop("launcher_page", None)  # page 0 is the default (absent key)
            return True, None, f"launcher page {new + 1}"
        if start is not None and abs(dx) > abs(dy):
            node = L.hit_test(frame, *start)
            if node is not None and node.kind == "slider" and a.end_point is not None:
                end_x = a.end_point[0] * CANVAS_W / GRID
                return self.fire(node.tap, min(1.0, max(0.0, (end_x - node.x) / node.w)))
            return False, "nothing to swipe horizontally", ""
        if abs(dy) <= abs(dx):
            return False, "nothing to swipe horizontally", ""
        if frame.body is None or frame.scroll_max == 0 or frame.modal:
            return False, "nothing to scroll", ""
        page = self.top_page()
        viewport = frame.clip[1] - frame.clip[0]
        delta = -dy if a.direction is None else -dy * int(viewport * 0.6)
        current = min(page["scroll"], frame.scroll_max)  # content may have shrunk since
        new = min(max(current + int(delta), 0), frame.scroll_max)
        if new == current:
            return False, "already scrolled to the end", ""
        page["scroll"] = new
        return True, None, f"scroll {new}"


def parse_short(text: str) -> Action | str:
    """Short syntax for interactive play: `tap 3`, `tap 500 420`, `type hello`, `swipe up`,
    `back`, `home`, `recent`, `enter`, `open Contacts`, `answer 42`, `done`, `fail`, or JSON."""
    s = text.strip()
    if s.startswith("{"):
        try:
            return Action.from_json(s)
        except ActionError as exc:
            return str(exc)
    word, _, rest = s.partition(" ")
    word, rest = word.lower(), rest.strip()
    try:
        if word in ("tap", "click", "long", "double"):
            kind = {"tap": "click", "click": "click", "long": "long_press", "double": "double_tap"}[word]
            nums = rest.split()
            if len(nums) == 1:
                return Action(kind, element=int(nums[0]))
            return Action(kind, point=(float(nums[0]), float(nums[1])))
        if word == "type":
            return Action("type", text=rest)
        if word == "swipe":
            return Action("swipe", direction=rest)
        if word in ("back", "home", "recent", "enter", "menu"):
            return Action("system_button", button=word)
        if word == "open":
            return Action("open_app", app=rest)
        if word == "answer":
            return Action("answer", text=rest)
        if word in ("done", "fail"):
            return Action("terminate", status="success" if word == "done" else "failure")
        if word == "wait":
            return Action("wait")
        if word == "key":
            return Action("key", key=rest)
    except (ActionError, ValueError, IndexError) as exc:
        return str(exc)
    return f"unknown command {word!r}"

