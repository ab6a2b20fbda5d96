"""φ(o) of UI-Voyager §3.3.1: crop the status bar, shrink to a grayscale thumbnail; plus the mean hash."""

from __future__ import annotations

import io

import numpy as np
from PIL import Image, UnidentifiedImageError

from training.methods.grsd.forks.model import ForkConfig, ForkInputError, Screenshot


def to_image(screenshot: Screenshot, header_only: bool = False) -> Image.Image:
    """Decode PNG/JPEG bytes (or, with `header_only`, just read their size) or wrap a uint8 array."""
    if isinstance(screenshot, (bytes, bytearray, memoryview)):
        try:
            image = Image.open(io.BytesIO(screenshot))
            if not header_only:
                image.load()
        except (UnidentifiedImageError, OSError) as exc:
            raise ForkInputError(f"screenshot bytes are not a readable image: {exc}") from None
        return image
    if isinstance(screenshot, np.ndarray):
        if screenshot.dtype != np.uint8:
            raise ForkInputError(f"screenshot array must be uint8, got {screenshot.dtype}")
        if screenshot.ndim == 2:
            mode = "L"
        elif screenshot.ndim == 3 and screenshot.shape[2] in (3, 4):
            mode = "RGB" if screenshot.shape[2] == 3 else "RGBA"
        else:
            raise ForkInputError(f"screenshot array must be (H, W[, 3|4]), got {screenshot.shape}")
        array = np.ascontiguousarray(screenshot)
        height, width = array.shape[:2]
        return Image.frombuffer(mode, (width, height), array, "raw", mode, 0, 1)
    raise ForkInputError(f"screenshot must be image bytes or a numpy array, got {type(screenshot).__name__}")


def thumbnail(image: Image.Image, config: ForkConfig) -> np.ndarray:
    """Status-bar crop, area downscale and grayscale: the φ(·) of UI-Voyager eq. 3, as float64.

    Pillow's `reduce` (integer box average) does most of the shrinking on the full frame,
    so only a small image is resampled to the exact thumbnail size; area averaging keeps
    thin text strokes as gray levels instead of aliasing them away.
    """
    width, height = image.size
    top = int(height * config.status_bar_ratio)
    crop_w, crop_h = width, height - top
    tw, th = config.thumb_width, config.thumb_height
    if crop_w < tw or crop_h < th:
        raise ForkInputError(f"screenshot {width}x{height} is smaller than the {tw}x{th} thumbnail")
    if image.mode not in ("RGB", "L"):
        image = image.convert("RGB")
    factor = max(1, min(crop_w // tw, crop_h // th))
    small = image.reduce(factor, box=(0, top, width, height)) if factor > 1 else image.crop((0, top, width, height))
    if small.size != (tw, th):
        small = small.resize((tw, th), Image.Resampling.BOX)
    return np.asarray(small.convert("L"), dtype=np.float64)


def mean_hash(thumbs: np.ndarray, hash_size: int) -> np.ndarray:
    """aHash of each thumbnail in a (n, H, W) stack: (n, hash_size²) bools, cell mean >= image mean."""
    _, height, width = thumbs.shape
    # Area-average onto the hash grid with bin-averaging matrices (sides need not divide evenly).
    rows = _bin_matrix(height, hash_size)
    cols = _bin_matrix(width, hash_size)
    cells = rows @ thumbs @ cols.T
    flat = cells.reshape(len(thumbs), -1)
    return flat >= flat.mean(axis=1, keepdims=True)


def _bin_matrix(length: int, bins: int) -> np.ndarray:
    """(bins, length) matrix whose row b averages the pixels falling in bin b."""
    index = np.minimum(np.arange(length) * bins // length, bins - 1)
    matrix = (index[None, :] == np.arange(bins)[:, None]).astype(np.float64)
    return matrix / matrix.sum(axis=1, keepdims=True)


def hash_similarity(a: np.ndarray, b: np.ndarray) -> float:
    """Fraction of equal bits between two mean hashes (UI-Voyager's pre-filter compares it to 0.80)."""
    return float(np.count_nonzero(a == b)) / a.size
