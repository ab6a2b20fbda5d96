"""Tokenizer support of the label-echo format (`ops.actions.formats.label_echo`): the row
indices " #0" … " #63" are added as single tokens."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ops.actions.formats.label_echo import INDEX_TOKEN_COUNT, index_tokens

if TYPE_CHECKING:
    from transformers import PreTrainedModel, PreTrainedTokenizerBase


def add_index_tokens(tokenizer: PreTrainedTokenizerBase, model: PreTrainedModel | None = None,
                     count: int = INDEX_TOKEN_COUNT) -> int:
    """Add the index markers to `tokenizer`, resize `model`'s embeddings; returns how many are new.

    Added tokens match longest-first, so " #12" is one token, not " #1" + "2".
    """
    from tokenizers import AddedToken

    added = tokenizer.add_tokens([AddedToken(t, normalized=False) for t in index_tokens(count)])
    if model is not None and added:
        model.resize_token_embeddings(len(tokenizer), mean_resizing=False)
    return added
