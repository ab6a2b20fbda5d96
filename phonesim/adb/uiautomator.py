"""`uiautomator dump` output for a phonesim screen: its accessibility tree as the XML a device
writes (`<hierarchy rotation="0"><node index=… text=… resource-id=… bounds="[x1,y1][x2,y2]" …>`).

Two rules make the dump look like a device's rather than like phonesim's internal tree: the
soft keyboard is left out (on Android the IME is its own window, not part of the app's dump),
and image views carry no text (an Android `ImageView` has none; phonesim puts the avatar's
letter there for drawing).
"""

from __future__ import annotations

from typing import Any
from xml.sax.saxutils import escape

IME_CLASS = "android.inputmethodservice.KeyboardView"
_ATTR_ESCAPES = {'"': "&quot;", "\n": "&#10;", "\r": "&#13;", "\t": "&#9;"}
_EDITABLE = ("EditText", "AutoCompleteTextView")


def _attr(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return escape(str(value), _ATTR_ESCAPES)


def _node_xml(node: dict[str, Any], index: int, out: list[str]) -> None:
    cls = node.get("class", "")
    package = node.get("package", "")
    rid = node.get("resource-id", "")
    text = "" if cls.endswith("ImageView") else node.get("text", "")
    clickable = bool(node.get("clickable"))
    attrs = (
        ("index", index), ("text", text), ("resource-id", f"{package}:id/{rid}" if rid else ""),
        ("class", cls), ("package", package), ("content-desc", node.get("content-desc", "")),
        ("checkable", bool(node.get("checkable"))), ("checked", bool(node.get("checked"))),
        ("clickable", clickable), ("enabled", node.get("enabled", True)),
        ("focusable", clickable or cls.endswith(_EDITABLE)), ("focused", bool(node.get("focused"))),
        ("scrollable", bool(node.get("scrollable"))), ("long-clickable", bool(node.get("long-clickable"))),
        ("password", False), ("selected", False), ("bounds", node["bounds"]),
    )
    out.append("<node " + " ".join(f'{k}="{_attr(v)}"' for k, v in attrs))
    children = [c for c in node.get("children", []) if c.get("class") != IME_CLASS]
    if not children:
        out.append(" />")
        return
    out.append(">")
    for i, child in enumerate(children):
        _node_xml(child, i, out)
    out.append("</node>")


def hierarchy_xml(a11y: dict[str, Any]) -> str:
    """The uiautomator XML of a phonesim accessibility tree (`Observation.a11y`)."""
    out = ["<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>", '<hierarchy rotation="0">']
    _node_xml(a11y, 0, out)
    out.append("</hierarchy>")
    return "".join(out)
