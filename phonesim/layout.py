"""Compose a full screen (status bar, content, overlays, keyboard, nav bar) into a `Frame`
of positioned nodes, and derive from it the element list, the accessibility tree and hit tests."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from phonesim.actions import GRID
from phonesim.widgets import (
    APPBAR_H, CANVAS_H, CANVAS_W, KEYBOARD_H, NAVBAR_H, PAD, STATUS_H, Node, Page, tap,
)

KEY_ROWS = ("qwertyuiop", "asdfghjkl", "zxcvbnm")
_MODAL_KINDS = frozenset({"scrim", "clearscrim", "dialog", "menu", "navbar", "statusbar", "toast"})
MIN_VISIBLE = 8  # dp of a clipped node that must stay on screen for it to be an element


@dataclass(slots=True)
class Frame:
    """One composed screen. `nodes` are roots in paint order (later = on top)."""

    package: str
    screen: str
    nodes: list[Node]
    body: Node | None = None  # the scrollable content container, if any
    scroll_max: int = 0
    modal: bool = False  # a dialog or menu captures input
    keyboard: bool = False
    clip: tuple[int, int] = (0, CANVAS_H)  # visible y-range of the body
    _elements: list[dict[str, Any]] | None = field(default=None, repr=False)
    _element_nodes: list[Node] | None = field(default=None, repr=False)
    _ops: tuple | None = field(default=None, repr=False)  # renderer's draw ops, (dark, ops) once computed


def status_bar(clock: str, icons: str) -> Node:
    return Node("statusbar", "android.widget.FrameLayout", 0, 0, CANVAS_W, STATUS_H, text=clock, desc=icons,
                rid="status_bar")


def nav_bar() -> Node:
    bar = Node("navbar", "android.widget.FrameLayout", 0, CANVAS_H - NAVBAR_H, CANVAS_W, NAVBAR_H, rid="navigation_bar")
    for i, (desc, glyph, trig) in enumerate((("Back", "nav_back", "os.back"), ("Home", "nav_home", "os.home"),
                                              ("Overview", "nav_recents", "os.recents"))):
        bar.children.append(Node("navbutton", "android.widget.ImageButton", 30 + i * 110, CANVAS_H - NAVBAR_H, 80,
                                 NAVBAR_H, desc=desc, tap=tap(trig), value=glyph, rid=desc.lower()))
    return bar


def keyboard() -> Node:
    """The soft keyboard (shared instance: frames never mutate nodes after composition)."""
    global _KEYBOARD
    if _KEYBOARD is None:
        _KEYBOARD = _make_keyboard()
    return _KEYBOARD


_KEYBOARD: Node | None = None


def _make_keyboard() -> Node:
    top = CANVAS_H - NAVBAR_H - KEYBOARD_H
    kb = Node("keyboard", "android.inputmethodservice.KeyboardView", 0, top, CANVAS_W, KEYBOARD_H)
    key_w, key_h = 34, 48
    for r, row in enumerate(KEY_ROWS):
        x0 = (CANVAS_W - len(row) * (key_w + 2)) // 2
        for i, ch in enumerate(row):
            kb.children.append(Node("key", "android.inputmethodservice.Key", x0 + i * (key_w + 2), top + 8 + r * 56,
                                    key_w, key_h, text=ch, tap=tap("os.key", k=ch)))
    y = top + 8 + 3 * 56
    for x, w, label, k in ((8, 60, "⌫", "backspace"), (72, 200, "space", "space"), (276, 76, "⏎", "enter")):
        kb.children.append(Node("key", "android.inputmethodservice.Key", x, y, w, key_h, text=label,
                                tap=tap("os.key", k=k)))
    return kb


def layout_page(page: Page, scroll: int, kb: bool) -> tuple[list[Node], Node, int, tuple[int, int]]:
    """Place an app page; returns (nodes, body, scroll_max, body clip range)."""
    top = STATUS_H + APPBAR_H
    bottom = CANVAS_H - NAVBAR_H - (KEYBOARD_H if kb else 0)
    total = sum(r.h for r in page.rows)
    scroll_max = max(0, total + 24 - (bottom - top))
    scroll = min(max(scroll, 0), scroll_max)
    body = Node("body", "androidx.recyclerview.widget.RecyclerView", 0, top, CANVAS_W, bottom - top,
                scrollable=scroll_max > 0, rid="content")
    y = top - scroll
    for row in page.rows:
        row.shift(y)
        y += row.h
        if row.y + row.h > top and row.y < bottom:
            body.children.append(row)
    bar = Node("appbar", "android.widget.FrameLayout", 0, STATUS_H, CANVAS_W, APPBAR_H, rid="toolbar")
    x_title = PAD
    if page.up:
        bar.children.append(Node("iconbutton", "android.widget.ImageButton", 4, STATUS_H + 4, 48, 48,
                                 desc="Navigate up", tap=tap("os.up"), value="back", rid="navigate_up"))
        x_title = 60
    bar.children.append(Node("title", "android.widget.TextView", x_title, STATUS_H, 220, APPBAR_H, text=page.title,
                             rid="title"))
    x = CANVAS_W - 4 - 48 * len(page.actions)
    for a in page.actions:
        a.x, a.y = x, STATUS_H + 4
        bar.children.append(a)
        x += 48
    nodes = [body, bar]
    if page.fab is not None:
        page.fab.y = bottom - 72
        nodes.append(page.fab)
    return nodes, body, scroll_max, (top, bottom)


def dialog_nodes(spec: dict[str, Any]) -> list[Node]:
    """A centred modal card from a JSON dialog spec: title, message, radio options, buttons."""
    rows: list[Node] = []
    if spec.get("message"):
        lines = max(1, (len(spec["message"]) + 33) // 34)
        rows.append(Node("dlgtext", "android.widget.TextView", h=12 + 22 * lines, text=spec["message"],
                         rid="message"))
    for opt in spec.get("options", []):
        rows.append(Node("radio", "android.widget.RadioButton", h=48, text=opt["text"], tap=opt["tap"],
                         checked=bool(opt.get("checked"))))
    height = 64 + sum(r.h for r in rows) + (56 if spec.get("buttons") else 8)
    x, w = 24, CANVAS_W - 48
    y = (CANVAS_H - height) // 2
    scrim = Node("scrim", "android.view.View", 0, 0, CANVAS_W, CANVAS_H - NAVBAR_H, tap=tap("os.dismiss"),
                 desc="Dismiss")
    card = Node("dialog", "android.widget.FrameLayout", x, y, w, height, rid="dialog")
    card.children.append(Node("dlgtitle", "android.widget.TextView", x + 24, y + 16, w - 48, 40,
                              text=spec.get("title", ""), rid="alertTitle"))
    cy = y + 60
    for r in rows:
        r.x, r.y, r.w = x + 16, cy, w - 32
        cy += r.h
        card.children.append(r)
    bx = x + w - 16
    for b in reversed(spec.get("buttons", [])):
        bw = 24 + 11 * len(b["text"])
        bx -= bw
        card.children.append(Node("dlgbutton", "android.widget.Button", bx, y + height - 52, bw, 44, text=b["text"],
                                  tap=b["tap"], rid=f"button_{b['text'].lower().replace(' ', '_')}"))
        bx -= 8
    return [scrim, card]


def menu_nodes(items: list[dict[str, Any]]) -> list[Node]:
    scrim = Node("clearscrim", "android.view.View", 0, 0, CANVAS_W, CANVAS_H - NAVBAR_H, tap=tap("os.dismiss"),
                 desc="Dismiss")
    x, y, w = CANVAS_W - 200, STATUS_H + 8, 192
    card = Node("menu", "android.widget.ListView", x, y, w, 16 + 48 * len(items), rid="menu")
    for i, it in enumerate(items):
        card.children.append(Node("menuitem", "android.widget.TextView", x, y + 8 + 48 * i, w, 48, text=it["text"],
                                  tap=it["tap"], rid=f"menu_{it['text'].lower().replace(' ', '_')}"))
    return [scrim, card]


def toast_node(text: str, kb: bool) -> Node:
    w = min(CANVAS_W - 48, 32 + 8 * len(text))
    y = CANVAS_H - NAVBAR_H - (KEYBOARD_H if kb else 0) - 88
    return Node("toast", "android.widget.Toast", (CANVAS_W - w) // 2, y, w, 40, text=text)


# --- derived observations -------------------------------------------------------------------

def _clipped(frame: Frame, node: Node, in_body: bool) -> tuple[int, int, int, int] | None:
    x1, y1, x2, y2 = node.x, node.y, node.x + node.w, node.y + node.h
    if in_body:
        y1, y2 = max(y1, frame.clip[0]), min(y2, frame.clip[1])
        if y2 - y1 < MIN_VISIBLE:
            return None
    return x1, y1, x2, y2


def _visit(frame: Frame, fn) -> None:
    """Call fn(node, clipped_box, in_body) in paint order for nodes that accept input."""
    def rec(n: Node, in_body: bool) -> None:
        box = _clipped(frame, n, in_body)
        if box is None:
            return
        fn(n, box)
        for c in n.children:
            rec(c, in_body or n is frame.body)
    for root in frame.nodes:
        if frame.modal and root.kind not in _MODAL_KINDS:
            continue
        rec(root, False)


def element_nodes(frame: Frame) -> tuple[list[dict[str, Any]], list[Node]]:
    """The flat element list (uiautomator-like, keyboard keys excluded) and the matching nodes."""
    if frame._elements is not None:
        return frame._elements, frame._element_nodes  # type: ignore[return-value]
    out: list[dict[str, Any]] = []
    nodes: list[Node] = []

    def add(n: Node, box) -> None:
        if n.kind in ("key", "keyboard", "scrim", "clearscrim", "avatar"):  # decorative or IME
            return
        if not (n.clickable or n.text or n.desc or n.scrollable or n.checked is not None):
            return
        out.append(_element_dict(len(out), n, box))
        nodes.append(n)
    _visit(frame, add)
    frame._elements, frame._element_nodes = out, nodes
    return out, nodes


def _element_dict(index: int, n: Node, box) -> dict[str, Any]:
    x1, y1, x2, y2 = box
    return {
        "index": index, "text": _a11y_text(n), "desc": n.desc, "class": n.cls, "resource_id": n.rid,
        "bounds": [x1, y1, x2, y2],  # logical dp; scaled to pixels by the observation
        "grid": [round(x1 * GRID / CANVAS_W), round(y1 * GRID / CANVAS_H), round(x2 * GRID / CANVAS_W),
                 round(y2 * GRID / CANVAS_H)],
        "clickable": n.clickable, "long_clickable": n.long_tap is not None, "focused": n.focused,
        "scrollable": n.scrollable, "checkable": n.checked is not None, "checked": bool(n.checked),
        "enabled": n.enabled,
    }


def _a11y_text(n: Node) -> str:
    if n.kind == "slider":
        return str(n.text)
    if n.sub and n.kind in ("item", "card", "hero", "clock"):
        return f"{n.text}\n{n.sub}"
    if n.sub and n.kind == "info":
        return f"{n.sub}\n{n.text}"
    return n.text or ""


def hit_test(frame: Frame, x: float, y: float, long: bool = False) -> Node | None:
    """Topmost enabled node at logical (x, y) with a tap (or long-press) target.

    Children lie inside their parent's box, so subtrees not containing the point are skipped."""
    def rec(n: Node, in_body: bool) -> Node | None:
        box = _clipped(frame, n, in_body)
        if box is None or not (box[0] <= x < box[2] and box[1] <= y < box[3]):
            return None
        for c in reversed(n.children):
            found = rec(c, in_body or n is frame.body)
            if found is not None:
                return found
        target = n.long_tap if long else n.tap
        return n if target is not None and n.enabled else None

    for root in reversed(frame.nodes):
        if frame.modal and root.kind not in _MODAL_KINDS:
            continue
        found = rec(root, False)
        if found is not None:
            return found
    return None


