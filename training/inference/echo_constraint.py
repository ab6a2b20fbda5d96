"""Constrained decoding of the label-echo line: an echoed row must be one of the screen's rows.

The embedded policy answers element actions with the row it picks (`- <label> #<index>`), then
the JSON (ops.actions.formats.label_echo). Free decoding often echoes a row the screen does
not have: in the curriculum rollouts of a default run, 3,352 of 4,476 echoes (0.75; at the
launcher 0.46), e.g. `- You: Add alarm #2` on the launcher. The parser then falls back to the
JSON index, which the tiny policy picks at chance. Under this constraint an output that starts
a row can only continue along the screen's rows up to the newline, so the label and index it
echoes name an element; an output that starts with anything else (the JSON of an action
without an element) is left free.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from transformers import LogitsProcessor, PreTrainedTokenizerBase

from ops.actions.formats.label_echo import ROW_PREFIX


def row_token_sequences(tokenizer: PreTrainedTokenizerBase, rows: Sequence[str]) -> list[list[int]]:
    """Token ids of each row line as the policy emits it (the row, then the newline)."""
    return [tokenizer(f"{row}\n", add_special_tokens=False).input_ids for row in rows]


def dash_tokens(tokenizer: PreTrainedTokenizerBase) -> frozenset[int]:
    """Ids of the vocabulary entries that begin a row echo (decode to text starting with '-')."""
    start = ROW_PREFIX.strip()
    return frozenset(i for i in range(len(tokenizer)) if tokenizer.decode([i]).startswith(start))


class RowEchoConstraint(LogitsProcessor):
    """Masks, per batch row, every next token that would leave the screen's row lines once an
    echo has begun; at the first step, tokens that begin a dash but no row line."""

    def __init__(self, rows: Sequence[Sequence[Sequence[int]]], prompt_length: int, dashes: frozenset[int]):
        self.prompt_length = prompt_length
        # per batch row: generated prefix -> the tokens that continue it along some row line
        self.next_tokens: list[dict[tuple[int, ...], set[int]]] = []
        for lines in rows:
            trie: dict[tuple[int, ...], set[int]] = {}
            for line in lines:
                for k in range(len(line)):
                    trie.setdefault(tuple(line[:k]), set()).add(line[k])
            self.next_tokens.append(trie)
        self.dashes = dashes

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        step = input_ids.shape[1] - self.prompt_length
        for b, trie in enumerate(self.next_tokens):
            if not trie:
                continue
            generated = tuple(input_ids[b, self.prompt_length:].tolist())
            if step == 0:
                banned = list(self.dashes - trie[()])
                scores[b, banned] = -float("inf")
                continue
            allowed = trie.get(generated)
            if allowed is None:  # no echo begun, or the row line is complete: free
                continue
            keep = scores[b, list(allowed)].clone()
            scores[b] = -float("inf")
            scores[b, list(allowed)] = keep
        return scores
