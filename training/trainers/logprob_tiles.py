"""TRL's chunked log-probability tiles, sized to the model's vocabulary.

TRL's GRPO and SFT trainers score tokens with a fused LM head that projects `[4096 tokens, chunk]`
tiles, `chunk` a module constant of 32,768 columns chosen for large-vocabulary models. Each forward
and backward call allocates one such buffer: 512 MB in float32. With the tiny model's 1,024-token
vocabulary a tile only ever uses 1,024 of those columns, yet on CPU touching a fresh buffer that
size cost about as much as the rest of a training step (measured on run A's step data, one core:
20 HiFPO steps 55.7 s, 100 SFT steps 48.5 s; with the tile as wide as the vocabulary 29.2 s and
22.4 s). When one tile already spans the vocabulary its width does not change the arithmetic, so
the weights are the same (six HiFPO steps compared bitwise); a vocabulary of 32,768 or more keeps
TRL's width. Used by every trainer here (`runs.train_and_save`, AdaGRPO's updates).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import trl.trainer.utils as trl_utils
from torch import nn

# TRL reads this module global on every fused forward (trl.trainer.utils.add_fused_lm_head, TRL 1.16)
_TILE_WIDTH = "_CHUNKED_LOGPROB_CHUNK_SIZE"


@contextmanager
def tiles_fitting(model: nn.Module) -> Iterator[None]:
    """Within the block, TRL's log-probability tiles are at most as wide as `model`'s vocabulary
    (its output embedding's rows); the width is restored afterwards."""
    before = getattr(trl_utils, _TILE_WIDTH)
    setattr(trl_utils, _TILE_WIDTH, min(before, model.get_output_embeddings().weight.shape[0]))
    try:
        yield
    finally:
        setattr(trl_utils, _TILE_WIDTH, before)
