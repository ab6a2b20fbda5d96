"""Palette PNG screenshots: 8-bit, faithful to the RGB rendering, smaller than plain RGB."""

from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image, ImageColor

from phonesim import Phone, instantiate, render, solve
from phonesim.actions import Action


def _screens() -> list[Phone]:
    """A light list screen, a form with the keyboard up, and a dimmed dialog in dark theme."""
    task = instantiate("contacts.edit_phone", 0)
    listing = task.make_phone((540, 1200))
    listing.step(Action("open_app", app="Contacts"))
    form = listing.fork()
    fab = next(e for e in form.observe().elements if e["resource_id"] == "fab")
    form.step(Action("click", element=fab["index"]))
    form.step(Action("type", text="Ann", point=(500, 158)))
    dialog_task = instantiate("settings.set_screen_timeout", 0)
    dialog = dialog_task.make_phone((540, 1200))
    for a in solve(dialog, dialog_task)[:-1]:
        dialog.step(a)
    dialog.state["data"]["system"]["dark_theme"] = True
    dialog.invalidate()
    return [listing, form, dialog]


@pytest.mark.parametrize("index", range(3))
def test_palette_png_matches_the_rgb_screenshot(index):
    phone = _screens()[index]
    obs = phone.observe()
    png = Image.open(io.BytesIO(obs.png))
    assert png.mode == "P" and png.size == (540, 1200)
    err = np.abs(np.asarray(png.convert("RGB"), dtype=int) - np.asarray(obs.screenshot, dtype=int))
    assert err.mean() < 0.5  # solid colours exact; only anti-aliased edges shift a little
    assert (err.max(axis=-1) > 32).mean() < 0.001


def test_palette_png_is_smaller_than_rgb_png():
    obs = _screens()[0].observe()
    assert len(obs.png) < 0.7 * len(render.encode_png(obs.screenshot))


def test_palette_keeps_every_solid_colour_of_the_screen():
    phone = _screens()[2]
    ops = render.frame_ops(phone.frame(), render.DARK)
    entries = render.ui_palette(ops).getpalette()
    colours = {tuple(entries[i:i + 3]) for i in range(0, len(entries), 3)}
    solids = {ImageColor.getrgb(op.fill) for op in ops if isinstance(op, render.Rect) and op.fill}
    assert solids <= colours
