"""A safety guard for real devices: actions that must not reach a phone are stopped before they
are executed.

A deny list in four parts: element labels (text or content-desc, as whole words: "pay",
"buy now", "factory reset"), resource-id words ("btn_purchase"), action types, and "send"/"call"
buttons inside messaging, mail and phone apps (the recipient may be a real person). Leaving the
target apps is denied too: `open_app` of an app outside them, and any pointed or typed action
while a foreign app is in the foreground (back and home stay allowed, they are the way out).
A blocked action is recorded as `blocked_by_guard: <rule>`; the episode goes on or ends, as
configured. The adb environment has it on by default; the simulator, where nothing is real,
runs without it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Iterable

from ops.actions import Action, ActionType

DENY_LABELS = ("pay", "pay now", "buy", "buy now", "purchase", "checkout", "check out", "place order",
               "subscribe", "confirm payment", "add payment method", "send money", "transfer money",
               "delete account", "close account", "remove account", "factory reset", "erase all data",
               "reset phone", "uninstall")
DENY_ID_WORDS = ("buy", "purchase", "checkout", "pay", "payment", "subscribe", "uninstall", "delete_account",
                 "factory_reset", "master_clear")
SEND_LABELS = ("send", "send sms", "send message", "call", "dial")
MESSAGING_PACKAGES = ("com.google.android.apps.messaging", "com.android.mms", "com.samsung.android.messaging",
                      "com.google.android.gm", "com.android.email", "com.whatsapp", "org.telegram.messenger",
                      "com.google.android.dialer", "com.android.dialer", "com.samsung.android.dialer")
# the foreground may be these while an agent works in a target app (home screen, shade, dialogs)
SYSTEM_PACKAGES = ("android", "com.android.systemui", "com.android.launcher", "com.android.launcher3",
                   "com.google.android.apps.nexuslauncher", "com.google.android.inputmethod.latin")
POINTED = frozenset({ActionType.CLICK, ActionType.LONG_PRESS, ActionType.DOUBLE_TAP, ActionType.TYPE,
                     ActionType.SWIPE, ActionType.DRAG})


@dataclass(frozen=True)
class GuardConfig:
    """What the guard denies. `target_packages` empty: no app rule (every app is a target)."""

    deny_labels: tuple[str, ...] = DENY_LABELS
    deny_id_words: tuple[str, ...] = DENY_ID_WORDS
    deny_action_types: tuple[str, ...] = ()  # canonical action type names, e.g. ("long_press",)
    send_labels: tuple[str, ...] = SEND_LABELS
    messaging_packages: tuple[str, ...] = MESSAGING_PACKAGES
    target_packages: tuple[str, ...] = ()
    system_packages: tuple[str, ...] = SYSTEM_PACKAGES
    end_episode: bool = False  # a blocked action ends the episode (else it is a recorded no-op)

    def __post_init__(self) -> None:
        known = {t.value for t in ActionType}
        unknown = sorted(set(self.deny_action_types) - known)
        if unknown:
            raise ValueError(f"GuardConfig.deny_action_types: unknown action types {unknown}; known: {sorted(known)}")


@dataclass(frozen=True)
class GuardBlock:
    """Why an action was not executed: the rule and what matched it."""

    rule: str
    detail: str

    @property
    def reason(self) -> str:
        """The step's recorded reason."""
        return f"blocked_by_guard: {self.rule} ({self.detail})"


def _phrase_pattern(phrases: Iterable[str]) -> re.Pattern[str] | None:
    alternatives = sorted({re.escape(p.strip().lower()) for p in phrases if p.strip()}, key=len, reverse=True)
    if not alternatives:
        return None
    return re.compile(r"(?<![a-z0-9])(" + "|".join(alternatives).replace(r"\ ", r"\s+") + r")(?![a-z0-9])")


def _label(element: dict[str, Any]) -> str:
    parts = (str(element.get(k) or "").strip() for k in ("text", "desc"))
    return " ".join(dict.fromkeys(p for p in parts if p))  # a desc repeating the text once


class SafetyGuard:
    """Checks an action against the deny list before the environment executes it."""

    def __init__(self, config: GuardConfig = GuardConfig()) -> None:
        self.config = config
        self._labels = _phrase_pattern(config.deny_labels)
        self._ids = _phrase_pattern(w.replace("_", " ") for w in config.deny_id_words)
        self._send = _phrase_pattern(config.send_labels)

    def check(self, action: Action, targets: list[dict[str, Any]], package: str,
              app_package: str | None = None) -> GuardBlock | None:
        """The rule `action` breaks, or None. `targets` are the elements it points at (the indexed
        element, or every element under its point), `package` the foreground app's package,
        `app_package` the package an `open_app` resolves to (None: not a known app)."""
        config = self.config
        if action.type.value in config.deny_action_types:
            return GuardBlock("action_type", action.type.value)
        if action.type == ActionType.OPEN_APP and config.target_packages and (
                app_package not in config.target_packages):
            return GuardBlock("leave_target_apps", f"open_app {action.app!r} is not a target app")
        if action.type not in POINTED:
            return None
        allowed = (*config.target_packages, *config.system_packages)
        if config.target_packages and package and package not in allowed:
            return GuardBlock("leave_target_apps", f"{action.type.value} inside foreign app {package}")
        for element in targets:
            label = _label(element).lower()
            if self._labels and (match := self._labels.search(label)):
                return GuardBlock("deny_label", f"{match.group(1)!r} in {_label(element)!r}")
            words = re.sub(r"[^a-z0-9]+", " ", str(element.get("resource_id") or "").lower())
            if self._ids and (match := self._ids.search(words)):
                return GuardBlock("deny_id", f"{match.group(1)!r} in {element.get('resource_id')!r}")
            if package in config.messaging_packages and self._send and (match := self._send.search(label)):
                return GuardBlock("send_to_contact", f"{_label(element)!r} in {package}")
        return None


def elements_at(elements: list[dict[str, Any]], x: int, y: int) -> list[dict[str, Any]]:
    """The elements whose pixel bounds hold (x, y), smallest first."""
    under = [e for e in elements if e["bounds"][0] <= x < e["bounds"][2] and e["bounds"][1] <= y < e["bounds"][3]]
    return sorted(under, key=lambda e: (e["bounds"][2] - e["bounds"][0]) * (e["bounds"][3] - e["bounds"][1]))
