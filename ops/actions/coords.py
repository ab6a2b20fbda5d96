"""Coordinate frames: convert between the canonical 0–1000 grid and what models emit.

A model writes points in its own frame: the 0–1000 grid (per-mille of the screen, Qwen3-VL),
the 0–999 grid, screen pixels (AndroidWorld on a device), or pixels of the image after
Qwen2-VL's `smart_resize` (Qwen2.5-VL-based agents). Every frame maps to and from the grid.

Round trips: grid → frame → grid is exact whenever the frame is at least as fine as the grid
(≥ 1000 units per axis); frame → grid → frame is exact whenever the frame is at most as fine.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Protocol

from phonesim.actions import GRID

# Qwen2-VL image processor defaults (patch 14, 2×2 merge → factor 28).
QWEN_FACTOR = 28
QWEN_MIN_PIXELS = 56 * 56
QWEN_MAX_PIXELS = 28 * 28 * 1280
QWEN_MAX_ASPECT = 200


def round_half_up(value: float) -> int:
    """Round to the nearest integer, halves away from −∞ (deterministic, unlike banker's)."""
    return math.floor(value + 0.5)


def smart_resize(
    height: int,
    width: int,
    factor: int = QWEN_FACTOR,
    min_pixels: int = QWEN_MIN_PIXELS,
    max_pixels: int = QWEN_MAX_PIXELS,
) -> tuple[int, int]:
    """(height, width) Qwen2-VL resizes an image to: both multiples of `factor`, area within
    [min_pixels, max_pixels], aspect ratio kept as closely as possible.

    Raises ValueError for images thinner than `factor` or more elongated than 200:1.
    """
    if height < factor or width < factor:
        raise ValueError(f"image {width}x{height} is smaller than the factor {factor}")
    if max(height, width) / min(height, width) > QWEN_MAX_ASPECT:
        raise ValueError(f"image {width}x{height} has aspect ratio above {QWEN_MAX_ASPECT}")
    h_bar = max(factor, round(height / factor) * factor)
    w_bar = max(factor, round(width / factor) * factor)
    if h_bar * w_bar > max_pixels:
        beta = math.sqrt(height * width / max_pixels)
        h_bar = max(factor, math.floor(height / beta / factor) * factor)
        w_bar = max(factor, math.floor(width / beta / factor) * factor)
    elif h_bar * w_bar < min_pixels:
        beta = math.sqrt(min_pixels / (height * width))
        h_bar = math.ceil(height * beta / factor) * factor
        w_bar = math.ceil(width * beta / factor) * factor
    return h_bar, w_bar


def grid_to_scale(value: float, size: int) -> int:
    """A grid coordinate (0..GRID) on an axis of `size` units (0..size)."""
    return round_half_up(value * size / GRID)


def scale_to_grid(value: float, size: int) -> float:
    """A coordinate on an axis of `size` units as a (fractional) grid coordinate."""
    return value * GRID / size


class CoordFrame(Protocol):
    """How a model's coordinates relate to the canonical grid."""

    def to_grid(self, x: float, y: float) -> tuple[float, float]: ...

    def from_grid(self, point: tuple[int, int]) -> tuple[int, int]: ...


@dataclass(frozen=True, slots=True)
class ScaledFrame:
    """A frame of `width` × `height` units spanning the whole screen (pixels or a grid)."""

    width: int
    height: int

    def __post_init__(self) -> None:
        if self.width <= 0 or self.height <= 0:
            raise ValueError(f"frame size must be positive, got {self.width}x{self.height}")

    def to_grid(self, x: float, y: float) -> tuple[float, float]:
        return scale_to_grid(x, self.width), scale_to_grid(y, self.height)

    def from_grid(self, point: tuple[int, int]) -> tuple[int, int]:
        return grid_to_scale(point[0], self.width), grid_to_scale(point[1], self.height)


GRID_1000 = ScaledFrame(GRID, GRID)
"""The canonical grid itself (also Qwen3-VL's relative coordinates)."""

GRID_999 = ScaledFrame(999, 999)
"""Coordinates on 0–999 (both ends of the screen inclusive)."""


def screen_pixels(width: int, height: int) -> ScaledFrame:
    """Absolute pixels of a `width` × `height` screen."""
    return ScaledFrame(width, height)


@dataclass(frozen=True, slots=True)
class ResizedPixels:
    """Absolute pixels of the screenshot after Qwen2-VL `smart_resize` (Qwen2.5-VL agents)."""

    screen_width: int
    screen_height: int
    factor: int = QWEN_FACTOR
    min_pixels: int = QWEN_MIN_PIXELS
    max_pixels: int = QWEN_MAX_PIXELS
    _scaled: ScaledFrame = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        h, w = smart_resize(
            self.screen_height, self.screen_width, self.factor, self.min_pixels, self.max_pixels
        )
        object.__setattr__(self, "_scaled", ScaledFrame(w, h))

    @property
    def size(self) -> tuple[int, int]:
        """(width, height) of the resized image the model sees."""
        return self._scaled.width, self._scaled.height

    def to_grid(self, x: float, y: float) -> tuple[float, float]:
        return self._scaled.to_grid(x, y)

    def from_grid(self, point: tuple[int, int]) -> tuple[int, int]:
        return self._scaled.from_grid(point)


def grid_to_pixels(point: tuple[int, int], width: int, height: int) -> tuple[int, int]:
    """A grid point as a pixel of a `width` × `height` screen (grid 1000 maps to `width`)."""
    return screen_pixels(width, height).from_grid(point)


def pixels_to_grid(point: tuple[float, float], width: int, height: int) -> tuple[int, int]:
    """A screen pixel as the nearest grid point."""
    x, y = screen_pixels(width, height).to_grid(*point)
    return round_half_up(x), round_half_up(y)


def frame_from_spec(spec: str) -> CoordFrame:
    """A frame from a short spec: `grid` (0–1000), `grid999`, `pixels:WxH` (screen pixels),
    `resized:WxH` (Qwen2-VL smart_resize of a W×H screen)."""
    kind, _, size = spec.strip().partition(":")
    if kind == "grid" and not size:
        return GRID_1000
    if kind == "grid999" and not size:
        return GRID_999
    if kind in ("pixels", "resized"):
        try:
            width, height = (int(v) for v in size.lower().split("x"))
        except ValueError:
            raise ValueError(f"frame {spec!r}: expected {kind}:WIDTHxHEIGHT") from None
        return screen_pixels(width, height) if kind == "pixels" else ResizedPixels(width, height)
    raise ValueError(f"unknown frame {spec!r}; use grid, grid999, pixels:WxH or resized:WxH")


def element_centre(index: int | None, elements: list[dict[str, Any]]) -> tuple[float, float] | None:
    """Centre of element `index`'s grid box (0–1000 grid), None without a valid index."""
    if index is None or not 0 <= index < len(elements):
        return None
    x0, y0, x1, y1 = elements[index]["grid"]
    return (x0 + x1) / 2, (y0 + y1) / 2
