"""Label-echo prompt/answer format for the embedded base policy (no torch at import time).

Each element row puts its index right after its label, the index being ONE added token
(" #3"), and the policy first echoes the row it picks, then emits the canonical action JSON:

    prompt rows:  - Wi-Fi #1            answer:  - Bluetooth #2
                  - Bluetooth #2                 {"type":"click","args":{"element":2}}
                  Task: Tap Bluetooth

Echoing the label is a copy from the instruction, which tiny models learn quickly; the index
after it is an induction step ("label #k … label → #k"). Measured on the 0.28 M-parameter
model after 2–4 k steps (/tmp/research2/LOG.md): the echoed label is right 71–74 % of the
time, the echoed index only at chance (15–23 %, chance 19 %; the induction step did not form
in that budget). `parse_output` therefore lets the echoed label decide the element when it
names exactly one row: held-out click accuracy through this parser 0.76 vs chance 0.19.

Actions without an element (back, scroll, type without focus, ...) are answered with the JSON
alone. Tokenizers must know the index tokens: call `add_index_tokens` once when building the
model, before training.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ops.actions.model import Action, ActionError, ParseFailure, ParseResult
from training.policy_prompt import TASK_PREFIX, render_action

if TYPE_CHECKING:
    from transformers import PreTrainedModel, PreTrainedTokenizerBase

ROW_PREFIX = "- "
INDEX_MARK = " #"
INDEX_TOKEN_COUNT = 64  # rows with a larger index still work, as " #6" + "4" (two tokens)
FORMAT_NAME = "label_echo"


def index_tokens(count: int = INDEX_TOKEN_COUNT) -> list[str]:
    """The added single-token index markers `" #0" … " #<count-1>"`."""
    return [f"{INDEX_MARK}{i}" for i in range(count)]


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


def _clean(label: str) -> str:
    return " ".join(label.split())


def render_row(index: int, label: str) -> str:
    """One element row, `- <label> #<index>`; whitespace runs in the label become one space."""
    return f"{ROW_PREFIX}{_clean(label)}{INDEX_MARK}{index}"


def render_rows(labels: Sequence[str]) -> str:
    """All element rows, one per line, in list order (the row's index is its position)."""
    return "\n".join(render_row(i, label) for i, label in enumerate(labels))


def prompt_text(labels: Sequence[str], instruction: str) -> str:
    """The text part of the user message: element rows, then the instruction."""
    task = TASK_PREFIX + " ".join(instruction.split())
    return f"{render_rows(labels)}\n{task}" if labels else task


def render_target(action: Action, labels: Sequence[str]) -> str:
    """The completion: the chosen row echoed, then the compact canonical JSON."""
    if action.element is None:
        return render_action(action)
    if not 0 <= action.element < len(labels):
        raise ValueError(f"action element {action.element} outside the {len(labels)}-element list")
    return f"{render_row(action.element, labels[action.element])}\n{render_action(action)}"


def _failure(reason: str, text: str) -> ParseFailure:
    return ParseFailure(reason=reason, raw=text, format=FORMAT_NAME)


def _resolve(echo_label: str, echo_index: int | None, json_element: int,
             labels: Sequence[str]) -> int:
    """The element the answer means (see module docstring for the measured reason).

    1. the echoed index, if the echoed row is consistent (its label is that row's label);
    2. else the only row carrying the echoed label;
    3. else (label unknown or shared by several rows) the JSON element as emitted.
    """
    matches = [i for i, label in enumerate(labels) if _clean(label) == echo_label]
    if echo_index in matches:
        return echo_index
    if len(matches) == 1:
        return matches[0]
    return json_element


def parse_output(text: str, labels: Sequence[str]) -> ParseResult:
    """Parse a label-echo answer into an `Action` whose element is resolved against `labels`.

    Never raises: malformed JSON, a missing or unexpected echo line, or an element outside
    the list give a `ParseFailure` naming the problem.
    """
    body = text.strip()
    echo: str | None = None
    if body.startswith(ROW_PREFIX.strip()):
        echo, _, body = body.partition("\n")
        body = body.strip()
    try:
        action = Action.from_json(body)
    except (ActionError, RecursionError) as exc:
        return _failure(f"answer JSON: {exc}", text)
    if action.element is None:
        if echo is not None:
            return _failure("echoed a row for an action without an element", text)
        return action
    if echo is None:
        return _failure("element action without the echoed row", text)
    row = echo.removeprefix(ROW_PREFIX.strip()).strip()
    echo_label, mark, index_text = row.rpartition(INDEX_MARK.strip())
    if not mark:
        return _failure(f"echoed row {echo!r} has no '{INDEX_MARK.strip()}<index>'", text)
    echo_index = int(index_text) if index_text.isascii() and index_text.isdigit() else None
    element = _resolve(_clean(echo_label), echo_index, action.element, labels)
    if element >= len(labels):
        return _failure(f"element {element} outside the {len(labels)}-element list", text)
    return dataclasses.replace(action, element=element)
