"""Label-echo prompt/answer format of the embedded tiny policy, and its action format.

Each element row puts its index right after its label, and the policy first echoes the row it
picks, then emits the compact canonical action JSON:

    prompt text:  - Wi-Fi #0            answer:  - Bluetooth #1
                  - Bluetooth #1                 {"type":"click","args":{"element":1}}
                  Task: Tap Bluetooth

Echoing the label is a copy from the instruction, which tiny models learn quickly; the index
after it is an induction step they did not learn in the budget we measured (0.28 M-parameter
model, 2–4 k steps: echoed label right 71–74 %, echoed index at chance 15–23 % vs 19 %). So
`parse_output` lets the echoed label pick the element when it names exactly one row: held-out
click accuracy 0.76 vs chance 0.19 (/tmp/research2/LOG.md of that session; reproduce with
benchmarks/base_policy_learnability.py). Actions without an element are answered with the
JSON alone. Tokenizers need the index tokens (`training.base.induction_format.add_index_tokens`).
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Collection, Sequence

from ops.actions.coords import CoordFrame
from ops.actions.excerpt import clipped, excerpt
from ops.actions.formats.base import ActionFormat, ParsedOutput, UnsupportedAction, parse_guarded
from phonesim.actions import Action, ActionError, ParseFailure, ParseResult

TASK_PREFIX = "Task: "
ROW_PREFIX = "- "
INDEX_MARK = " #"
HINT_MARK = " (hint)"  # after the index of a row a critic hint names (ops.agent.hint_marks)
HINT_PREFIX = "Hint: "  # the last line, after the task, names the marked rows again
INDEX_TOKEN_COUNT = 64  # rows with a larger index still work, as " #6" + "4" (two tokens)
MAX_INDEX_DIGITS = 6  # an echoed index longer than this names no row of any screen
FORMAT_NAME = "label_echo"
_HINTED_ROW = re.compile(rf"^({re.escape(ROW_PREFIX)}.*{re.escape(INDEX_MARK)}\d+){re.escape(HINT_MARK)}$", re.M)
_HINT_LINE = re.compile(rf"\n{re.escape(HINT_PREFIX)}[^\n]*\Z")


def index_tokens(count: int = INDEX_TOKEN_COUNT) -> list[str]:
    """The single-token index markers `" #0" … " #<count-1>"` the tokenizer must know."""
    return [f"{INDEX_MARK}{i}" for i in range(count)]


def _clean(label: str) -> str:
    return " ".join(label.split())


def render_action(action: Action) -> str:
    """The compact canonical JSON the policy emits."""
    return json.dumps(action.to_dict(), ensure_ascii=False, separators=(",", ":"))


def render_row(index: int, label: str) -> str:
    """One element row, `- <label> #<index>`; whitespace runs in the label become one space."""
    return f"{ROW_PREFIX}{_clean(label)}{INDEX_MARK}{index}"


def render_rows(labels: Sequence[str], hinted: Collection[int] = ()) -> str:
    """The element rows; rows in `hinted` end with the hint mark, after the index, so that the
    row the policy echoes never carries it."""
    return "\n".join(render_row(i, label) + (HINT_MARK if i in hinted else "") for i, label in enumerate(labels))


def strip_hint_marks(text: str) -> str:
    """`text` with the hint mark taken off every row that carries one and the hint line removed."""
    return _HINT_LINE.sub("", _HINTED_ROW.sub(r"\1", text))


def prompt_text(labels: Sequence[str], instruction: str, context: Sequence[str] = (),
                hinted: Collection[int] = (), hint_actions: Sequence[str] = ()) -> str:
    """The user text: optional context lines (hints, progress), element rows (those in `hinted`
    marked), the instruction, and, when rows are marked or a hint names a step without an
    element on this screen (`hint_actions`, e.g. "swiping up"), a last line naming them.

    The tiny policy finds the row the last line names (it learns that from "Tap X"); a hint
    only on the rows above was followed 0.35 of the time after pretraining, so the marked
    rows' labels are repeated where that skill looks.
    """
    task = TASK_PREFIX + " ".join(instruction.split())
    parts = [*context, render_rows(labels, hinted)] if labels else [*context]
    named = [_clean(labels[i]) for i in sorted(hinted) if 0 <= i < len(labels)] + list(hint_actions)
    return "\n".join([*parts, task, *([HINT_PREFIX + " / ".join(named)] if named else [])])


def render_target(action: Action, labels: Sequence[str]) -> str:
    """The completion: the chosen row echoed, then the compact canonical JSON."""
    if action.element is None:
        return render_action(action)
    if not 0 <= action.element < len(labels):
        raise ValueError(f"action element {action.element} outside the {len(labels)}-element list")
    return f"{render_row(action.element, labels[action.element])}\n{render_action(action)}"


def _failure(reason: str, text: str) -> ParseFailure:
    return ParseFailure(reason=clipped(reason), raw=text, format=FORMAT_NAME)


def split_echo(text: str) -> tuple[str | None, str]:
    """(echoed row or None, the JSON body) of an answer."""
    body = text.strip()
    if body.startswith(ROW_PREFIX.strip()):
        echo, _, body = body.partition("\n")
        return echo.strip(), body.strip()
    return None, body


def _resolve(echo_label: str, echo_index: int | None, json_element: int, labels: Sequence[str]) -> int:
    """1. the echoed index if that row carries the echoed label; 2. else the only row with the
    echoed label; 3. else (label unknown or shared) the JSON element as emitted."""
    matches = [i for i, label in enumerate(labels) if _clean(label) == echo_label]
    if echo_index in matches:
        return echo_index
    if len(matches) == 1:
        return matches[0]
    return json_element


def parse_labelled(text: str, labels: Sequence[str] | None) -> ParsedOutput:
    """The answer's action, its element resolved against `labels` (None: the JSON index
    stands), with the echoed row as conclusion.

    Never raises: malformed JSON, a missing or unexpected echo line, an element outside the
    list, or anything the action parsers' shared contract rejects (`base.parse_guarded`) give
    a `ParseFailure` naming the problem.
    """
    return parse_guarded(FORMAT_NAME, text, lambda checked: _parse(checked, labels))


def parse_output(text: str, labels: Sequence[str] | None) -> ParseResult:
    """The action of `parse_labelled`, or its `ParseFailure`."""
    return parse_labelled(text, labels).action


def _parse(text: str, labels: Sequence[str] | None) -> ParsedOutput:
    action = _action(text, labels)
    return ParsedOutput(action, conclusion=split_echo(text)[0], envelope_ok=not isinstance(action, ParseFailure))


def _action(text: str, labels: Sequence[str] | None) -> ParseResult:
    echo, body = split_echo(text)
    try:
        action = Action.from_json(body)
    except ActionError as exc:
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
        return _failure(f"echoed row {excerpt(echo)} has no '{INDEX_MARK.strip()}<index>'", text)
    if labels is None:
        return action
    readable = index_text.isascii() and index_text.isdigit() and len(index_text) <= MAX_INDEX_DIGITS
    echo_index = int(index_text) if readable else None  # an unreadable index leaves the label to decide
    element = _resolve(_clean(echo_label), echo_index, action.element, labels)
    if element >= len(labels):
        return _failure(f"element {element} outside the {len(labels)}-element list", text)
    return dataclasses.replace(action, element=element)


# As an action format (`parse(text, "label_echo")`) the element list is unknown, so the emitted
# JSON index stands; rollouts resolve the echoed label against the observation
# (ops.agent.policy.PromptedPolicy.parse) and rewards score the index.
def _render(action: Action, frame: CoordFrame, thinking: str | None, conclusion: str | None) -> str:
    if action.element is not None:
        raise UnsupportedAction("label_echo: an element action needs the element list (render_target)")
    return render_action(action)


FORMAT = ActionFormat(name=FORMAT_NAME, parse_fn=lambda text, frame: _parse(text, None), render_fn=_render,
                      supports=lambda action: action.element is None)