def a11y_tree(frame: Frame, scale: tuple[float, float]) -> dict[str, Any]:
    """uiautomator-style hierarchy with pixel bounds."""
    sx, sy = scale

    def conv(n: Node, in_body: bool) -> dict[str, Any] | None:
        box = _clipped(frame, n, in_body)
        if box is None:
            return None
        x1, y1, x2, y2 = box
        kids = [k for k in (conv(c, in_body or n is frame.body) for c in n.children) if k is not None]
        return {
            "class": n.cls, "text": _a11y_text(n), "content-desc": n.desc, "resource-id": n.rid,
            "package": frame.package,
            "bounds": f"[{round(x1 * sx)},{round(y1 * sy)}][{round(x2 * sx)},{round(y2 * sy)}]",
            "clickable": n.clickable, "long-clickable": n.long_tap is not None, "focused": n.focused,
            "scrollable": n.scrollable, "checkable": n.checked is not None, "checked": bool(n.checked),
            "enabled": n.enabled, "children": kids,
        }
    roots = []
    for r in frame.nodes:
        if frame.modal and r.kind not in _MODAL_KINDS:
            continue
        if r.kind in ("scrim", "clearscrim"):
            continue
        c = conv(r, False)
        if c is not None:
            roots.append(c)
    return {"class": "android.widget.FrameLayout", "package": frame.package, "screen": frame.screen,
            "bounds": f"[0,0][{round(CANVAS_W * sx)},{round(CANVAS_H * sy)}]", "children": roots}
