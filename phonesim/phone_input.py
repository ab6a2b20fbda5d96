"""How a `Phone` takes input: actions dispatched to taps, typing, keys, system buttons and swipes, and the
OS triggers they fire (dialogs, menus, the keyboard); `parse_short` reads the short syntax of `sim play`.
`PhoneInput` is the input half of `phonesim.phone.Phone`, which holds the state and composes the screen."""

from __future__ import annotations

from typing import Any

from phonesim import layout as L
from phonesim.actions import GRID, Action, ActionError, ActionType, ParseFailure
from phonesim.app import BACK
from phonesim.context import Ctx
from phonesim.observation import StepResult
from phonesim.system import LAUNCHER, RECENTS
from phonesim.widgets import CANVAS_H, CANVAS_W


class PhoneInput:
    """Action execution of a `Phone` (its state, pages and apps live in `phonesim.phone.Phone`)."""

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
