"""A device's accessibility tree (`uiautomator dump` XML) as the simulator's element list, with
the XML preprocessing of MobileRL appendix C: off-screen and invisible nodes are dropped (C.1),
nodes with no function and no text are dropped as redundant containers (C.2), and the kept
nodes are written compactly (C.3). `tree_reduction` reports what that saves in tokens.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from typing import Any

from ops.actions import GRID

BOOLEAN_ATTRIBUTES = ("checkable", "checked", "clickable", "enabled", "focusable", "focused", "scrollable",
                      "long-clickable", "password", "selected")
# MobileRL C.2: a node is functional when one of these is true or it has text / content-desc
FUNCTIONAL_ATTRIBUTES = ("checkable", "checked", "clickable", "focusable", "scrollable", "long-clickable",
                         "password", "selected")
_BOUNDS = re.compile(r"\[(-?\d+),(-?\d+)\]\[(-?\d+),(-?\d+)\]")
_TOKEN = re.compile(r"\w+|[^\w\s]")


class HierarchyError(ValueError):
    """A dump that is not uiautomator XML (truncated, empty, an error message)."""


def parse_bounds(text: str) -> tuple[int, int, int, int]:
    """`[x1,y1][x2,y2]` -> (x1, y1, x2, y2)."""
    match = _BOUNDS.fullmatch(text.strip())
    if match is None:
        raise HierarchyError(f"bounds {text!r} are not [x1,y1][x2,y2]")
    return tuple(int(v) for v in match.groups())  # type: ignore[return-value]


def _node(element: ET.Element) -> dict[str, Any]:
    node: dict[str, Any] = {k: element.get(k, "") for k in ("class", "text", "content-desc", "resource-id",
                                                              "package")}
    node["bounds"] = element.get("bounds", "[0,0][0,0]")
    for name in BOOLEAN_ATTRIBUTES:
        node[name] = element.get(name, "true" if name == "enabled" else "false") == "true"
    if element.get("visible-to-user") == "false":
        node["visible-to-user"] = False
    node["children"] = [_node(child) for child in element if child.tag == "node"]
    return node


def parse_hierarchy(xml: str) -> dict[str, Any]:
    """The dump as the JSON-able tree phonesim's `Observation.a11y` holds (same keys; resource
    ids keep the device's `package:id/` prefix)."""
    try:
        root = ET.fromstring(xml.encode("utf-8"))
    except ET.ParseError as exc:
        raise HierarchyError(f"not uiautomator XML: {exc}") from None
    if root.tag != "hierarchy":
        raise HierarchyError(f"root element is <{root.tag}>, not <hierarchy>")
    nodes = [_node(child) for child in root if child.tag == "node"]
    if len(nodes) == 1:
        return nodes[0]
    return {"class": "hierarchy", "text": "", "content-desc": "", "resource-id": "", "package": "",
            "bounds": "[0,0][0,0]", "children": nodes}


def _short_id(resource_id: str) -> str:
    return resource_id.split(":id/", 1)[-1]


def _element(index: int, node: dict[str, Any], box: tuple[int, int, int, int], size: tuple[int, int]) -> dict:
    x1, y1, x2, y2 = box
    width, height = size
    return {
        "index": index, "text": node["text"], "desc": node["content-desc"], "class": node["class"],
        "resource_id": _short_id(node["resource-id"]), "bounds": [x1, y1, x2, y2],
        "grid": [round(x1 * GRID / width), round(y1 * GRID / height), round(x2 * GRID / width),
                 round(y2 * GRID / height)],
        "clickable": node["clickable"], "long_clickable": node["long-clickable"], "focused": node["focused"],
        "scrollable": node["scrollable"], "checkable": node["checkable"], "checked": node["checked"],
        "enabled": node["enabled"],
    }


def is_functional(node: dict[str, Any]) -> bool:
    """MobileRL C.2: a true functional attribute, or text / content-desc."""
    return any(node.get(a) for a in FUNCTIONAL_ATTRIBUTES) or bool(node.get("text") or node.get("content-desc"))


def select_elements(tree: dict[str, Any], size: tuple[int, int], keep_offscreen: bool = False) -> list[dict]:
    """The flat element list (pre-order, the simulator's format, pixel bounds) of the nodes that
    survive MobileRL C.1 and C.2. A node is on screen when its bounds lie within the screen and
    within its parent's (checked down the tree, so an off-screen parent takes its subtree with it);
    zero-area and `visible-to-user="false"` nodes are invisible and go the same way.
    `keep_offscreen` is C.1's `remain_nodes=True` (keep what needs scrolling to see)."""
    width, height = size
    out: list[dict] = []

    def visit(node: dict[str, Any], parent: tuple[int, int, int, int]) -> None:
        box = parse_bounds(node["bounds"]) if node["class"] != "hierarchy" else parent
        x1, y1, x2, y2 = box
        if x2 <= x1 or y2 <= y1 or node.get("visible-to-user") is False:
            return
        inside = parent[0] <= x1 and parent[1] <= y1 and x2 <= parent[2] and y2 <= parent[3]
        if not inside and not keep_offscreen:
            return
        if node["class"] != "hierarchy" and is_functional(node):
            out.append(_element(len(out), node, box, size))
        for child in node["children"]:
            visit(child, box)

    visit(tree, (0, 0, width, height))
    return out


def compact_text(elements: list[dict]) -> str:
    """MobileRL C.3: one line per kept node; true flags only, no index/resource-id/package,
    the class's last component, text and content-desc side by side, full bounds."""
    lines = []
    for e in elements:
        flags = [name for name, key in (("checkable", "checkable"), ("checked", "checked"),
                                         ("clickable", "clickable"), ("long-clickable", "long_clickable"),
                                         ("scrollable", "scrollable"), ("focused", "focused")) if e.get(key)]
        label = " ".join(f'{k}="{v}"' for k, v in (("text", e["text"].replace("\n", " ")), ("desc", e["desc"]))
                         if v)
        x1, y1, x2, y2 = e["bounds"]
        lines.append(" ".join(p for p in (e["class"].rsplit(".", 1)[-1], label, " ".join(flags),
                                          f"[{x1},{y1}][{x2},{y2}]") if p))
    return "\n".join(lines)


def count_tokens(text: str) -> int:
    """Approximate LLM token count: words and single punctuation marks (a BPE tokenizer lands
    within a small factor of it; the reduction ratio is what matters)."""
    return len(_TOKEN.findall(text))


@dataclass(frozen=True)
class TreeReduction:
    """What MobileRL C preprocessing kept of one dump."""

    raw_nodes: int
    kept_nodes: int
    raw_tokens: int
    kept_tokens: int

    @property
    def token_ratio(self) -> float:
        """Kept tokens over raw tokens (0.2 = the preprocessed tree costs a fifth)."""
        return self.kept_tokens / self.raw_tokens if self.raw_tokens else 1.0


def tree_reduction(xml: str, size: tuple[int, int]) -> TreeReduction:
    """Token and node counts of the raw dump against its preprocessed, compact form."""
    tree = parse_hierarchy(xml)
    elements = select_elements(tree, size)

    def count(node: dict[str, Any]) -> int:
        return (node["class"] != "hierarchy") + sum(count(c) for c in node["children"])

    return TreeReduction(count(tree), len(elements), count_tokens(xml), count_tokens(compact_text(elements)))
