"""A tiny deterministic sentence embedder for reasoning-reward tests: hashed bag of words."""

from __future__ import annotations

import zlib
from collections.abc import Sequence

from ops.judging.action_reward import tokens


class HashingEmbedder:
    """Each word token adds 1 to one of `dims` slots (by CRC32), so texts with the same words have
    cosine 1 and texts with no word in common (barring collisions) have cosine 0. Records its calls."""

    def __init__(self, dims: int = 256) -> None:
        self.dims = dims
        self.calls: list[list[str]] = []

    def __call__(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls.append(list(texts))
        vectors = []
        for text in texts:
            vector = [0.0] * self.dims
            for token in tokens(text):
                vector[zlib.crc32(token.encode()) % self.dims] += 1.0
            vectors.append(vector)
        return vectors
