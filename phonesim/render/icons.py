"""Icons as draw ops: a character of the UI font for most, shapes for the few DejaVu Sans lacks."""

from __future__ import annotations

from typing import Callable

from phonesim.render.ops import DrawOp, Ellipse, Line, Rect, Text

GLYPHS = {"chevron": "›", "close": "✕", "more": "⋮", "plus": "+", "edit": "✎", "delete": "🗑", "star": "☆",
          "star_filled": "★", "call": "✆", "message": "✉", "settings": "⚙", "brightness": "☀",
          "dark": "☾", "airplane": "✈", "sound": "♫", "wifi": "≋", "bluetooth": "ᛒ", "battery": "▮",
          "display": "☀", "info": "ⓘ", "person": "●", "check": "✓", "menu": "☰", "nav_recents": "■",
          "nav_home": "●", "nav_back": "◀", "location": "⌖", "bell": "♪", "mail": "✉", "share": "⇪",
          "contacts": "☺", "search": "⌕", "back": "←", "group": "☷", "phone": "✆"}

IconDrawer = Callable[[list[DrawOp], float, float, float, float, str], None]


def draw_icon(out: list[DrawOp], name: str, x: float, y: float, w: float, h: float, colour: str) -> None:
    """Append the ops of icon `name` in the box (x, y, w, h); an unknown name shows its initial."""
    drawer = DRAWN_ICONS.get(name)
    if drawer is not None:
        drawer(out, x, y, w, h, colour)
        return
    ch = GLYPHS.get(name, name[:1].upper())
    out.append(Text(x + w / 2, y + h / 2, ch, int(min(w, h) * 0.8), False, colour, "mm"))


# Icons whose characters DejaVu Sans lacks (they would show as boxes) are drawn from shapes.
def _magnifier(out, x, y, w, h, colour):
    r = min(w, h) * 0.28
    cx, cy = x + w * 0.44, y + h * 0.44
    out.append(Ellipse(cx - r, cy - r, cx + r, cy + r, None, colour, 2))
    out.append(Line(cx + r * 0.7, cy + r * 0.7, x + w * 0.82, y + h * 0.82, colour, 2))


def _trash(out, x, y, w, h, colour):
    lw = max(1.5, w / 14)
    out.append(Line(x + w * 0.18, y + h * 0.24, x + w * 0.82, y + h * 0.24, colour, lw))
    out.append(Rect(x + w * 0.40, y + h * 0.12, x + w * 0.60, y + h * 0.24, None, 0, colour, lw))
    out.append(Rect(x + w * 0.26, y + h * 0.30, x + w * 0.74, y + h * 0.88, None, w * 0.06, colour, lw))
    for fx in (0.42, 0.58):
        out.append(Line(x + w * fx, y + h * 0.42, x + w * fx, y + h * 0.76, colour, lw * 0.8))


def _pin(out, x, y, w, h, colour):
    r = min(w, h) * 0.26
    cx, cy = x + w / 2, y + h * 0.38
    lw = max(1.5, w / 12)
    out.append(Ellipse(cx - r, cy - r, cx + r, cy + r, None, colour, lw))
    out.append(Line(cx - r * 0.75, cy + r * 0.66, cx, y + h * 0.9, colour, lw))
    out.append(Line(cx + r * 0.75, cy + r * 0.66, cx, y + h * 0.9, colour, lw))
    out.append(Ellipse(cx - r * 0.3, cy - r * 0.3, cx + r * 0.3, cy + r * 0.3, colour, None, 0))


def _info(out, x, y, w, h, colour):
    r = min(w, h) * 0.4
    cx, cy = x + w / 2, y + h / 2
    out.append(Ellipse(cx - r, cy - r, cx + r, cy + r, None, colour, max(1.5, w / 14)))
    out.append(Text(cx, cy + r * 0.1, "i", int(min(w, h) * 0.5), True, colour, "mm"))


def _bluetooth(out, x, y, w, h, colour):
    cx, top, bottom, lw = x + w / 2, y + h * 0.12, y + h * 0.88, max(1.5, w / 14)
    rx, lx = cx + w * 0.2, cx - w * 0.2
    for a, b in (((cx, top), (cx, bottom)), ((lx, y + h * 0.32), (rx, y + h * 0.68)), ((rx, y + h * 0.68), (cx, bottom)),
                 ((lx, y + h * 0.68), (rx, y + h * 0.32)), ((rx, y + h * 0.32), (cx, top))):
        out.append(Line(a[0], a[1], b[0], b[1], colour, lw))


DRAWN_ICONS: dict[str, IconDrawer] = {"search": _magnifier, "delete": _trash, "location": _pin, "info": _info,
                                      "bluetooth": _bluetooth}
