"""Small deterministic PNG images for tests."""

from __future__ import annotations

import io

from PIL import Image


def solid_png(width: int = 36, height: int = 64, color: tuple[int, int, int] = (30, 120, 200)) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (width, height), color).save(buffer, format="PNG")
    return buffer.getvalue()
