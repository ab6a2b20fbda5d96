"""A composed screen (`Frame`) becomes its draw ops: one small function per widget kind."""

from __future__ import annotations

from typing import Callable

from phonesim.layout import Frame
from phonesim.render.icons import draw_icon
from phonesim.render.ops import DrawOp, Ellipse, Line, Rect, Scrim, Text, recoloured
from phonesim.render.text import fit, text_width, wrap
from phonesim.render.theme import ColourScheme, under_scrim
from phonesim.widgets import CANVAS_H, CANVAS_W, PAD, Node

WHITE = "#ffffff"

WidgetDrawer = Callable[[Node, list[DrawOp], ColourScheme], None]
_WIDGETS: dict[str, WidgetDrawer] = {}  # node kind → its drawer; kinds without one (containers) draw nothing


def frame_ops(frame: Frame, colours: ColourScheme) -> list[DrawOp]:
    """The screen's draw ops in logical coordinates, in paint order; the first is the background
    (a `Rect` over the whole canvas). Status and navigation bars are drawn last, over the rest."""
    background = colours["launcher" if frame.screen in ("launcher", "recents") else "bg"]
    out: list[DrawOp] = [Rect(0, 0, CANVAS_W, CANVAS_H, background, 0, None)]
    bars = [root for root in frame.nodes if root.kind in ("statusbar", "navbar")]
    for root in frame.nodes:
        if root.kind not in ("statusbar", "navbar"):
            _node_ops(root, out, colours)
    for root in bars:
        _node_ops(root, out, colours)
    scrim = next((i for i, op in enumerate(out) if isinstance(op, Scrim)), None)
    if scrim is not None:  # what lies under a dialog's scrim is drawn in dimmed colours instead
        out[:scrim + 1] = [recoloured(op, under_scrim) for op in out[:scrim]]  # of blending 10 MB after (16 ms)
    return out


def _node_ops(node: Node, out: list[DrawOp], colours: ColourScheme) -> None:
    drawer = _WIDGETS.get(node.kind)
    if drawer is not None:
        drawer(node, out, colours)
    for child in node.children:
        _node_ops(child, out, colours)


def _widget(*kinds: str) -> Callable[[WidgetDrawer], WidgetDrawer]:
    """Register the decorated function as the drawer of node `kinds`."""
    def register(drawer: WidgetDrawer) -> WidgetDrawer:
        for kind in kinds:
            _WIDGETS[kind] = drawer
        return drawer
    return register


def _label(out: list[DrawOp], x: float, y: float, s: str, size: int, colour: str, bold: bool = False,
           anchor: str = "la", max_w: float | None = None) -> None:
    """A text op, cut to `max_w` with an ellipsis; nothing for an empty label."""
    if max_w is not None:
        s = fit(s, size, bold, max_w)
    if s:
        out.append(Text(x, y, s, size, bold, colour, anchor))


def _bar(n: Node, colour: str) -> Rect:
    """The node's whole box, filled."""
    return Rect(n.x, n.y, n.x + n.w, n.y + n.h, colour, 0, None)


# --- system bars -------------------------------------------------------------------------------

@_widget("statusbar")
def _statusbar(n: Node, out: list[DrawOp], c: ColourScheme) -> None:
    out.append(_bar(n, c["status"]))
    _label(out, PAD, n.y + n.h / 2, n.text, 13, c["text"], True, "lm")
    _label(out, n.w - PAD, n.y + n.h / 2, _status_short(n.desc), 12, c["text"], False, "rm")


def _status_short(desc: str) -> str:
    parts = []
    if "Airplane" in desc:
        parts.append("✈")
    if "Wi-Fi on" in desc:
        parts.append("WiFi")
    if "Bluetooth on" in desc:
        parts.append("BT")
    parts.append(desc.rsplit(" ", 1)[-1])
    return "  ".join(parts)


@_widget("navbar")
def _navbar(n: Node, out: list[DrawOp], c: ColourScheme) -> None:
    out.append(_bar(n, c["nav"]))


@_widget("navbutton")
def _navbutton(n: Node, out: list[DrawOp], c: ColourScheme) -> None:
    draw_icon(out, n.value, n.x + n.w / 2 - 10, n.y + n.h / 2 - 10, 20, 20, c["muted"])


