"""Accessibility-tree state signatures: the check after the visual match (beyond UI-Voyager).

SSIM on a thumbnail cannot see a one-letter typo in a text field, which of two identical
switches is on, or which of two look-alike list items was opened. When both observations
carry a tree, two screens are the same state only if
  - every editable field holds exactly the same text (in reading order),
  - the same elements (by reading-order position) are checked / selected / focused, and
  - the other visible elements (class, resource id, text, content description) agree as a
    multiset, up to `max_static_text_differences` elements (for clocks, timestamps...).
Elements entirely inside the cropped status bar, hidden ones and zero-area ones are ignored,
mirroring the status-bar crop of the visual comparison (UI-Voyager §3.3.1).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

from training.methods.grsd.forks.model import ForkInputError

_ALIASES = {
    "cls": ("class", "class_name", "className"),
    "text": ("text",),
    "content_desc": ("content_desc", "content-desc", "contentDescription", "desc"),
    "resource_id": ("resource_id", "resource-id", "resourceId", "id"),
    "checked": ("checked", "is_checked"),
    "selected": ("selected", "is_selected"),
    "focused": ("focused", "is_focused"),
    "editable": ("editable", "is_editable"),
    "visible": ("visible", "is_visible", "visible_to_user"),
}
_BOUNDS_STRING = re.compile(r"\[(-?[\d.]+),(-?[\d.]+)\]\[(-?[\d.]+),(-?[\d.]+)\]")
_SPACES = re.compile(r"\s+")

Bounds = tuple[float, float, float, float]  # left, top, right, bottom


@dataclass(frozen=True, slots=True)
class Element:
    """One accessibility node, normalized; missing keys become "" / False / None."""

    cls: str
    text: str
    content_desc: str
    resource_id: str
    bounds: Bounds | None
    checked: bool
    selected: bool
    focused: bool
    editable: bool
    visible: bool

    @property
    def identity(self) -> tuple[Any, ...]:
        """What makes this element the same widget on the same screen."""
        return (self.cls, self.resource_id, normalize_text(self.text), normalize_text(self.content_desc), self.bounds)

    def contains(self, x: float, y: float) -> bool:
        if self.bounds is None:
            return False
        left, top, right, bottom = self.bounds
        return left <= x <= right and top <= y <= bottom

    @property
    def area(self) -> float:
        if self.bounds is None:
            return float("inf")
        left, top, right, bottom = self.bounds
        return max(0.0, right - left) * max(0.0, bottom - top)


@dataclass(frozen=True, slots=True)
class TreeSignature:
    """The parts of a screen's tree that decide whether two screens are the same state."""

    fields: tuple[tuple[str, str, bool], ...]  # (resource id, exact text, focused) of editable elements
    states: tuple[tuple[Any, ...], ...]  # (position, class, resource id, checked, selected, focused)
    static: Counter  # (class, resource id, text, content description) of the other elements


def parse_elements(tree: list[Any] | dict[str, Any]) -> list[Element]:
    """Flatten a tree (element list, `{"elements": [...]}` or nested `children`) in document order."""
    out: list[Element] = []
    _collect(tree, out, path="tree")
    return out


def _collect(node: Any, out: list[Element], path: str) -> None:
    if isinstance(node, list):
        for index, child in enumerate(node):
            _collect(child, out, f"{path}[{index}]")
        return
    if not isinstance(node, dict):
        raise ForkInputError(f"{path}: tree node must be an object or a list, got {type(node).__name__}")
    if "elements" in node and not _has_any(node, "cls", "text", "bounds"):
        _collect(node["elements"], out, f"{path}.elements")
        return
    out.append(_element(node, path))
    if node.get("children"):
        _collect(node["children"], out, f"{path}.children")


def _has_any(node: dict[str, Any], *names: str) -> bool:
    return any(alias in node for name in names for alias in _ALIASES.get(name, (name,)))


def _get(node: dict[str, Any], name: str) -> Any:
    for alias in _ALIASES[name]:
        if alias in node and node[alias] is not None:
            return node[alias]
    return None


