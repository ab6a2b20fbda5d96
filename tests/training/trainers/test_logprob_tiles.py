"""TRL's log-probability tiles sized to the vocabulary: same log-probabilities, setting restored."""

from __future__ import annotations

import pytest
import torch
import trl.trainer.utils as trl_utils
from torch import nn
from trl.trainer.utils import add_fused_lm_head

from training.models.tiny import build_tiny_model, load_tiny
from training.trainers.logprob_tiles import tiles_fitting


class _Head(nn.Module):
    def __init__(self, vocab_size: int):
        super().__init__()
        self.head = nn.Linear(4, vocab_size, bias=False)

    def get_output_embeddings(self) -> nn.Linear:
        return self.head


def test_fitting_tiles_give_the_same_log_probabilities(tmp_path):
    model, _ = load_tiny(build_tiny_model(tmp_path / "tiny", vocab_size=1024))
    add_fused_lm_head(model, outputs=("log_probs", "entropy"))
    ids = torch.randint(0, 1024, (3, 40), generator=torch.Generator().manual_seed(0))

    def scored():
        with torch.no_grad():
            out = model(input_ids=ids, labels=ids, fused_lm_head=True)
        return out.log_probs, out.entropy

    wide = scored()
    assert trl_utils._CHUNKED_LOGPROB_CHUNK_SIZE == 32768  # the TRL width this module works around
    with tiles_fitting(model):
        assert trl_utils._CHUNKED_LOGPROB_CHUNK_SIZE == 1024
        fitted = scored()
    assert torch.equal(wide[0], fitted[0]) and torch.equal(wide[1], fitted[1])
    with tiles_fitting(_Head(256)):  # several tiles per row: the online log-sum-exp, equal up to rounding
        narrow = scored()
    torch.testing.assert_close(wide[0], narrow[0])


def test_the_width_is_restored_also_after_an_error():
    before = trl_utils._CHUNKED_LOGPROB_CHUNK_SIZE
    with pytest.raises(RuntimeError), tiles_fitting(_Head(64)):
        raise RuntimeError("training failed")
    assert trl_utils._CHUNKED_LOGPROB_CHUNK_SIZE == before
    with tiles_fitting(_Head(151_936)):  # a large vocabulary keeps TRL's width
        assert trl_utils._CHUNKED_LOGPROB_CHUNK_SIZE == before
