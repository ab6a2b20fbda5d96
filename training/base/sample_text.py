"""A grounding sample in text, as the element-list policy reads and answers it: the prompt's user
text, the label-echo answer, and the tokenizer's corpus drawn from a sample stream. Free of torch,
so samplers and their checks (the world recipe's target guard, a stream's determinism across
processes) run without loading the training stack."""

from __future__ import annotations

import random
from collections.abc import Sequence

from ops.actions.formats import label_echo
from ops.agent.hint_marks import hinted_actions, hinted_rows
from ops.agent.policy_prompt import element_context
from training.base.grounding_data import GroundingSample, SampleFn, critic_view


def prompt_text(sample: GroundingSample) -> str:
    """The user text of a sample's prompt: hints and Done lines, element rows (those a hint
    names on the sample's screen marked, as in rollouts), instruction."""
    context = element_context(sample.hints, sample.history)
    return label_echo.prompt_text([e.label for e in sample.elements], sample.instruction, context,
                                  hinted_rows(sample.hints, sample.screen, critic_view(sample.elements)),
                                  hinted_actions(sample.hints, sample.screen))


def sample_rows(sample: GroundingSample) -> list[str]:
    """The element rows of a sample's prompt as the policy echoes them (no hint marks)."""
    return [label_echo.render_row(i, e.label) for i, e in enumerate(sample.elements)]


def answer_text(sample: GroundingSample) -> str:
    """The label-echo answer the sample teaches."""
    return label_echo.render_target(sample.target, [e.label for e in sample.elements])


def tokenizer_corpus(sample_fn: SampleFn, n: int, seed: int, extra: Sequence[str] = ()) -> list[str]:
    """`extra`, then the prompt and answer texts of `n` samples drawn with `random.Random(seed)`."""
    rng = random.Random(seed)
    corpus = list(extra)
    for _ in range(n):
        s = sample_fn(rng, False)
        corpus.append(prompt_text(s) + "\n" + answer_text(s))
    return corpus
