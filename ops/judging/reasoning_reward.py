"""MobileWizard's format and reasoning rewards for the four-part structured output (MobileWizard
§3.4.2); `ops.judging.action_reward` adds them to the action reward when its config turns them on.

Format ("structure") reward, from the two properties §3.4.2 checks:
  1.0  the envelope `<think>…</think><answer>…</answer>` (only whitespace around) and, inside
       `<think>`, the four parts each once, non-empty, in order, nothing else: exactly what
       `ops.actions.parse_structured` accepts as structure;
  0.5  one of the two holds (e.g. free-text thinking in a correct envelope, or the four parts
       with no `<answer>` after them);
  0.0  neither, and for text the parsers refuse (not a string, too long, a lone surrogate).

Reasoning reward: the mean over the four parts of the cosine similarity (clipped to [0, 1])
between the generated part and its annotation, under a sentence-embedding model (the paper uses
an SBERT score). Each part is read from its first complete block in `<think>`, in whatever
order; a missing or empty part scores 0 (order is the format reward's business). The model is
a callable `Embedder` handed in by the caller (training/ builds the real one), so ops/ never
loads weights.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from ops.actions import REASONING_PARTS, ReasoningParts
from ops.actions.formats.reasoning import read_layout

Embedder = Callable[[Sequence[str]], Sequence[Sequence[float]]]
"""Texts → one embedding vector per text (same length for all)."""

PARTIAL_STRUCTURE = 0.5


class EmbedderError(ValueError):
    """The embedder returned something other than one finite vector per text."""


def structure_reward(text: object) -> float:
    """MobileWizard's format reward: 1.0, 0.5 or 0.0 (see the module docstring)."""
    layout = read_layout(text)
    return PARTIAL_STRUCTURE * (layout.envelope_problem is None) + PARTIAL_STRUCTURE * (layout.sections.problem is None)


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """Cosine similarity of two equal-length vectors; 0.0 when either is all zeros."""
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return 0.0 if norm == 0 else sum(x * y for x, y in zip(a, b, strict=True)) / norm


def _checked(vectors: Sequence[Sequence[float]], n: int) -> list[list[float]]:
    try:
        rows = [[float(v) for v in vector] for vector in vectors]
    except (TypeError, ValueError, OverflowError) as exc:
        raise EmbedderError(f"embedder output is not a list of number vectors: {exc}") from None
    if len(rows) != n:
        raise EmbedderError(f"embedder returned {len(rows)} vectors for {n} texts")
    if len({len(row) for row in rows}) > 1 or not all(math.isfinite(v) for row in rows for v in row):
        raise EmbedderError("embedder returned vectors of different lengths or non-finite values")
    return rows


def part_similarities(text: object, annotation: ReasoningParts, embed: Embedder) -> tuple[float, ...]:
    """Per part (in `REASONING_PARTS` order), the clipped cosine similarity of the generated part to
    its annotation; 0.0 for a part the response lacks or leaves empty. One `embed` call at most."""
    sections = read_layout(text).sections
    generated = [sections.first(name) for name in REASONING_PARTS]
    present = [i for i, part in enumerate(generated) if part]
    if not present:
        return (0.0,) * len(REASONING_PARTS)
    targets = annotation.texts()
    texts = [generated[i] for i in present] + [targets[i] for i in present]
    vectors = _checked(embed(texts), len(texts))
    scores = [0.0] * len(REASONING_PARTS)
    for k, i in enumerate(present):
        scores[i] = min(1.0, max(0.0, cosine(vectors[k], vectors[len(present) + k])))
    return tuple(scores)


def reasoning_reward(text: object, annotation: ReasoningParts, embed: Embedder) -> float:
    """MobileWizard's reasoning reward: the mean of `part_similarities`."""
    return sum(part_similarities(text, annotation, embed)) / len(REASONING_PARTS)
