"""TRL's chunked log-probability tiles, sized to the model's vocabulary.

TRL's GRPOTrainer scores tokens with a fused LM head that projects `[4096 tokens, chunk]` tiles,
`chunk` a module constant of 32,768 columns chosen for large-vocabulary models. Each forward and
backward call allocates one such buffer: 512 MB in float32. On CPU with the tiny model's
1,024-token vocabulary the tile only ever uses 1,024 of those columns, yet touching a fresh
buffer of that size cost about as much as the rest of a HiFPO step (measured: 20 steps took
55.7 s, and 29.2 s with the tile as wide as the vocabulary). The tile width does not change the
arithmetic when one tile already spans the vocabulary, so the results are the same; models with
a vocabulary of 32,768 or more keep TRL's width.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

import trl.trainer.utils as trl_utils
from transformers import Trainer

# TRL reads this module global on every fused forward (trl.trainer.utils.add_fused_lm_head, TRL 1.16)
_TILE_WIDTH = "_CHUNKED_LOGPROB_CHUNK_SIZE"

T = TypeVar("T")


@contextmanager
def tiles_fitting(vocab_size: int) -> Iterator[None]:
    """Within the block, TRL's log-probability tiles are at most `vocab_size` columns wide."""
    before = getattr(trl_utils, _TILE_WIDTH)
    setattr(trl_utils, _TILE_WIDTH, min(before, vocab_size))
    try:
        yield
    finally:
        setattr(trl_utils, _TILE_WIDTH, before)


def with_fitting_tiles(train: Callable[[Trainer], T]) -> Callable[[Trainer], T]:
    """`train(trainer)` with tiles sized to the trainer's model vocabulary."""
    def run(trainer: Trainer) -> T:
        with tiles_fitting(trainer.model.get_output_embeddings().weight.shape[0]):
            return train(trainer)
    return run
