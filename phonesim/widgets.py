"""Widget vocabulary apps build screens from: a `Page` of rows, each row a small `Node` tree.

Coordinates are logical (dp) on a 360×800 canvas; `layout` places rows and the renderer
scales to the configured pixel size. A tap target is `[trigger_id, params]` (JSON), where
`trigger_id` names a transition in the app's navigation graph or an `os.*` system trigger.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

CANVAS_W, CANVAS_H = 360, 800
STATUS_H, NAVBAR_H, APPBAR_H, KEYBOARD_H = 24, 48, 56, 240
PAD = 16

Tap = list  # [trigger_id: str, params: dict]


def tap(trigger: str, **params: Any) -> Tap:
    return [trigger, params]


@dataclass(slots=True)
class Node:
    kind: str  # renderer style
    cls: str  # Android widget class shown in the accessibility tree
    x: int = 0
    y: int = 0
    w: int = CANVAS_W
    h: int = 0
    text: str = ""
    desc: str = ""
    rid: str = ""
    sub: str = ""  # secondary line (rendered, part of the node's a11y text)
    tap: Tap | None = None
    long_tap: Tap | None = None
    checked: bool | None = None
    focused: bool = False
    enabled: bool = True
    scrollable: bool = False
    value: Any = None  # style data: slider value, avatar colour, glyph name...
    children: list[Node] = field(default_factory=list)

    @property
    def clickable(self) -> bool:
        return self.tap is not None and self.enabled

    def shift(self, dy: int) -> None:
        self.y += dy
        for c in self.children:
            c.shift(dy)

    def walk(self):
        yield self
        for c in self.children:
            yield from c.walk()


@dataclass(slots=True)
class Page:
    """What an app screen shows: app bar, scrollable rows, optional floating button."""

    title: str
    rows: list[Node]
    up: bool = True  # show the navigate-up arrow
    actions: list[Node] = field(default_factory=list)  # app bar icon buttons
    fab: Node | None = None


# --- row builders -------------------------------------------------------------------------

AVATAR_COLORS = ("#1e88e5", "#43a047", "#e53935", "#8e24aa", "#fb8c00", "#00897b", "#6d4c41", "#3949ab")


def item(title: str, sub: str = "", *, on_tap: Tap | None = None, long_tap: Tap | None = None,
         avatar: str | None = None, trailing: str = "", chevron: bool = False, rid: str = "",
         glyph: str | None = None) -> Node:
    """A list row: optional avatar letter / glyph, title, subtitle, trailing text or chevron."""
    h = 72 if sub else 56
    row = Node("item", "android.widget.LinearLayout", h=h, text=title, sub=sub, tap=on_tap,
               long_tap=long_tap, rid=rid)
    if avatar is not None:
        color = AVATAR_COLORS[sum(map(ord, avatar)) % len(AVATAR_COLORS)]
        row.children.append(Node("avatar", "android.widget.ImageView", x=PAD, y=(h - 40) // 2, w=40, h=40,
                                 text=avatar[:1].upper(), value=color))
    elif glyph is not None:
        row.children.append(Node("glyph", "android.widget.ImageView", x=PAD, y=(h - 24) // 2, w=24, h=24,
                                 value=glyph))
    if trailing:
        row.children.append(Node("trailing", "android.widget.TextView", x=CANVAS_W - 136, y=0, w=120, h=h,
                                 text=trailing))
    if chevron:
        row.children.append(Node("glyph", "android.widget.ImageView", x=CANVAS_W - 36, y=(h - 20) // 2,
                                 w=20, h=20, value="chevron"))
    return row


def switch(title: str, on: bool, on_tap: Tap, sub: str = "", rid: str = "", enabled: bool = True) -> Node:
    h = 72 if sub else 56
    row = Node("item", "android.widget.LinearLayout", h=h, text=title, sub=sub, tap=on_tap, rid=rid,
               enabled=enabled)
    row.children.append(Node("switch", "android.widget.Switch", x=CANVAS_W - 68, y=(h - 28) // 2, w=52, h=28,
                             checked=on, tap=on_tap, enabled=enabled, text="ON" if on else "OFF",
                             rid=f"{rid}_switch" if rid else ""))
    return row


def checkbox(title: str, on: bool, on_tap: Tap, rid: str = "") -> Node:
    row = Node("item", "android.widget.LinearLayout", h=56, text=title, tap=on_tap, rid=rid)
    row.children.append(Node("checkbox", "android.widget.CheckBox", x=CANVAS_W - 56, y=16, w=24, h=24,
                             checked=on, tap=on_tap))
    return row


def slider(title: str, value: int, trigger: str, rid: str = "", lo: int = 0, hi: int = 100) -> Node:
    """A seek bar; a tap at horizontal fraction f sets lo + f·(hi − lo) (the `pos` param)."""
    row = Node("item", "android.widget.LinearLayout", h=88, text=title, sub=f"{value}%", rid=rid)
    row.children.append(Node("slider", "android.widget.SeekBar", x=PAD, y=48, w=CANVAS_W - 2 * PAD, h=32,
                             tap=tap(trigger, pos=None), value=(value - lo) / (hi - lo), text=str(value),
                             rid=f"{rid}_bar" if rid else ""))
    return row


def field_row(fid: str, label: str, value: str, focused: bool, hint: str = "", rid: str = "") -> Node:
    """A labelled text field; tapping focuses it (soft keyboard opens), ✕ clears it."""
    row = Node("fieldrow", "android.widget.LinearLayout", h=76, text=label)
    edit = Node("field", "android.widget.EditText", x=PAD, y=22, w=CANVAS_W - 2 * PAD, h=48, text=value,
                desc=hint if not value else "", focused=focused, tap=tap("os.focus", field=fid),
                rid=rid or f"field_{fid}", value=hint)
    row.children.append(edit)
    if value:
        edit.children.append(Node("glyph", "android.widget.ImageButton", x=CANVAS_W - PAD - 40, y=26, w=40, h=40,
                                  desc=f"Clear {label}", tap=tap("os.clear", field=fid), value="close"))
    return row


def search_bar(fid: str, hint: str, value: str, focused: bool) -> Node:
    row = Node("searchrow", "android.widget.FrameLayout", h=64)
    edit = Node("search", "android.widget.EditText", x=PAD, y=8, w=CANVAS_W - 2 * PAD, h=48, text=value,
                desc=hint if not value else "", focused=focused, tap=tap("os.focus", field=fid),
                rid=f"search_{fid}", value=hint)
    row.children.append(edit)
    if value:
        edit.children.append(Node("glyph", "android.widget.ImageButton", x=CANVAS_W - PAD - 44, y=12, w=40, h=40,
                                  desc="Clear search", tap=tap("os.clear", field=fid), value="close"))
    return row


def button(label: str, on_tap: Tap, *, primary: bool = True, enabled: bool = True, rid: str = "") -> Node:
    row = Node("buttonrow", "android.widget.FrameLayout", h=64)
    row.children.append(Node("button" if primary else "textbutton", "android.widget.Button", x=PAD, y=8,
                             w=CANVAS_W - 2 * PAD, h=48, text=label, tap=on_tap, enabled=enabled,
                             rid=rid or f"btn_{label.lower().replace(' ', '_')}"))
    return row


def header(text: str) -> Node:
    return Node("header", "android.widget.TextView", h=40, text=text)


def info(label: str, value: str, *, on_tap: Tap | None = None, glyph: str | None = None, rid: str = "") -> Node:
    """A read-only labelled value (detail screens): small label above a larger value."""
    row = Node("info", "android.widget.LinearLayout", h=64, text=value, sub=label, tap=on_tap, rid=rid)
    if glyph:
        row.children.append(Node("glyph", "android.widget.ImageView", x=PAD, y=20, w=24, h=24, value=glyph))
    return row


def paragraph(text: str) -> Node:
    lines = max(1, (len(text) + 39) // 40)
    return Node("paragraph", "android.widget.TextView", h=16 + 22 * lines, text=text)


def hero(title: str, sub: str = "", letter: str = "") -> Node:
    """Large centred avatar + name (contact detail header)."""
    row = Node("hero", "android.widget.LinearLayout", h=176, text=title, sub=sub)
    color = AVATAR_COLORS[sum(map(ord, letter or title or "?")) % len(AVATAR_COLORS)]
    row.children.append(Node("avatar", "android.widget.ImageView", x=CANVAS_W // 2 - 40, y=16, w=80, h=80,
                             text=(letter or title[:1]).upper(), value=color))
    return row


def action_bar(buttons: list[tuple[str, str, Tap]]) -> Node:
    """A row of round icon buttons with captions, e.g. Call / Message / Edit."""
    row = Node("actionrow", "android.widget.LinearLayout", h=80)
    n = max(1, len(buttons))
    cell = CANVAS_W // n
    for i, (caption, glyph, t) in enumerate(buttons):
        row.children.append(Node("roundbutton", "android.widget.Button", x=i * cell + (cell - 64) // 2, y=4,
                                 w=64, h=72, text=caption, tap=t, value=glyph,
                                 rid=f"action_{caption.lower().replace(' ', '_')}"))
    return row


def tabs(entries: list[tuple[str, Tap, bool]]) -> Node:
    row = Node("tabrow", "android.widget.HorizontalScrollView", h=48)
    cell = CANVAS_W // max(1, len(entries))
    for i, (label, t, selected) in enumerate(entries):
        row.children.append(Node("tab", "android.widget.TextView", x=i * cell, y=0, w=cell, h=48, text=label,
                                 tap=t, checked=selected, rid=f"tab_{label.lower().replace(' ', '_')}"))
    return row


def icon_button(glyph: str, desc: str, on_tap: Tap, rid: str = "") -> Node:
    return Node("iconbutton", "android.widget.ImageButton", w=48, h=48, desc=desc, tap=on_tap, value=glyph,
                rid=rid or f"action_{desc.lower().replace(' ', '_')}")


def fab(glyph: str, desc: str, on_tap: Tap) -> Node:
    return Node("fab", "android.widget.ImageButton", x=CANVAS_W - 72, w=56, h=56, desc=desc, tap=on_tap,
                value=glyph, rid="fab")