@_widget("keyboard")
def _keyboard(n: Node, out: list[DrawOp], c: ColourScheme) -> None:
    out.append(_bar(n, c["keyboard"]))


@_widget("key")
def _key(n: Node, out: list[DrawOp], c: ColourScheme) -> None:
    out.append(Rect(n.x, n.y, n.x + n.w, n.y + n.h, c["key"], 6, None))
    _label(out, n.x + n.w / 2, n.y + n.h / 2, n.text, 18, c["text"], False, "mm", n.w)


@_widget("toast")
def _toast(n: Node, out: list[DrawOp], c: ColourScheme) -> None:
    out.append(Rect(n.x, n.y, n.x + n.w, n.y + n.h, c["toast"], n.h / 2, None))
    _label(out, n.x + n.w / 2, n.y + n.h / 2, n.text, 14, c["ontoast"], False, "mm", n.w - 16)


# --- app bar and page content ---------------------------------------------------------------------

@_widget("appbar")
def _appbar(n: Node, out: list[DrawOp], c: ColourScheme) -> None:
    out.append(_bar(n, c["surface"]))


@_widget("title", "dlgtitle")
def _title(n: Node, out: list[DrawOp], c: ColourScheme) -> None:
    _label(out, n.x, n.y + n.h / 2, n.text, 20, c["text"], True, "lm", n.w)


@_widget("iconbutton", "glyph")
def _icon(n: Node, out: list[DrawOp], c: ColourScheme) -> None:
    colour = c["muted"] if n.kind == "glyph" else c["text"]
    draw_icon(out, n.value, n.x + n.w / 2 - 12, n.y + n.h / 2 - 12, 24, 24, colour)


@_widget("item")
def _item(n: Node, out: list[DrawOp], c: ColourScheme) -> None:
    left = PAD + (56 if any(ch.kind in ("avatar", "glyph") and ch.x < 60 for ch in n.children) else 0)
    right = n.w - PAD - (80 if n.children and n.children[-1].x > n.w - 150 else 0)
    colour = c["text"] if n.enabled else c["muted"]
    if n.sub:
        _label(out, left, n.y + 16, n.text, 16, colour, False, "la", right - left)
        _label(out, left, n.y + 40, n.sub, 14, c["muted"], False, "la", right - left)
    else:
        _label(out, left, n.y + n.h / 2, n.text, 16, colour, False, "lm", right - left)
    out.append(Line(left, n.y + n.h - 1, n.w, n.y + n.h - 1, c["divider"], 1))


@_widget("avatar")
def _avatar(n: Node, out: list[DrawOp], c: ColourScheme) -> None:
    out.append(Ellipse(n.x, n.y, n.x + n.w, n.y + n.h, n.value, None, 0))
    _label(out, n.x + n.w / 2, n.y + n.h / 2, n.text, int(n.h * 0.45), WHITE, True, "mm")


@_widget("trailing")
def _trailing(n: Node, out: list[DrawOp], c: ColourScheme) -> None:
    _label(out, n.x + n.w, n.y + n.h / 2, n.text, 14, c["muted"], False, "rm", n.w)


@_widget("header")
def _header(n: Node, out: list[DrawOp], c: ColourScheme) -> None:
    _label(out, PAD, n.y + n.h / 2 + 4, n.text, 14, c["accent"], True, "lm", n.w)


@_widget("info")
def _info(n: Node, out: list[DrawOp], c: ColourScheme) -> None:
    left = PAD + (40 if n.children else 0)
    _label(out, left, n.y + 10, n.sub, 13, c["muted"], False, "la", n.w - left - PAD)
    _label(out, left, n.y + 30, n.text, 17, c["text"], False, "la", n.w - left - PAD)


@_widget("paragraph", "dlgtext")
def _paragraph(n: Node, out: list[DrawOp], c: ColourScheme) -> None:
    inset = PAD if n.kind == "paragraph" else 8
    for i, line in enumerate(wrap(n.text, 15, n.w - 2 * PAD if n.kind == "paragraph" else n.w)):
        _label(out, n.x + inset, n.y + 8 + 22 * i, line, 15, c["text"])


