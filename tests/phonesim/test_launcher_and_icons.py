"""Launcher pages when there are more apps than fit; every icon renders as a real shape."""

from __future__ import annotations

import dataclasses

from PIL import Image

from phonesim import Phone, render
from phonesim.actions import Action
from phonesim.phone import APPS_PER_PAGE
from phonesim.render import icons
from phonesim.widgets import CANVAS_H, NAVBAR_H

from tests.phonesim.test_render_cache import check_screen


def _crowded_phone(n_apps: int = 21) -> Phone:
    phone = Phone(0, (540, 1200))
    real = list(phone.apps.values())
    apps = dict(phone.apps)
    for i in range(n_apps - len(real)):  # launcher-only clones: they are never opened here
        clone = dataclasses.replace(real[i % len(real)], name=f"clone{i}", label=f"Clone {i}")
        apps[clone.name] = clone
    phone.apps = apps
    phone.invalidate()
    return phone


def _icons(phone: Phone) -> list[dict]:
    return [e for e in phone.observe().elements if e["resource_id"].startswith("icon_")]


def test_launcher_pages_hold_sixteen_icons_each_inside_the_screen():
    phone = _crowded_phone(21)
    first = _icons(phone)
    assert len(first) == APPS_PER_PAGE
    assert all(e["bounds"][3] <= (CANVAS_H - NAVBAR_H) * 1200 / CANVAS_H for e in first)
    dots = [e for e in phone.observe().elements if e["resource_id"] == "page_indicator"]
    assert dots and dots[0]["desc"] == "Page 1 of 2"
    check_screen(phone)
    assert phone.step(Action("swipe", direction="left")).ok
    second = _icons(phone)
    assert len(second) == 21 - APPS_PER_PAGE and {e["text"] for e in second}.isdisjoint({e["text"] for e in first})
    check_screen(phone)
    assert not phone.step(Action("swipe", direction="left")).ok  # no third page: a recorded no-op
    assert phone.step(Action("swipe", direction="right")).ok
    assert [e["text"] for e in _icons(phone)] == [e["text"] for e in first]
    assert "launcher_page" not in phone.state["os"]  # page 0 is the default, so snapshots stay as before


def test_one_page_launcher_ignores_horizontal_swipes():
    phone = Phone(0, (540, 1200))
    before = phone.snapshot()
    assert not phone.step(Action("swipe", direction="left")).ok
    assert phone.snapshot() == before
    assert not any(e["resource_id"] == "page_indicator" for e in phone.observe().elements)
    assert phone.step(Action("open_app", app="Contacts")).ok  # opening by name is unaffected


def _mask(ch: str) -> bytes:
    return Image.Image()._new(render.font(40).getmask(ch)).tobytes()


def test_icon_characters_exist_in_the_font_and_drawn_icons_are_shapes():
    missing = _mask("\ue000")  # an unassigned code point: the font's "missing glyph" box
    text_icons = {n: c for n, c in render.GLYPHS.items() if n not in icons.DRAWN_ICONS}
    boxes = [n for n, c in text_icons.items() if _mask(c) == missing]
    assert not boxes, f"icons that would render as boxes: {boxes}"
    for name in icons.DRAWN_ICONS:
        ops: list = []
        icons.draw_icon(ops, name, 0, 0, 24, 24, "#000000")
        assert ops and all(not isinstance(op, render.Text) or _mask(op.text) != missing for op in ops)
