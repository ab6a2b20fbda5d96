"""Constrained decoding of typed and answered text: copied from the task or a critic hint.

The embedded base picks the field to type into, but the text it types is a plausible string
from pretraining, never the instruction's (held-out pretraining samples: typed text exact 0 of
15, while the action type is right in 13). Copying a multi-token string is an induction step
the 0.28 M model does not learn in its budget. Under this constraint, once an output has begun
a type action's text (`{"type":"type",...,"text":"`), each next token must keep the text a
prefix of one of the prompt's typable strings (`typable_texts`: what hints say to type, else
the instruction's quoted strings, else its word runs), and the string can only close (`"`)
at the end of one. An answer's text is held to what hints say to answer, when they say so.
The policy still chooses which string; anything else in the output is left free.

This is a decoding aid in the spirit of `training.inference.echo_constraint`, and an approximation of a
skill a real VLM has: text from neither the task nor a hint (e.g. typed from an answer read on
screen) cannot be typed under it, and an answer read off the screen is decoded freely.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

import torch
from transformers import LogitsProcessor, PreTrainedTokenizerBase

from ops.agent.hint_marks import hinted_texts

TEXT_START = '"text":"'
_EDGE = "\"'.,:;!?()[]"  # stripped off a span's ends: quotes and sentence punctuation
MAX_SPAN_WORDS = 8
_QUOTED = re.compile(r"(?<!\w)([\"'])(.+?)\1(?!\w)")


def quoted(text: str) -> list[str]:
    """The strings a text puts in double or single quotes (an apostrophe inside a word, as in
    "Sam's", opens nothing)."""
    return [m.group(2) for m in _QUOTED.finditer(text)]


def text_spans(texts: Iterable[str], max_words: int = MAX_SPAN_WORDS) -> frozenset[str]:
    """The strings these texts offer to copy: their quoted strings when any text quotes one (task
    sentences quote literal text), else every run of up to `max_words` consecutive words, quotes
    and punctuation stripped from its ends. Strings with a double quote or backslash inside are
    left out (the JSON would escape them)."""
    texts = list(texts)
    spans = {q.strip() for t in texts for q in quoted(t)}
    if not spans:
        for text in texts:
            words = text.split()
            for i in range(len(words)):
                for j in range(i + 1, min(len(words), i + max_words) + 1):
                    spans.add(" ".join(words[i:j]).strip(_EDGE))
    return _json_safe(spans)


def _json_safe(spans: Iterable[str]) -> frozenset[str]:
    return frozenset(s for s in spans if s and '"' not in s and "\\" not in s)


def typable_texts(instruction: str, hint_summaries: Sequence[str]) -> dict[str, frozenset[str]]:
    """Per action type, what its text may be: `type`, what the hints say to type, else a copy from
    the instruction (`text_spans`); `answer`, what the hints say to answer (absent: answers are
    free)."""
    typed, answered = hinted_texts(hint_summaries)
    out = {"type": _json_safe(typed) or text_spans([instruction])}
    if answered:
        out["answer"] = _json_safe(answered)
    return out


def token_pieces(tokenizer: PreTrainedTokenizerBase) -> list[str]:
    """The text of each vocabulary entry on its own (computed once per policy)."""
    return [tokenizer.decode([i]) for i in range(len(tokenizer))]


class _Targets:
    """One prompt's spans, each closed by the JSON quote, with all their prefixes."""

    def __init__(self, spans: Iterable[str]):
        self.closed = frozenset(f'{s}"' for s in spans)
        self.prefixes = frozenset(t[:k] for t in self.closed for k in range(len(t) + 1))

    def allows(self, text: str) -> bool:
        """True when `text` (typed text so far, maybe past its closing quote) stays on a span."""
        if text in self.prefixes:
            return True
        end = text.find('"')
        return end >= 0 and text[:end + 1] in self.closed


class TypedTextConstraint(LogitsProcessor):
    """Masks, per batch row, every next token that would take a type (or answer) action's text
    off that row's strings; rows without strings for the action, and all other text, are free."""

    def __init__(self, texts: Sequence[dict[str, Iterable[str]]], prompt_length: int,
                 tokenizer: PreTrainedTokenizerBase, pieces: Sequence[str]):
        self.targets = [{f'"type":"{kind}"': _Targets(spans) for kind, spans in row.items()} for row in texts]
        self.prompt_length = prompt_length
        self.tokenizer = tokenizer
        self.pieces = pieces
        self.quoted = [i for i, p in enumerate(pieces) if '"' in p]  # only these can open the text

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        for b, by_kind in enumerate(self.targets):
            if not by_kind:
                continue
            generated = self.tokenizer.decode(input_ids[b, self.prompt_length:], skip_special_tokens=True)
            targets = next((t for start, t in by_kind.items() if start in generated), None)
            if targets is None or not targets.closed:
                continue
            opened = generated.find(TEXT_START)
            if opened >= 0:
                typed = generated[opened + len(TEXT_START):]
                if '"' in typed:  # the text is closed: the rest of the JSON is free
                    continue
                banned = [i for i, p in enumerate(self.pieces) if not targets.allows(typed + p)]
            else:
                banned = []
                for i in self.quoted:
                    text = generated + self.pieces[i]
                    start = text.find(TEXT_START)
                    if start >= 0 and not targets.allows(text[start + len(TEXT_START):]):
                        banned.append(i)
            if len(banned) < len(self.pieces):  # a string the vocabulary cannot spell is no reason to stop
                scores[b, banned] = -float("inf")
        return scores
