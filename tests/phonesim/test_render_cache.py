"""Cached and band-wise rendering gives exactly the pixels of a from-scratch render.

Random action sequences over every app, with the process-wide caches shared by several phones
(so screens are assembled from bands cached for other screens): after each step the screenshot
must equal `rasterize` of the whole screen pixel for pixel, and the band-wise PNG must be a
valid PNG (CRCs, adler32) decoding to the same palette indices as Pillow's encoding of that
reference image."""

from __future__ import annotations

import io
import random
import struct
import zlib

import numpy as np
import pytest
from PIL import Image

from phonesim import Phone, render, solve
from phonesim.actions import Action
from phonesim.layout import element_nodes
from phonesim.render import cache, raster, text, theme


def random_action(phone: Phone, rng: random.Random) -> Action:
    elements = [e for e in element_nodes(phone.frame())[0] if e["clickable"]]
    r = rng.random()
    if r < 0.1 or not elements:
        return Action("system_button", button=rng.choice(["back", "back", "home"]))
    if r < 0.2:
        return Action("swipe", direction=rng.choice(["up", "up", "down"]))
    if r < 0.28:
        return Action("type", text=rng.choice(["Ann", "5", "Work lunch"]))
    if r < 0.36:
        return Action("open_app", app=rng.choice(list(phone.apps)))
    e = rng.choice(elements)
    x1, y1, x2, y2 = e["grid"]
    return Action("long_press" if rng.random() < 0.05 else "click", point=((x1 + x2) // 2, (y1 + y2) // 2))


def png_chunks(data: bytes) -> list[tuple[bytes, bytes]]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    out, i = [], 8
    while i < len(data):
        n = struct.unpack(">I", data[i:i + 4])[0]
        tag, body = data[i + 4:i + 8], data[i + 8:i + 8 + n]
        assert struct.unpack(">I", data[i + 8 + n:i + 12 + n])[0] == zlib.crc32(tag + body), tag
        out.append((tag, body))
        i += 12 + n
    assert out[-1][0] == b"IEND"
    return out


def check_screen(phone: Phone) -> None:
    obs = phone.observe()
    dark = bool(phone.state["data"]["system"]["dark_theme"])
    ops = render.frame_ops(phone.frame(), render.DARK if dark else render.LIGHT)
    ref = render.rasterize(ops, phone.size)
    png = obs.png  # first, so the PNG is built from cached and re-drawn bands, not from the screenshot
    assert obs.screenshot.tobytes() == ref.tobytes(), f"screenshot differs on {obs.app}/{obs.screen}"
    chunks = png_chunks(png)
    idat = b"".join(body for tag, body in chunks if tag == b"IDAT")
    zlib.decompress(idat)  # checks the combined adler32
    got, want = Image.open(io.BytesIO(png)), Image.open(io.BytesIO(render.encode_png(ref, ops)))
    assert got.mode == want.mode == "P" and got.size == want.size == phone.size
    assert np.array_equal(np.asarray(got), np.asarray(want)), f"PNG differs on {obs.app}/{obs.screen}"
    assert got.getpalette()[:768] == want.getpalette()[:768]


@pytest.mark.parametrize("size,seed", [((540, 1200), 0), ((540, 1200), 1), ((411, 913), 2), ((1080, 2400), 3)])
def test_cached_screens_equal_a_full_render(size, seed):
    rng = random.Random(seed)
    render.clear_caches()
    render.cache_stats(reset=True)
    phones = [Phone(0, size) for _ in range(3)]
    steps = 25 if size[0] >= 1080 else 60
    for i in range(steps):
        phone = phones[i % 3] if rng.random() < 0.7 else phones[0]
        if i == steps // 2:  # a theme switch re-colours every band
            phones[1].state["data"]["system"]["dark_theme"] = True
            phones[1].invalidate()
        phone.step(random_action(phone, rng))
        check_screen(phone)
        if i % 5 == 0:  # the PNG made from the cached screenshot is the same file
            png = phone.observe().png
            cache.PNGS.clear()
            other = phone.fork()
            other.observe().screenshot
            assert other.observe().png == png
        if rng.random() < 0.1:  # a fork shows the same screen: a whole-frame hit
            check_screen(phone.fork())
    stats = render.cache_stats()
    # screens drawn whole, and screens assembled from cached and re-drawn bands, were both checked
    assert stats["whole_rasters"] > 0 and stats["band_png_hit"] > 0 and stats["band_pixels_hit"] > 0


def test_snapshot_actions_restore_gives_the_same_state_and_screenshot():
    rng = random.Random(7)
    phone = Phone(0, (540, 1200))
    for name in ("contacts", "settings", "notes"):
        phone.step(Action("open_app", app=name))
        for _ in range(4):
            phone.step(random_action(phone, rng))
        snap = phone.snapshot()
        before = phone.observe()
        png, pixels = before.png, before.screenshot.tobytes()
        for _ in range(8):
            phone.step(random_action(phone, rng))
            phone.observe().png
        phone.restore(snap)
        assert phone.snapshot() == snap
        after = phone.observe()
        assert after.png == png and after.screenshot.tobytes() == pixels
        assert after.elements == before.elements and after.a11y == before.a11y
        render.clear_caches()  # and from cold caches: the same bytes again
        assert phone.observe().png == png
        check_screen(phone)


def test_png_bytes_do_not_depend_on_cache_history():
    phone = Phone(0, (540, 1200))
    phone.step(Action("open_app", app="settings"))
    render.clear_caches()
    cold = phone.observe().png
    rng = random.Random(3)
    other = Phone(0, (540, 1200))
    for _ in range(20):
        other.step(random_action(other, rng))
        other.observe().png
    cache.PNGS.clear()  # force assembly from (partly) cached bands
    assert phone.fork().observe().png == cold


def test_adler32_combine_matches_zlib():
    rng = random.Random(0)
    for _ in range(50):
        a = bytes(rng.randrange(256) for _ in range(rng.randrange(0, 300)))
        b = bytes(rng.randrange(256) for _ in range(rng.randrange(0, 70000, 7)))
        assert render.adler32_combine(zlib.adler32(a), zlib.adler32(b), len(b)) == zlib.adler32(a + b)


def test_caches_respect_their_budget():
    try:
        render.set_cache_budget(4)
        rng = random.Random(1)
        phone = Phone(0, (540, 1200))
        for _ in range(30):
            phone.step(random_action(phone, rng))
            check_screen(phone)
        assert render.cache_stats()["cache_mb"] <= 4
        render.set_cache_budget(0)
        phone.step(Action("open_app", app="contacts"))
        check_screen(phone)
        assert render.cache_stats()["cache_mb"] == 0
    finally:
        render.set_cache_budget(render.DEFAULT_CACHE_MB)


def test_text_composed_from_glyphs_looks_like_pillow_text():
    """Labels are cached glyph bitmaps on a common baseline (no kerning): where Pillow applies no
    kerning, the same mask size, anchor offset and (nearly) the same pixels; where it kerns, a
    label is at most a few pixels wider. The same bytes again from cold caches."""
    for s in ["Hello", "Ann Smith", "8:00", "jpg", " ", "✓", "⌫", "Brightness 45%", "555-0134", "Grocery list"]:
        for px, bold in ((13, False), (48, True)):
            for anchor in ("la", "lm", "mm", "rm", "mt", "mb"):
                core, (x0, y0) = render.font(px, bold).getmask2(s, "L", anchor=anchor)
                ref = np.asarray(Image.Image()._new(core), dtype=int)
                mask, dx, dy = text.text_mask(s, px, bold, anchor)
                got = np.asarray(mask, dtype=int)
                if s == "Grocery list":  # kerned pairs
                    assert 0 <= got.shape[1] - ref.shape[1] <= 0.05 * ref.shape[1] + 1 and dy == y0
                elif s != " ":
                    assert (got.shape, dx, dy) == (ref.shape, x0, y0), (s, px, anchor)
                    assert np.abs(got - ref).mean() < 0.1, (s, px, anchor)
                else:
                    assert not got.any()
    warm = text.text_mask("Ann Smith", 40, False, "lm")
    render.clear_caches()
    cold = text.text_mask("Ann Smith", 40, False, "lm")
    assert (cold[0].tobytes(), cold[1:]) == (warm[0].tobytes(), warm[1:])


@pytest.mark.parametrize("size", [(1080, 2400), (411, 913)])
def test_tiles_give_the_pixels_of_plain_drawing(size, monkeypatch):
    """Labels and small shapes on a solid colour are pasted as cached tiles: exactly what
    drawing them there gives (dialogs under a scrim included)."""
    rng = random.Random(11)
    phone = Phone(0, size)
    dialogs = 0
    for i in range(40):
        phone.step(random_action(phone, rng))
        dark = bool(phone.state["data"]["system"]["dark_theme"])
        ops = render.frame_ops(phone.frame(), render.DARK if dark else render.LIGHT)
        dialogs += any(n.kind == "dialog" for n in phone.frame().nodes)
        monkeypatch.setattr(raster, "TILES", True)
        tiled = render.rasterize(ops, size).tobytes()
        monkeypatch.setattr(raster, "TILES", False)
        assert render.rasterize(ops, size).tobytes() == tiled, f"{phone.observe().screen}"
    assert len(raster.TILE_CACHE) > 0


def test_recycled_canvases_never_overwrite_a_screenshot_someone_holds():
    try:
        render.set_cache_budget(30)  # two 1080x2400 screenshots: every new screen evicts one
        rng = random.Random(5)
        phone = Phone(0, (1080, 2400))
        held = phone.observe().screenshot
        pixels = held.tobytes()
        drawn = 0
        for _ in range(25):
            phone.step(random_action(phone, rng))
            phone.observe().screenshot
            drawn = render.cache_stats()["whole_rasters"]
        assert drawn > 5 and sum(map(len, raster.SPARE.values())) > 0  # evicted screens were recycled
        assert held.tobytes() == pixels
        check_screen(phone)
    finally:
        render.set_cache_budget(render.DEFAULT_CACHE_MB)


def test_a_dialog_dims_what_lies_under_it():
    """The scrim is not blended over the screen: what lies under it is drawn in dimmed colours."""
    from phonesim import instantiate
    task = instantiate("settings.set_screen_timeout", 0)
    phone = task.make_phone((540, 1200))
    for a in solve(phone, task)[:-1]:
        phone.step(a)
    assert phone.frame().modal
    ops = render.frame_ops(phone.frame(), render.LIGHT)
    assert not any(op[0] == "dim" for op in ops)
    shot = phone.observe().screenshot
    dim = tuple(round(v * (1 - theme.SCRIM_ALPHA / 255)) for v in theme.rgb(render.LIGHT["bg"]))
    assert shot.getpixel((2, 600)) == dim  # left of the dialog card, over the page's background
    assert shot.getpixel((2, 1195)) == theme.rgb(render.LIGHT["nav"])  # the navigation bar is not dimmed
