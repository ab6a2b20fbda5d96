"""Every action parser on hostile output (issue #26): a `ParsedOutput` for any input, never an
exception, never an action that UTF-8 cannot encode, with bounded work."""

from __future__ import annotations

import dataclasses
import json

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from mobileforge.cli.actions import actions as actions_cli
from ops.actions import AUTO, FORMAT_NAMES, FORMATS, Action, ParseFailure, parse, parse_structured, parse_with_context
from ops.actions.formats import label_echo
from ops.actions.formats.reasoning import read_layout
from tests.ops.actions.action_strategies import actions
from tests.fuzz.strategies import (
    NUMBERS,
    hostile_outputs,
    hostile_structured_outputs,
    mutated,
    snippets,
    unicode_text,
    wrong_types,
)

LABELS = ["Wi-Fi", "Bluetooth", "Display"]


def assert_contract(parsed) -> None:
    assert isinstance(parsed.action, Action | ParseFailure)
    if parsed.ok:  # everything a success carries can be stored and sent
        json.dumps([parsed.action.to_dict(), parsed.thinking, parsed.conclusion], ensure_ascii=False).encode()


@pytest.mark.parametrize("fmt", [*FORMATS, AUTO])
@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_every_format_reads_hostile_output_without_raising(fmt, data):
    text = data.draw(hostile_outputs(data.draw(st.sampled_from(FORMAT_NAMES)) if fmt == AUTO else fmt))
    parsed = parse_with_context(text, fmt)
    assert_contract(parsed)
    assert parse(text, fmt) == parsed.action


@settings(max_examples=1000, deadline=None)
@given(text=hostile_structured_outputs())
def test_the_structured_parse_reads_hostile_output_without_raising(text):
    parsed = parse_structured(text)
    assert_contract(parsed)
    assert (parsed.reasoning is not None) == parsed.ok  # a success always carries the four parts
    if parsed.ok:
        assert read_layout(text).ok and parse(text, "mobilewizard") == parsed.action
        json.dumps(parsed.reasoning.texts(), ensure_ascii=False).encode()
    else:
        assert parsed.reasoning is None and parsed.action.reason


# the labels of one example, the same in its answer and beside it
echo_labels = st.shared(st.lists(st.one_of(st.sampled_from(["Wi-Fi", "OK", "", "a #1", " #2"]), unicode_text),
                                 max_size=10), key="label_echo labels")


def _label_echo_answer(labels: list[str], action, element: int) -> str:
    if action.element is not None and labels:
        return label_echo.render_target(dataclasses.replace(action, element=element % len(labels)), labels)
    return label_echo.render_action(action)


# built once (a strategy built per draw costs hypothesis more than the draw)
echo_answers = st.builds(_label_echo_answer, echo_labels, actions, st.integers(0, 9))
echo_numbers = st.builds(lambda answer, n: f"- Wi-Fi #{n}\n" + answer.split("\n")[-1], echo_answers,
                         st.sampled_from(NUMBERS))
label_echo_answers = st.tuples(st.one_of(echo_answers, mutated(echo_answers), echo_numbers, snippets, wrong_types),
                               echo_labels)


@settings(max_examples=800, deadline=None)
@given(case=label_echo_answers)
def test_label_echo_with_element_labels_reads_hostile_output_without_raising(case):
    text, labels = case
    parsed = parse_with_context(text, "label_echo", labels=labels)
    assert_contract(parsed)
    assert label_echo.parse_output(text, labels) == parsed.action


def test_an_echoed_index_of_5000_digits_is_a_parse_failure():
    text = "- Wi-Fi #" + "9" * 5000 + '\n{"type":"click","args":{"element":0}}'
    failure = parse_with_context(text, "label_echo", labels=LABELS).action
    assert isinstance(failure, ParseFailure) and "more than 1000 digits" in failure.reason


@pytest.mark.parametrize(("fmt", "text"), [
    ("canonical", '{"type": "type", "args": {"text": "a\\ud800b"}}'),
    ("androidworld", '{"action_type": "input_text", "text": "\\udfff"}'),
    ("qwen3vl", '<tool_call>{"name": "mobile_use", "arguments": {"action": "type", "text": "\\ud800"}}</tool_call>'),
    ("mobilerl", 'do(action="Type", text="\\ud800")'),
    ("mobilewizard", '<answer>TYPE(content="\\ud800")</answer>'),
    ("label_echo", '{"type":"answer","args":{"text":"\\ud800"}}'),
    ("auto", '{"type": "open_app", "args": {"app": "\\ud800"}}'),
])
def test_a_lone_surrogate_escape_is_a_parse_failure_not_an_action(fmt, text):
    failure = parse(text, fmt)
    assert isinstance(failure, ParseFailure) and "lone surrogate U+D" in failure.reason


def test_a_paired_surrogate_escape_is_the_character_it_encodes():
    assert parse('{"type": "type", "args": {"text": "\\ud83d\\ude00"}}', "canonical").text == "\U0001F600"


def test_cli_parse_reports_a_lone_surrogate_as_a_parse_failure():
    result = CliRunner().invoke(actions_cli, ["parse", "--format", "canonical"],
                                input='{"type": "type", "args": {"text": "\\ud800"}}')
    assert result.exit_code == 1 and result.exception is None or isinstance(result.exception, SystemExit)
    assert "parse failed (canonical)" in result.output and "lone surrogate" in result.output
