"""A least-recently-used map bounded by a byte budget, for the render caches."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, Callable

from PIL import Image


class ByteLRU(OrderedDict):
    """LRU map bounded by a byte budget (`size_of(value)` bytes per entry). `on_evict(value)` is
    called for each entry pushed out by a new one."""

    def __init__(self, budget: int, size_of: Callable[[Any], int], on_evict: Callable[[Any], None] | None = None):
        super().__init__()
        self.budget, self.size_of, self.used, self.on_evict = budget, size_of, 0, on_evict

    def get(self, key, default=None):
        try:
            self.move_to_end(key)
        except KeyError:
            return default
        return self[key]

    def put(self, key, value) -> None:
        if key in self or self.budget <= 0:
            return
        self[key] = value
        self.used += self.size_of(value)
        while self.used > self.budget:
            _, old = self.popitem(last=False)
            self.used -= self.size_of(old)
            if self.on_evict is not None:
                self.on_evict(old)

    def discard(self, key) -> None:
        if key in self:
            self.used -= self.size_of(self.pop(key))

    def clear(self) -> None:
        super().clear()
        self.used = 0


def entry_bytes(value) -> int:
    """Memory held by a render cache entry: an image, a PNG, a band reference or an encoded band."""
    if isinstance(value, Image.Image):  # Pillow stores RGB as 4 bytes per pixel
        return value.size[0] * value.size[1] * 4 + 200
    if isinstance(value, bytes):  # a whole PNG
        return len(value) + 100
    if isinstance(value[0], Image.Image):  # (whole screen, top, bottom): a band not cut out yet
        return value[0].size[0] * (value[2] - value[1]) * 4 + 200
    return len(value[0]) + 120  # (IDAT chunk, adler32, raw length) of a band