@_widget("hero")
def _hero(n: Node, out: list[DrawOp], c: ColourScheme) -> None:
    _label(out, n.w / 2, n.y + 116, n.text, 24, c["text"], True, "mt", n.w - 32)
    if n.sub:
        _label(out, n.w / 2, n.y + 150, n.sub, 14, c["muted"], False, "mt", n.w - 32)


@_widget("clock")
def _clock(n: Node, out: list[DrawOp], c: ColourScheme) -> None:
    _label(out, n.w / 2, n.y + 10, n.text, 56, c["text"], False, "mt")
    _label(out, n.w / 2, n.y + 84, n.sub, 16, c["text"], False, "mt")


@_widget("card")
def _card(n: Node, out: list[DrawOp], c: ColourScheme) -> None:
    x, y, w, h = n.x, n.y, n.w, n.h
    out.append(Rect(x, y, x + w, y + h, c["card"], 16, c["divider"]))
    out.append(Rect(x + 16, y + 18, x + 40, y + 42, n.value, 6, None))
    _label(out, x + 52, y + 30, n.text, 16, c["text"], True, "lm", w - 64)
    _label(out, x + 16, y + 70, n.sub, 14, c["muted"], False, "lm", w - 32)


# --- controls ----------------------------------------------------------------------------------------

@_widget("switch")
def _switch(n: Node, out: list[DrawOp], c: ColourScheme) -> None:
    x, y, w, h = n.x, n.y, n.w, n.h
    on = bool(n.checked)
    out.append(Rect(x, y + 4, x + w, y + h - 4, c["accent"] if on else c["track"], (h - 8) / 2, None))
    knob = x + w - h / 2 if on else x + h / 2
    out.append(Ellipse(knob - h / 2 + 5, y + 5, knob + h / 2 - 5, y + h - 5, WHITE, None, 0))


@_widget("checkbox")
def _checkbox(n: Node, out: list[DrawOp], c: ColourScheme) -> None:
    out.append(Rect(n.x, n.y, n.x + n.w, n.y + n.h, c["accent"] if n.checked else None, 3, c["muted"]))
    if n.checked:
        _label(out, n.x + n.w / 2, n.y + n.h / 2, "✓", 18, WHITE, True, "mm")


@_widget("radio")
def _radio(n: Node, out: list[DrawOp], c: ColourScheme) -> None:
    x, cy = n.x, n.y + n.h / 2
    out.append(Ellipse(x + 4, cy - 10, x + 24, cy + 10, None, c["accent"] if n.checked else c["muted"], 2))
    if n.checked:
        out.append(Ellipse(x + 9, cy - 5, x + 19, cy + 5, c["accent"], None, 0))
    _label(out, x + 40, cy, n.text, 16, c["text"], False, "lm", n.w - 48)


@_widget("slider")
def _slider(n: Node, out: list[DrawOp], c: ColourScheme) -> None:
    x, w = n.x, n.w
    cy, knob = n.y + n.h / 2, x + w * float(n.value)
    out.append(Line(x, cy, x + w, cy, c["track"], 4))
    out.append(Line(x, cy, knob, cy, c["accent"], 4))
    out.append(Ellipse(knob - 10, cy - 10, knob + 10, cy + 10, c["accent"], None, 0))


@_widget("fieldrow")
def _fieldrow(n: Node, out: list[DrawOp], c: ColourScheme) -> None:
    _label(out, PAD, n.y + 4, n.text, 13, c["muted"], False, "la", n.w)


@_widget("field", "search")
def _field(n: Node, out: list[DrawOp], c: ColourScheme) -> None:
    x, y, w, h = n.x, n.y, n.w, n.h
    search = n.kind == "search"
    out.append(Rect(x, y, x + w, y + h, c["surface"] if search else c["field"], h / 2 if search else 6,
                    c["accent"] if n.focused else c["divider"], 2 if n.focused else 1))
    text_x = x + (40 if search else 12)
    if search:
        draw_icon(out, "search", x + 8, y + 12, 24, 24, c["muted"])
    shown = n.text or str(n.value or "")  # the value is the placeholder
    _label(out, text_x, y + h / 2, shown, 16, c["text"] if n.text else c["muted"], False, "lm", w - 64)
    if n.focused:
        caret = text_x + (text_width(fit(n.text, 16, False, w - 64), 16) if n.text else 0) + 1
        out.append(Line(caret, y + 12, caret, y + h - 12, c["accent"], 2))


