"""Hypothesis strategies for hostile model and critic output: random unicode with lone
surrogates, ~1 MB strings, brackets nested 100,000 deep, 5,000-digit numbers, NaN/inf, wrong
types, long repeated tokens (tags left open, call and bracket openers, quotes), long digit runs,
and valid outputs of each action format with one of those spliced in, appended or prepended."""

from __future__ import annotations

import math
import re
from functools import lru_cache

from hypothesis import strategies as st

from ops.actions import REASONING_PARTS, Action, ActionType, ReasoningParts, render, render_structured, supports
from tests.ops.actions.action_strategies import actions

DEEP = 100_000
MB = 1_000_000

# Built once: hypothesis would spend seconds generating strings this large.
PATHOLOGICAL = (
    "[" * DEEP, "{" * DEEP, "(" * DEEP, '{"a":' * DEEP, "[" * DEEP + "]" * DEEP, '"{' * DEEP, "{" * 300_000,
    "\\" * MB, '"' * MB, "x" * MB, "<tool_call>" * 50_000, "do(" * DEEP, "- a #" + "9" * 5000,
    '{"a": "' + "x" * MB, "```json\n" * 50_000, "[" * 100 + "1," * 400_000,
)
NUMBERS = ("9" * 5000, "-" + "1" * 5000, "1." + "0" * 5000, "1e99999", "-1e99999", "NaN", "Infinity", "-Infinity",
           "nan", "inf", "1e-99999")
ESCAPES = ("\\ud800", "\\udfff", "\\udc00\\ud800", "\\u0000", "\\x00", '\\"')
WRONG_TYPES = (None, 0, 10**5000, 1.5, math.nan, math.inf, True, b"bytes", [], {}, [1, 2], ("a",), {1, 2}, object())

# Repeated up to and past the readers' length limits (parsers 100,000 characters, answers 200,000): each
# token is one a scan could rescan once per repetition (issue #41).
FLOOD_TOKENS = ("<answer>", "<think>", "<conclusion>", "<tool_call>", "<planning>", "</planning>", "Action:\n", "```",
                "CLICK[", "FOO[", "CLICK(", "do(", "a(", "(", "[", "{", "1,", '"', "'", "\\", "9", "9.", "- a #", " ", "a ")
FLOOD_CHARS = (5_000, 50_000, 99_000, 100_001, 200_001)
# Left open before a flood (a scan backtracking over what follows rescans the flood per character).
OPENERS = ("", "", "```json\n", "<think>", "<tool_call>", '{"a": "', 'do(action="Wait", duration="', "CLICK[", '"', "`")
floods = st.builds(lambda opener, token, chars: opener + token * (chars // len(token)),
                   st.sampled_from(OPENERS), st.sampled_from(FLOOD_TOKENS), st.sampled_from(FLOOD_CHARS))
digit_runs = st.builds(lambda head, n, tail: head + "9" * n + tail, st.sampled_from(["", "-", "1.", '"']),
                       st.sampled_from([400, 1001, 4301, 20_000]), st.sampled_from(["", "x", ".", " seconds", '"']))

surrogates = st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF)
unicode_text = st.text(st.one_of(st.characters(), surrogates), max_size=80)
json_noise = st.text(st.sampled_from('{}[]()",:#-0123456789.eE\\ \nnatrufl'), max_size=120)
snippets = st.one_of(unicode_text, json_noise, st.sampled_from(PATHOLOGICAL), st.sampled_from(NUMBERS),
                     st.sampled_from(ESCAPES), surrogates, floods, digit_runs)
wrong_types = st.sampled_from(WRONG_TYPES)


def _fallback(fmt: str) -> Action:
    return Action(type=ActionType.WAIT) if supports(Action(type=ActionType.WAIT), fmt) else Action(type="terminate", status="success")


@lru_cache(maxsize=None)  # one strategy object per format: building one per draw costs hypothesis more than the draw
def valid_outputs(fmt: str) -> st.SearchStrategy[str]:
    """Well-formed outputs of format `fmt`."""
    return actions.map(lambda action: render(action if supports(action, fmt) else _fallback(fmt), fmt))


def _splice(text: str, at: int, snippet: str) -> str:
    at %= len(text) + 1
    return text[:at] + snippet + text[at:]


def _renumber(text: str, number: str) -> str:
    return re.sub(r"\d+", number.replace("\\", "\\\\"), text, count=1)


def _restring(text: str, body: str) -> str:
    return re.sub(r'"[^"]*"', lambda m: f'"{body}"', text, count=1)


def mutated(valid: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    """Valid text with one hostile change: a number, a string body, an insertion, or a cut."""
    return st.one_of(
        st.builds(_splice, valid, st.integers(0, 10**6), snippets),
        st.builds(_renumber, valid, st.one_of(st.sampled_from(NUMBERS), digit_runs)),
        st.builds(_restring, valid, st.one_of(st.sampled_from(ESCAPES), unicode_text, digit_runs,
                                              floods.map(lambda t: t.replace('"', "'")))),
        st.builds(lambda text, at: text[: at % (len(text) + 1)], valid, st.integers(0, 10**6)),
        st.builds(lambda text, flood, after: text + flood if after else flood + text, valid, floods, st.booleans()),
    )


@lru_cache(maxsize=None)  # one strategy object per format: building one per draw costs hypothesis more than the draw
def hostile_outputs(fmt: str) -> st.SearchStrategy[object]:
    """Model output for format `fmt`: mutated valid text, noise, pathological text, or a wrong type."""
    return st.one_of(mutated(valid_outputs(fmt)), snippets, valid_outputs(fmt), wrong_types)


part_texts = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=40).filter(
    lambda t: t.strip() and "<" not in t)
reasoning_parts = st.builds(ReasoningParts, *[part_texts] * len(REASONING_PARTS))


def _wizard_action(action: Action) -> Action:
    return action if supports(action, "mobilewizard") else _fallback("mobilewizard")


@lru_cache(maxsize=None)  # one strategy object per format: building one per draw costs hypothesis more than the draw
def valid_structured_outputs() -> st.SearchStrategy[str]:
    """Well-formed four-part structured responses (mobilewizard format, MobileWizard §3.3)."""
    return st.builds(lambda action, parts: render_structured(_wizard_action(action), parts), actions, reasoning_parts)


def _reordered(action: Action, parts: ReasoningParts, order: list[int]) -> str:
    blocks = [f"<{name}>{text}</{name}>" for name, text in zip(REASONING_PARTS, parts.texts(), strict=True)]
    return render(_wizard_action(action), "mobilewizard", thinking="\n".join(blocks[i] for i in order))


@lru_cache(maxsize=None)  # one strategy object per format: building one per draw costs hypothesis more than the draw
def hostile_structured_outputs() -> st.SearchStrategy[object]:
    """Structured responses with one hostile change, parts dropped, repeated or reordered, or noise."""
    valid = valid_structured_outputs()
    reordered = st.builds(_reordered, actions, reasoning_parts, st.lists(st.integers(0, 3), max_size=6))
    return st.one_of(mutated(valid), mutated(reordered), reordered, valid, snippets, wrong_types)
