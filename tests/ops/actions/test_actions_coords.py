"""Coordinate frames and Qwen2-VL smart_resize."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ops.actions import GRID
from ops.actions.coords import (
    GRID_999,
    GRID_1000,
    QWEN_MAX_PIXELS,
    QWEN_MIN_PIXELS,
    ResizedPixels,
    frame_from_spec,
    grid_to_pixels,
    pixels_to_grid,
    round_half_up,
    screen_pixels,
    smart_resize,
)

grid_points = st.tuples(st.integers(0, GRID), st.integers(0, GRID))


@pytest.mark.parametrize(
    "height,width,expected",
    [
        (2400, 1080, (1484, 672)),  # phone screenshot above max_pixels: scaled down
        (1000, 500, (1008, 504)),  # within bounds: nearest multiples of 28
        (28, 28, (56, 56)),  # below min_pixels: scaled up
    ],
)
def test_smart_resize_known_values(height, width, expected):
    h, w = smart_resize(height, width)
    assert (h, w) == expected
    assert h % 28 == 0 and w % 28 == 0


@settings(max_examples=200)
@given(h=st.integers(28, 5000), w=st.integers(28, 5000))
def test_smart_resize_invariants(h, w):
    if max(h, w) / min(h, w) > 200:
        return
    rh, rw = smart_resize(h, w)
    assert rh % 28 == 0 and rw % 28 == 0
    assert rh * rw <= QWEN_MAX_PIXELS
    assert rh * rw >= QWEN_MIN_PIXELS


def test_smart_resize_matches_transformers():
    pil = pytest.importorskip("transformers.models.qwen2_vl.image_processing_pil_qwen2_vl")
    sizes = [
        (2400, 1080),
        (1920, 1080),
        (800, 600),
        (30, 40),
        (3000, 3000),
        (2340, 1080),
        (224, 5000),
    ]
    for h, w in sizes:
        reference = pil.smart_resize(
            h, w, factor=28, min_pixels=QWEN_MIN_PIXELS, max_pixels=QWEN_MAX_PIXELS
        )
        assert smart_resize(h, w) == tuple(reference), (h, w)


@pytest.mark.parametrize("h,w", [(27, 500), (500, 10), (28, 28 * 201)])
def test_smart_resize_rejects_degenerate_images(h, w):
    with pytest.raises(ValueError):
        smart_resize(h, w)


@settings(max_examples=200)
@given(point=grid_points, w=st.integers(GRID, 4000), h=st.integers(GRID, 4000))
def test_grid_to_fine_pixels_round_trips(point, w, h):
    assert pixels_to_grid(grid_to_pixels(point, w, h), w, h) == point


@settings(max_examples=200)
@given(data=st.data(), w=st.integers(1, GRID), h=st.integers(1, GRID))
def test_coarse_pixels_to_grid_round_trips(data, w, h):
    pixel = (data.draw(st.integers(0, w)), data.draw(st.integers(0, h)))
    assert grid_to_pixels(pixels_to_grid(pixel, w, h), w, h) == pixel


@settings(max_examples=200)
@given(x=st.integers(0, 999), y=st.integers(0, 999))
def test_grid999_round_trips_through_the_grid(x, y):
    gx, gy = GRID_999.to_grid(x, y)
    assert GRID_999.from_grid((round_half_up(gx), round_half_up(gy))) == (x, y)


def test_grid1000_is_identity_and_corners_map_to_corners():
    assert GRID_1000.to_grid(123, 456) == (123, 456)
    assert GRID_999.to_grid(999, 0) == (GRID, 0)
    assert grid_to_pixels((GRID, GRID), 1080, 2400) == (1080, 2400)


def test_resized_pixels_frame_uses_smart_resize():
    frame = ResizedPixels(1080, 2400)
    assert frame.size == (672, 1484)
    assert frame.to_grid(336, 742) == (500, 500)
    assert frame.from_grid((500, 500)) == (336, 742)


@pytest.mark.parametrize(
    "spec,expected",
    [
        ("grid", GRID_1000),
        ("grid999", GRID_999),
        ("pixels:1080x2400", screen_pixels(1080, 2400)),
        ("resized:1080x2400", ResizedPixels(1080, 2400)),
    ],
)
def test_frame_from_spec(spec, expected):
    assert frame_from_spec(spec) == expected


@pytest.mark.parametrize("spec", ["pixels:axb", "pixels", "metres:1x1", "grid:5"])
def test_frame_from_spec_rejects_bad_specs(spec):
    with pytest.raises(ValueError, match="frame|expected"):
        frame_from_spec(spec)


def test_frame_size_must_be_positive():
    with pytest.raises(ValueError, match="positive"):
        screen_pixels(0, 10)
