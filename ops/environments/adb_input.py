"""How an `AdbEnvironment` acts: canonical actions as adb `input` commands (taps and long presses on
pixels, swipes, scrolls inside the scrolling container, keys and system buttons, text through `input
text` or the ADBKeyboard IME), the input half of `ops.environments.adb.AdbEnvironment`."""

from __future__ import annotations

import base64
import shlex
import time

from ops.actions import GRID, Action, ActionType
from ops.agent.episode import EnvStep

ADB_KEYBOARD = "com.android.adbkeyboard"
BUTTON_KEYCODES = {"back": 4, "home": 3, "enter": 66, "recent": 187, "menu": 82}
KEY_KEYCODES = {"back": 4, "escape": 4, "esc": 4, "home": 3, "enter": 66, "backspace": 67, "del": 67,
                "delete": 67, "space": 62, "tab": 61}


class AdbInput:
    """Action execution of an `AdbEnvironment` (its device, shell and observations live there)."""

    def _pixels(self, point: tuple[float, float]) -> tuple[int, int]:
        width, height = self.size
        return (min(round(point[0] * width / GRID), width - 1), min(round(point[1] * height / GRID), height - 1))

    def _target(self, action: Action) -> tuple[int, int] | str:
        """Pixel point of a pointed action, or the reason it has none."""
        if action.element is not None:
            elements = self._observation.elements if self._observation else []
            if action.element >= len(elements):
                return f"element {action.element} out of range (0..{len(elements) - 1})"
            x1, y1, x2, y2 = elements[action.element]["bounds"]
            return (x1 + x2) // 2, (y1 + y2) // 2
        if action.point is None:
            return "no target point"
        return self._pixels(action.point)

    def _run(self, command: str) -> EnvStep:
        result = self._shell(command)
        if result.code != 0:
            return EnvStep(False, f"`{command.split(' ', 1)[0]}` exited {result.code}: {result.text.strip()[:200]}")
        return EnvStep(True)

    def _act(self, action: Action) -> EnvStep:
        t = action.type
        if t in (ActionType.CLICK, ActionType.LONG_PRESS, ActionType.DOUBLE_TAP):
            target = self._target(action)
            if isinstance(target, str):
                return EnvStep(False, target)
            x, y = target
            if t == ActionType.LONG_PRESS:
                return self._run(f"input swipe {x} {y} {x} {y} {self.config.long_press_ms}")
            return self._run(f"input tap {x} {y}" + (f"; input tap {x} {y}" if t == ActionType.DOUBLE_TAP else ""))
        if t == ActionType.TYPE:
            return self._type(action)
        if t in (ActionType.SWIPE, ActionType.DRAG):
            return self._swipe(action)
        if t == ActionType.SYSTEM_BUTTON:
            return self._run(f"input keyevent {BUTTON_KEYCODES[action.button]}")
        if t == ActionType.KEY:
            key = action.key.strip()
            if key.lower() in KEY_KEYCODES:
                return self._run(f"input keyevent {KEY_KEYCODES[key.lower()]}")
            if len(key) == 1 and key.isascii():
                return self._run(f"input text {shlex.quote(key)}")
            return EnvStep(False, f"unknown key {action.key!r}")
        if t == ActionType.OPEN_APP:
            package = self._package(action.app)
            if package is None:
                return EnvStep(False, f"unknown app {action.app!r}")
            return self._run(self._launch_command(package))
        if t in (ActionType.ANSWER, ActionType.TERMINATE):
            if self.config.simulator:  # the judge reads them from the phone's state
                self._control("record", action.to_dict())
            return EnvStep(True)
        if t == ActionType.WAIT:
            time.sleep(min(action.duration if action.duration is not None else self.config.wait_s,
                           self.config.max_wait_s))
            return EnvStep(True)
        return EnvStep(False, f"unsupported action type {t.value}")

    def _type(self, action: Action) -> EnvStep:
        if action.point is not None or action.element is not None:
            focus = self._act(Action(type=ActionType.CLICK, point=action.point, element=action.element))
            if not focus.ok:
                return EnvStep(False, f"could not focus target: {focus.reason}")
        text = action.text
        if not text:
            return EnvStep(True)
        if text.isascii() and "%s" not in text:
            return self._run(f"input text {shlex.quote(text.replace(' ', '%s'))}")
        if not self._has_unicode_ime():
            return EnvStep(False, f"text {text!r} needs the ADBKeyboard IME ({ADB_KEYBOARD}) installed and enabled; "
                                  "`input text` types ASCII only")
        encoded = base64.b64encode(text.encode("utf-8")).decode("ascii")
        return self._run(f"am broadcast -a ADB_INPUT_B64 --es msg {encoded}")

    def _has_unicode_ime(self) -> bool:
        if self._unicode_ime is None:
            listed = self._shell(f"pm list packages {ADB_KEYBOARD}").text
            self._unicode_ime = f"package:{ADB_KEYBOARD}" in listed.split()
        return self._unicode_ime

    def _swipe(self, action: Action) -> EnvStep:
        duration = self.config.swipe_ms
        if action.direction is None:
            (x1, y1), (x2, y2) = self._pixels(action.point), self._pixels(action.end_point)
        else:
            start = self._target(action) if (action.point is not None or action.element is not None) else None
            if isinstance(start, str):
                return EnvStep(False, start)
            box = self._scroll_box()
            if start is None:
                start = ((box[0] + box[2]) // 2, (box[1] + box[3]) // 2)
            # 0.6 of the scrolling area per swipe, the simulator's page step
            dx, dy = {"up": (0, -1), "down": (0, 1), "left": (-1, 0), "right": (1, 0)}[action.direction]
            span = int(0.6 * ((box[2] - box[0]) if dx else (box[3] - box[1])) / 2)
            (x1, y1), (x2, y2) = ((start[0] - dx * span, start[1] - dy * span),
                                  (start[0] + dx * span, start[1] + dy * span))
        verb = "draganddrop" if action.type == ActionType.DRAG else "swipe"
        return self._run(f"input {verb} {x1} {y1} {x2} {y2} {duration}")

    def _scroll_box(self) -> tuple[int, int, int, int]:
        """Bounds of the largest scrollable element, else the whole screen."""
        elements = self._observation.elements if self._observation else []
        scrollable = [e["bounds"] for e in elements if e.get("scrollable")]
        if scrollable:
            return tuple(max(scrollable, key=lambda b: (b[2] - b[0]) * (b[3] - b[1])))  # type: ignore[return-value]
        width, height = self.size
        return (0, 0, width, height)