def _flag(node: dict[str, Any], name: str, path: str, default: bool = False) -> bool:
    value = _get(node, name)
    if value is None:
        return default
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    raise ForkInputError(f"{path}: {name} must be a boolean, got {value!r}")


def _element(node: dict[str, Any], path: str) -> Element:
    cls = str(_get(node, "cls") or "")
    return Element(
        cls=cls,
        text=str(_get(node, "text") or ""),
        content_desc=str(_get(node, "content_desc") or ""),
        resource_id=str(_get(node, "resource_id") or ""),
        bounds=_bounds(node.get("bounds"), path),
        checked=_flag(node, "checked", path),
        selected=_flag(node, "selected", path),
        focused=_flag(node, "focused", path),
        editable=_flag(node, "editable", path, default="EditText" in cls),
        visible=_flag(node, "visible", path, default=True),
    )


def _bounds(value: Any, path: str) -> Bounds | None:
    if value is None:
        return None
    try:
        if isinstance(value, str):
            match = _BOUNDS_STRING.fullmatch(value.replace(" ", ""))
            if match is None:
                raise ValueError(value)
            numbers = [float(g) for g in match.groups()]
        elif isinstance(value, dict):
            numbers = [float(value[k]) for k in ("left", "top", "right", "bottom")]
        else:
            numbers = [float(v) for v in value]
            if len(numbers) != 4:
                raise ValueError(value)
    except (ValueError, TypeError, KeyError):
        raise ForkInputError(
            f"{path}: bounds must be [left, top, right, bottom], a left/top/right/bottom object "
            f"or '[l,t][r,b]', got {value!r}"
        ) from None
    left, top, right, bottom = numbers
    return (left, top, right, bottom)


def normalize_text(text: str) -> str:
    """Collapse runs of whitespace and strip the ends."""
    return _SPACES.sub(" ", text).strip()


def visible_elements(elements: list[Element], status_bar_bottom: float) -> list[Element]:
    """Shown, non-empty elements below the status bar, in reading order (top, then left)."""
    shown = []
    for index, element in enumerate(elements):
        if not element.visible:
            continue
        if element.bounds is not None:
            left, top, right, bottom = element.bounds
            if right <= left or bottom <= top or bottom <= status_bar_bottom:
                continue
        shown.append((index, element))
    shown.sort(key=lambda item: _reading_key(item[0], item[1]))
    return [element for _, element in shown]


def _reading_key(index: int, element: Element) -> tuple[Any, ...]:
    if element.bounds is None:
        return (1, 0.0, 0.0, index)  # unplaced elements after placed ones, in document order
    return (0, element.bounds[1], element.bounds[0], index)


def tree_signature(elements: list[Element], status_bar_bottom: float) -> TreeSignature:
    """Signature of the visible part of a tree (see the module docstring)."""
    fields: list[tuple[str, str, bool]] = []
    states: list[tuple[Any, ...]] = []
    static: Counter = Counter()
    for position, element in enumerate(visible_elements(elements, status_bar_bottom)):
        if element.editable:
            # Exact text: a typo is another state. Focus says where the next typing goes.
            fields.append((element.resource_id, element.text, element.focused))
            continue
        if element.checked or element.selected or element.focused:
            states.append(
                (position, element.cls, element.resource_id, element.checked, element.selected, element.focused)
            )
        text, desc = normalize_text(element.text), normalize_text(element.content_desc)
        static[(element.cls, element.resource_id, text, desc)] += 1
    return TreeSignature(fields=tuple(fields), states=tuple(states), static=static)


def same_tree_state(a: TreeSignature, b: TreeSignature, max_static_differences: int = 0) -> bool:
    """True when two signatures describe the same screen state (see the module docstring)."""
    if a.fields != b.fields or a.states != b.states:
        return False
    extra_a = sum((a.static - b.static).values())
    extra_b = sum((b.static - a.static).values())
    return max(extra_a, extra_b) <= max_static_differences