@_widget("button")
def _button(n: Node, out: list[DrawOp], c: ColourScheme) -> None:
    out.append(Rect(n.x, n.y, n.x + n.w, n.y + n.h, c["accent"] if n.enabled else c["track"], n.h / 2, None))
    _label(out, n.x + n.w / 2, n.y + n.h / 2, n.text, 16, WHITE if n.enabled else c["muted"], True, "mm", n.w)


@_widget("textbutton", "dlgbutton")
def _textbutton(n: Node, out: list[DrawOp], c: ColourScheme) -> None:
    _label(out, n.x + n.w / 2, n.y + n.h / 2, n.text, 15, c["accent"] if n.enabled else c["muted"], True, "mm", n.w)


@_widget("roundbutton")
def _roundbutton(n: Node, out: list[DrawOp], c: ColourScheme) -> None:
    x, y, w, h = n.x, n.y, n.w, n.h
    out.append(Ellipse(x + 8, y, x + w - 8, y + w - 16, c["surface"], None, 0))
    draw_icon(out, n.value, x + w / 2 - 12, y + (w - 16) / 2 - 12, 24, 24, c["accent"])
    _label(out, x + w / 2, y + h - 4, n.text, 13, c["text"], False, "mb", w + 16)


@_widget("tab")
def _tab(n: Node, out: list[DrawOp], c: ColourScheme) -> None:
    x, y, w, h = n.x, n.y, n.w, n.h
    _label(out, x + w / 2, y + h / 2, n.text, 15, c["accent"] if n.checked else c["muted"], True, "mm", w)
    if n.checked:
        out.append(Rect(x + 16, y + h - 3, x + w - 16, y + h, c["accent"], 0, None))


@_widget("fab")
def _fab(n: Node, out: list[DrawOp], c: ColourScheme) -> None:
    out.append(Rect(n.x, n.y, n.x + n.w, n.y + n.h, c["accent"], 16, None))
    draw_icon(out, n.value, n.x + 14, n.y + 14, 28, 28, WHITE)


# --- overlays ----------------------------------------------------------------------------------------

@_widget("scrim")
def _scrim(n: Node, out: list[DrawOp], c: ColourScheme) -> None:
    out.append(Scrim(n.x, n.y, n.x + n.w, n.y + n.h))


@_widget("dialog", "menu")
def _dialog(n: Node, out: list[DrawOp], c: ColourScheme) -> None:
    out.append(Rect(n.x, n.y, n.x + n.w, n.y + n.h, c["dialog"], 24 if n.kind == "dialog" else 6, c["divider"]))


@_widget("menuitem")
def _menuitem(n: Node, out: list[DrawOp], c: ColourScheme) -> None:
    _label(out, n.x + 16, n.y + n.h / 2, n.text, 16, c["text"], False, "lm", n.w - 24)


# --- launcher ----------------------------------------------------------------------------------------

@_widget("appicon")
def _appicon(n: Node, out: list[DrawOp], c: ColourScheme) -> None:
    x, y, w = n.x, n.y, n.w
    colour, glyph = n.value
    out.append(Rect(x + 14, y + 4, x + w - 14, y + 60, colour, 16, None))
    draw_icon(out, glyph, x + 24, y + 12, w - 48, 40, WHITE)
    _label(out, x + w / 2, y + 70, n.text, 13, c["text"], False, "mt", w)


@_widget("pagedots")
def _pagedots(n: Node, out: list[DrawOp], c: ColourScheme) -> None:
    page, pages = n.value
    x0 = n.x + n.w / 2 - (pages - 1) * 8
    for i in range(pages):
        r = 4 if i == page else 3
        out.append(Ellipse(x0 + 16 * i - r, n.y + n.h / 2 - r, x0 + 16 * i + r, n.y + n.h / 2 + r,
                           c["text"] if i == page else c["track"], None, 0))
