"""The element-list policy's constrained decoding for one tokenizer, as rollouts decode: an echoed row
is one of the screen's rows (`echo_constraint`), typed text one of the strings the instruction or the
hints offer (`typing_constraint`). Shared by the local policy and the measures that score a checkpoint
the way rollouts decode it."""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property

from transformers import LogitsProcessor, PreTrainedTokenizerBase

from training.inference.echo_constraint import RowEchoConstraint, dash_tokens, row_token_sequences
from training.inference.typing_constraint import TypedTextConstraint, token_pieces


class DecodingConstraints:
    """What the tokenizer's vocabulary says (the tokens that begin an echo, each token's text), read
    once, and the logits processors of one generation batch from its prompts' rows and typable texts."""

    def __init__(self, tokenizer: PreTrainedTokenizerBase, *, echo: bool = False, typing: bool = False):
        """`echo` / `typing`: read the vocabulary for that constraint now (at a policy's load) rather than
        at its first batch."""
        self.tokenizer = tokenizer
        if echo:
            _ = self.dashes
        if typing:
            _ = self.pieces

    @cached_property
    def dashes(self) -> frozenset[int]:
        return dash_tokens(self.tokenizer)

    @cached_property
    def pieces(self) -> list[str]:
        return token_pieces(self.tokenizer)

    def processors(self, prompt_length: int, rows: Sequence[Sequence[str]] | None = None,
                   typable: Sequence[dict[str, frozenset[str]]] | None = None) -> list[LogitsProcessor]:
        """Processors for a batch whose prompts are `prompt_length` tokens (padded): per prompt, the rows
        an echo may name and the texts a type (or answer) action may carry; a part given as None is free."""
        out: list[LogitsProcessor] = []
        if rows is not None:
            lines = [row_token_sequences(self.tokenizer, r) for r in rows]
            out.append(RowEchoConstraint(lines, prompt_length, self.dashes))
        if typable is not None:
            out.append(TypedTextConstraint(typable, prompt_length, self.tokenizer, self.pieces))
        return out
