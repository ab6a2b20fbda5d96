"""Work per input is bounded and linear (issue #41): every parser, reward and JSON reader refuses or
reads long repeated tokens, floods of unclosed tags and long digit runs within a CPU budget, and
its failure message quotes an excerpt of the input, not the input. CPU time (`time.process_time`),
so that a loaded machine does not fail the test; the budget is far above what linear work costs
here (under 30 ms for 100,000 characters) and far below what the quadratic scans cost (seconds)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from mobileforge.cli.actions import actions as actions_cli
from ops.actions import AUTO, FORMATS, Action, ParseFailure, parse_structured, parse_with_context, render
from ops.agent.llm_answers import MAX_ANSWER_CHARS, OutputError, parse_json_output
from ops.judging.action_reward import RewardConfig
from ops.judging.critic.prompts import FinalDecision, StepDescription
from ops.judging.reasoning_reward import structure_reward
from ops.judging.reward_columns import make_trl_reward
from tests.fuzz.strategies import digit_runs, floods, hostile_outputs, hostile_structured_outputs

CPU_BUDGET_S = 0.25
MESSAGE_CHARS = 1000
QWEN_CALL = render(Action(type="click", point=(500, 120)), "qwen3vl", thinking="t")


def cpu_seconds(call: Callable[[], object]) -> tuple[object, float]:
    start = time.process_time()
    result = call()
    return result, time.process_time() - start


def parsed_within_budget(text: object, fmt: str) -> Action | ParseFailure:
    parsed, seconds = cpu_seconds(lambda: parse_with_context(text, fmt))
    assert seconds < CPU_BUDGET_S, f"{fmt}: {seconds:.2f} s of CPU for {len(text) if isinstance(text, str) else text!r}"
    if isinstance(parsed.action, ParseFailure):
        assert len(parsed.action.reason) < MESSAGE_CHARS
    return parsed.action


# The measured cases of issue #41 (11 s, 10 s, 4 s and 2.5 s of CPU before), and their neighbours.
@pytest.mark.parametrize(("fmt", "text", "outcome"), [
    ("mobilerl", 'do(action="Wait", duration="' + "9" * 20_000 + 'x")', "over the 40-character limit"),
    ("mobilerl", 'do(action="Wait", duration="' + "9" * 30 + '.")', "cannot read seconds"),
    ("mobilegym", '"' + "FOO[" * 24_750, "no MobileGym action found"),
    ("mobilegym", '{"action": "CLICK", "point": "' + "1," * 49_000 + '"}', "expected [x, y]"),
    ("mobilewizard", "<answer>CLICK(1, 2)" + "<answer>" * 12_000, None),
    (AUTO, "<answer>CLICK(1, 2)" + "<answer>" * 12_000, None),
    ("qwen3vl", QWEN_CALL + "<conclusion>" * 7_000, None),
    (AUTO, QWEN_CALL + "<conclusion>" * 7_000, None),
    ("mobilerl", "do(a=(" + "1," * 49_000 + "))", "more than 256 items"),
    ("canonical", ("9" * 1000 + "x") * 99, "not JSON"),
])
def test_the_issue_probes_cost_bounded_work(fmt, text, outcome):
    action = parsed_within_budget(text, fmt)
    if outcome is None:
        assert isinstance(action, Action) and action.point is not None
    else:
        assert isinstance(action, ParseFailure) and outcome in action.reason


def test_a_valid_wait_still_reads_its_seconds():
    assert parse_with_context('do(action="Wait", duration="2.5 seconds")', "mobilerl").action.duration == 2.5
    assert parse_with_context('do(action="Wait", duration="1e1s")', "mobilerl").action.duration == 10.0


@pytest.mark.parametrize("fmt", [*FORMATS, AUTO])
@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_every_format_reads_floods_and_digit_runs_within_the_budget(fmt, data):
    text = data.draw(st.one_of(floods, digit_runs, hostile_outputs("canonical" if fmt == AUTO else fmt)))
    parsed_within_budget(text, fmt)


@settings(max_examples=300, deadline=None)
@given(text=st.one_of(floods, hostile_structured_outputs()))
def test_the_structured_parse_and_its_reward_stay_within_the_budget(text):
    parsed, seconds = cpu_seconds(lambda: (parse_structured(text), structure_reward(text)))
    assert seconds < CPU_BUDGET_S
    failure = parsed[0].action
    assert not isinstance(failure, ParseFailure) or len(failure.reason) < MESSAGE_CHARS


def test_a_flood_of_part_tags_is_refused_after_a_bounded_count():
    text = "<think>" + "<planning>p</planning>" * 4_000 + "</think><answer>WAIT()</answer>"
    failure, seconds = cpu_seconds(lambda: parse_structured(text).action)
    assert seconds < CPU_BUDGET_S and "more than 16 part tags" in failure.reason


@settings(max_examples=300, deadline=None)
@given(text=st.one_of(floods, digit_runs, floods.map(lambda t: "```json\n" + t), digit_runs.map(lambda t: f"[{t}]")))
def test_critic_answers_are_read_within_the_budget(text):
    def read() -> str:
        try:
            parse_json_output(text, StepDescription)
        except OutputError as exc:
            return str(exc)
        return ""
    message, seconds = cpu_seconds(read)
    assert seconds < CPU_BUDGET_S and len(message) < MESSAGE_CHARS


def _refusal_of(answer: str, schema: type, context: dict | None = None) -> str:
    try:
        parse_json_output(answer, schema, context)
    except OutputError as exc:
        return str(exc)
    raise AssertionError("the answer was accepted")


def _refusal(answer: str, context: dict) -> str:
    return _refusal_of(answer, FinalDecision, context)


@pytest.mark.parametrize("n_steps", [10**6, 10**12, 10**30])
def test_the_final_decision_checks_coverage_without_counting_to_n_steps(n_steps):
    answer = json.dumps({"decision": 1, "reason": "done", "task_feasible": True,
                         "step_analysis": {"1": {"reasonableness": "reasonable", "explanation": "ok"}}})
    message, seconds = cpu_seconds(lambda: _refusal(answer, {"n_steps": n_steps}))
    assert seconds < CPU_BUDGET_S and f"missing [2, 3, 4, 5, 6] and {n_steps - 6} more" in message


def test_the_final_decision_names_a_bounded_excerpt_of_unexpected_steps():
    analysis = {str(i): {"reasonableness": "reasonable", "explanation": "ok"} for i in range(1, 2_001)}
    answer = json.dumps({"decision": 1, "reason": "done", "task_feasible": True, "step_analysis": analysis})
    message = _refusal(answer, {"n_steps": 3})
    assert "unexpected [4, 5, 6" in message and len(message) < MESSAGE_CHARS


class _State:
    def __init__(self, max_steps: object, global_step: object) -> None:
        self.max_steps, self.global_step = max_steps, global_step


@pytest.mark.parametrize(("max_steps", "global_step", "threshold"), [
    (10, 10**400, 0.07), (10**400, 5, 0.14), (2.0, 10**400, 0.07), (float("nan"), 5, 0.14), (10, float("inf"), 0.07),
    (10, 5, 0.07), (10, 4, 0.14),
])
def test_the_trl_reward_reads_any_trainer_state(max_steps, global_step, threshold):
    target = Action(type="click", point=(500, 500))
    near = render(Action(type="click", point=(500, 600)), "canonical")  # 0.1 of the screen away
    reward = make_trl_reward("canonical", RewardConfig(shrink_stages=(0.14, 0.07)))
    out = reward([near], target_action=[target.to_json()], trainer_state=_State(max_steps, global_step))
    assert out == [1.0 if threshold == 0.14 else 0.2]


GOOD = json.dumps({"prediction": {"type": "wait", "args": {}}, "target": {"type": "wait", "args": {}}}).encode()
HOSTILE_LINES = [
    b'{"prediction": {"type": "click", "args": {"point": [' + b"9" * 400 + b', 1]}}, "target": {"type": "wait"}}',
    b'{"prediction": "x", "target": {"type": "click", "args": {"point": [' + b"9" * 400 + b", 1]}}}",
    b"[" * 100_000,
    b'{"prediction": "' + b"<answer>" * 20_000 + b'", "target": {"type": "wait"}}',
    b'{"prediction": "x", "target": {"type": "wait"}, "format": "' + b"f" * 50_000 + b'"}',
    '{"prediction": "\ud800", "target": {"type": "wait"}}'.encode("utf-8", "surrogatepass"),
    b"\xff\xfe not UTF-8",
    b"9" * 5000,
]


def test_actions_score_reports_each_hostile_line_and_scores_every_good_one():
    stdin = b"\n".join(line for hostile in HOSTILE_LINES for line in (GOOD, hostile)) + b"\n" + GOOD + b"\n"
    result, seconds = cpu_seconds(lambda: CliRunner().invoke(actions_cli, ["score"], input=stdin))
    assert result.exit_code == 1 and (result.exception is None or isinstance(result.exception, SystemExit))
    out = [json.loads(row) for row in result.stdout.split("\n") if row]
    assert len(out) == 2 * len(HOSTILE_LINES) + 1
    assert [row["reward"] for row in out[::2]] == [1.0] * (len(HOSTILE_LINES) + 1)
    assert all(len(json.dumps(row)) < MESSAGE_CHARS for row in out[1::2])
    assert "not UTF-8 text" in out[13]["error"] and "nested more than 100 deep" in out[5]["error"]
    assert seconds < CPU_BUDGET_S * len(out)


def test_an_answer_longer_than_any_max_tokens_is_refused_naming_the_limit():
    answer = "x" * MAX_ANSWER_CHARS + json.dumps({"action_description": "a", "ui_description": "b"})
    assert "over the 200000-character limit" in _refusal_of(answer, StepDescription)
