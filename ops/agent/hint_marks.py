"""Corrective-hint summaries that name an element, and the element-list rows they mark.

The programmatic critic writes a one-line summary per failed attempt, `On '<screen>', <fix>.`,
where the fix names the element to use (`click 'Settings'`, `typing 'Ana' into 'Name'`). The
element-list prompt of the embedded tiny policy marks that element's row (`- Settings #10
(hint)`) on that screen: reading a name from a hint line above the rows and finding it below
was measured unlearnable at 0.28 M parameters (held-out hint-following 0.075, chance 0.12);
with the mark on the row it is 0.35 (the same mark before the label measured 0.125), and with
the marked row's label repeated on a last line after the instruction (`Hint: Settings`,
`label_echo.prompt_text`) 0.77. A step without an element on this screen (`swiping up`,
`typing '15'` into the focused field, `answering '13:30'`, `finish the task`) marks no row; its
words go on that last line instead (`hinted_actions`). Summaries in any other form (free
LLM-critic text) mark nothing; their text is still shown.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from ops.actions import Action, ActionType

_SUMMARY = re.compile(r"On '(?P<screen>[^']*)', (?:click|long press|typing '.*' into) '(?P<name>.+)'\.", re.S)
_NEXT_SENTENCE = re.compile(r"(?<=\.) (?=On '[^']*', )")  # between the steps of a plan hint
_STEP = re.compile(r"On '(?P<screen>[^']*)', (?P<fix>.+)\.", re.S)
_TYPED = re.compile(r"typing '(?P<text>.*?)'(?: into '[^']*')?", re.S)
_ANSWERED = re.compile(r"answering '(?P<text>.*)'", re.S)
MAX_SUMMARY_CHARS = 4000  # a plan of 40 steps on long screen names; a critic's hint summary is one sentence


def corrective_summary(screen: str, better: str | None, did: str) -> str:
    """The one-line hint: what to do on `screen` when that is known, else what to avoid there.

    A known fix names only the right element: the wrong one stays in the hint's `what_to_avoid`.
    A line naming both ("X instead of Y") was measured unlearnable for the embedded tiny policy
    (held-out hint-following 0.15 vs chance 0.12 after 6000 pretraining steps).
    """
    return f"On '{screen}', {better}." if better else f"Avoid {did} on '{screen}'."


def plan_summary(screen: str, fixes: Sequence[tuple[str, str]], did: str) -> str:
    """The hint line of a plan: one `corrective_summary` sentence per (screen, fix) step from
    the wrong step on, in order; with no known fix, what to avoid on `screen`."""
    if not fixes:
        return corrective_summary(screen, None, did)
    return " ".join(corrective_summary(on, fix, did) for on, fix in fixes)


def _sentences(summary: str) -> list[str]:
    """The steps of a plan summary; none for a summary longer than any plan (`MAX_SUMMARY_CHARS`), which
    is free text: the patterns above backtrack over a long sentence quadratically."""
    return [] if len(summary) > MAX_SUMMARY_CHARS else _NEXT_SENTENCE.split(summary.strip())


def hint_targets(summary: str) -> list[tuple[str, str]]:
    """(screen, element name) of every step of a `plan_summary` whose fix names an element;
    steps that name none (press back, finish the task) and free text give nothing."""
    return [(m["screen"], m["name"]) for s in _sentences(summary) if (m := _SUMMARY.fullmatch(s))]


def _steps(summary: str) -> list[re.Match]:
    return [m for s in _sentences(summary) if (m := _STEP.fullmatch(s))]


def hint_actions(summary: str) -> list[tuple[str, str]]:
    """(screen, fix in words) of every step of a `plan_summary` whose fix names no element."""
    return [(m["screen"], m["fix"]) for m in _steps(summary) if not _SUMMARY.fullmatch(m[0])]


def hinted_actions(summaries: Sequence[str], screen: str) -> list[str]:
    """The element-free fixes the hint summaries give for `screen`, in order, without repeats."""
    return list(dict.fromkeys(fix for s in summaries for on, fix in hint_actions(s) if on == screen))


def hinted_texts(summaries: Sequence[str]) -> tuple[list[str], list[str]]:
    """(texts the hints type, texts they answer), from steps like `typing 'Ana' into 'Name'` and
    `answering '13:30'`."""
    typed, answered = [], []
    for s in summaries:
        for m in _steps(s):
            fix = m["fix"]
            if t := _TYPED.fullmatch(fix):
                typed.append(t["text"])
            elif a := _ANSWERED.fullmatch(fix):
                answered.append(a["text"])
    return typed, answered


def element_name(element: Mapping[str, Any]) -> str:
    """The name a hint uses for an element: its first line of text, else of its description."""
    return (element.get("text") or element.get("desc") or "").split("\n")[0]


def hinted_rows(summaries: Sequence[str], screen: str, elements: Sequence[str | Mapping[str, Any]]) -> frozenset[int]:
    """Indices of the elements on `screen` that a hint summary names (none for bare labels)."""
    names = {name for s in summaries for on, name in hint_targets(s) if on == screen}
    if not names:
        return frozenset()
    return frozenset(i for i, e in enumerate(elements) if not isinstance(e, str) and element_name(e) in names)


def hit_name(action: Action, elements: list[dict]) -> str | None:
    """The name (first line of text) of the element an action hits, by index or point."""
    if action.element is not None and 0 <= action.element < len(elements):
        return element_name(elements[action.element])
    if action.point is not None:
        hits = [e for e in elements if e["grid"][0] <= action.point[0] <= e["grid"][2]
                and e["grid"][1] <= action.point[1] <= e["grid"][3]]
        if hits:
            return element_name(hits[-1])
    return None


def describe_step_action(action: Action, elements: list[dict]) -> str:
    """An action in words, naming the element it hit by its first line of text."""
    label = hit_name(action, elements)
    verb = action.type.value.replace("_", " ")
    if action.type == ActionType.TYPE:
        return f"typing '{action.text}'" + (f" into '{label}'" if label else "")
    if action.type == ActionType.ANSWER:
        return f"answering '{action.text}'"
    if action.type == ActionType.SYSTEM_BUTTON:
        return f"pressing {action.button}"
    if action.type == ActionType.OPEN_APP:
        return f"opening {action.app}"
    if action.type == ActionType.SWIPE:
        return f"swiping {action.direction or ''}".strip()
    return f"{verb} '{label}'" if label else verb
