"""Critic and curriculum answers on hostile input (issue #26): `parse_json_output` gives the
model or an `OutputError`, nothing else, with bounded work."""

from __future__ import annotations

import json
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ops.agent.llm_answers import OutputError, extract_json, parse_json_output
from ops.agent.llm_errors import ErrorKind
from ops.judging.critic.prompts import CorrectiveHintOutput, FinalDecision, StepDescription
from tests.fuzz.strategies import DEEP, MB, mutated, snippets, wrong_types

DESCRIPTION = {"action_description": "Tapped Wi-Fi", "ui_description": "Settings"}
DECISION = {"decision": 0, "reason": "Never saved.", "failure_step": 2, "task_feasible": True,
            "step_analysis": {"1": {"reasonableness": "reasonable", "explanation": "ok"},
                              "2": {"reasonableness": "unreasonable", "explanation": "detour"}}}
HINT = {"key_mistake": "x", "what_to_avoid": ["y"], "suggested_approach": ["z"], "hint_summary": "Tap Save."}
SCHEMAS = [(StepDescription, DESCRIPTION, None), (FinalDecision, DECISION, {"n_steps": 2}),
           (CorrectiveHintOutput, HINT, None)]


def answers(valid: dict) -> st.SearchStrategy[object]:
    text = json.dumps(valid)
    wrapped = st.sampled_from(["```json\n{}\n```", "Here it is: {} Thanks.", "{}"]).map(lambda w: w.replace("{}", text))
    return st.one_of(st.just(text), mutated(st.one_of(st.just(text), wrapped)), snippets, wrong_types)


@settings(max_examples=1200, deadline=None)
@given(data=st.data())
def test_parse_json_output_gives_the_model_or_an_output_error(data):
    schema, valid, context = data.draw(st.sampled_from(SCHEMAS))
    answer = data.draw(answers(valid))
    try:
        value = parse_json_output(answer, schema, context)
    except OutputError as exc:
        assert exc.kind in (ErrorKind.INVALID_JSON, ErrorKind.SCHEMA)
    else:
        assert isinstance(value, schema)


@pytest.mark.parametrize("answer", [
    "{" * 300_000, "x" * 900_000 + "[x" * 50_000, "[" * DEEP, '{"a":' * DEEP, "[" * 100 + "1," * 400_000, '"' + '\\"' * 400_000,
    '{"a": "' + "{" * MB, "x" * MB + json.dumps(DESCRIPTION), "[1] " * 200_000 + json.dumps(DESCRIPTION),
])
def test_pathological_answers_fail_fast(answer):
    start = time.perf_counter()
    with pytest.raises(OutputError):
        parse_json_output(answer, StepDescription)
    assert time.perf_counter() - start < 1.0


def test_an_answer_after_prose_brackets_is_still_found():
    prose = "Steps [one] and [two] were {fine} and " * 100
    assert extract_json(prose + json.dumps(DESCRIPTION)) == DESCRIPTION


def test_an_object_inside_a_broken_container_is_still_found():
    assert extract_json('Answer: [' + json.dumps(DESCRIPTION) + ', oops') == DESCRIPTION
