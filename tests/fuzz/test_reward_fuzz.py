"""Rewards on hostile input (issue #26): `score_action` scores any prediction and raises only
`RewardInputError`, for a malformed target; the TRL reward function returns one finite float per
completion for any batch (ragged columns, None text parts, deep or huge cells) and counts why
it scored a row 0."""

from __future__ import annotations

import json
import math
from functools import lru_cache

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ops.actions import FORMAT_NAMES, Action, ParseFailure, render
from ops.judging.reasoning_reward import reasoning_reward, structure_reward
from ops.judging.action_reward import RewardConfig, RewardInputError, score_action
from ops.judging.reward_columns import ANNOTATION_COLUMNS, make_trl_reward
from tests.ops.actions.action_strategies import actions
from tests.fuzz.strategies import (
    DEEP,
    NUMBERS,
    hostile_outputs,
    hostile_structured_outputs,
    reasoning_parts,
    snippets,
    wrong_types,
)
from tests.support.embedders import HashingEmbedder

numbers = st.one_of(st.integers(-2000, 2000), st.floats(allow_nan=True, allow_infinity=True),
                    st.sampled_from([10**5000, -(10**400), 1e308, "1", "a", None, True, [1]]))
hostile_boxes = st.one_of(st.none(), st.lists(numbers, min_size=4, max_size=4), st.lists(numbers, max_size=6),
                          wrong_types, snippets)
hostile_elements = st.one_of(st.none(), wrong_types, st.lists(st.one_of(
    hostile_boxes, st.fixed_dictionaries({"box": hostile_boxes}, optional={"label": st.one_of(st.text(), st.none())}),
), max_size=6))
predictions = st.one_of(actions, st.just(ParseFailure("bad", "x", "canonical")), wrong_types)
configs = st.sampled_from([RewardConfig(), RewardConfig(click_threshold=0.14), RewardConfig(text_f1_gate=0.5)])


@settings(max_examples=2000, deadline=None)
@given(prediction=predictions, target=st.one_of(actions, actions, wrong_types), box=hostile_boxes,
       elements=hostile_elements, config=configs, format_ok=st.one_of(st.none(), st.booleans(), wrong_types))
def test_score_action_scores_any_prediction_and_rejects_only_a_malformed_target(
        prediction, target, box, elements, config, format_ok):
    try:
        result = score_action(prediction, target, target_box=box, elements=elements, config=config, format_ok=format_ok)
    except RewardInputError:
        return
    assert math.isfinite(result.reward) and 0 <= result.reward <= 1
    assert isinstance(result.format_ok, bool)


def _nested(depth: int) -> list:
    value: list = []
    for _ in range(depth):
        value = [value]
    return value


DEEP_LIST = _nested(DEEP)


@lru_cache(maxsize=None)  # strategies built once, not per draw (building costs hypothesis more than drawing)
def completions(fmt: str) -> st.SearchStrategy[object]:
    text = hostile_outputs(fmt)
    return st.one_of(
        text,
        text.map(lambda t: [{"role": "assistant", "content": t}]),
        text.map(lambda t: [{"role": "assistant", "content": [{"type": "text", "text": t}, {"type": "image", "text": None}]}]),
        st.sampled_from([[{"role": "assistant", "content": [{"type": "text", "text": None}]}], [{"role": "assistant"}],
                         [{"role": "assistant", "content": None}], [], None, 5, DEEP_LIST, [None]]),
    )


def _dumps(value: object) -> str:
    try:
        return json.dumps(value, default=repr)
    except ValueError:  # an integer over Python's 4,300-digit str() limit, or a circular value
        return "9" * 5000


def cells(valid: st.SearchStrategy[object]) -> st.SearchStrategy[object]:
    return st.one_of(valid.map(_dumps), valid, snippets, wrong_types, st.sampled_from(["[" * DEEP, *NUMBERS]))


TARGET_CELLS, BOX_CELLS, ELEMENT_CELLS = cells(actions.map(Action.to_dict)), cells(hostile_boxes), cells(hostile_elements)
PLANNING_CELLS = st.one_of(reasoning_parts.map(lambda p: p.planning), snippets, wrong_types)


@lru_cache(maxsize=None)
def columns(values: st.SearchStrategy[object], n: int) -> st.SearchStrategy[object]:
    return st.one_of(st.lists(values, min_size=n, max_size=n), st.lists(values, max_size=n + 3),  # ragged
                     st.sampled_from([None, [], "column", 5]))


@st.composite
def batches(draw) -> tuple[str, list, dict]:
    fmt = draw(st.sampled_from(FORMAT_NAMES))
    n = draw(st.integers(0, 6))
    batch = {"target_action": draw(columns(TARGET_CELLS, n))}
    if draw(st.booleans()):
        batch["target_box"] = draw(columns(BOX_CELLS, n))
    if draw(st.booleans()):
        batch["elements"] = draw(columns(ELEMENT_CELLS, n))
    return fmt, draw(st.lists(completions(fmt), min_size=n, max_size=n)), batch


@settings(max_examples=400, deadline=None)
@given(batch=batches(), component=st.sampled_from(["overall", "type", "arg", "format"]))
def test_trl_reward_returns_one_finite_reward_per_completion_for_any_batch(batch, component):
    fmt, completions_, columns_ = batch
    reward = make_trl_reward(fmt, RewardConfig(shrink_stages=(0.14, 0.07)), component)
    out = reward(completions_, **columns_)
    assert len(out) == len(completions_) and all(isinstance(v, float) and math.isfinite(v) for v in out)


@settings(max_examples=500, deadline=None)
@given(text=hostile_structured_outputs(), annotation=reasoning_parts)
def test_structure_and_reasoning_rewards_score_any_output(text, annotation):
    assert structure_reward(text) in (0.0, 0.5, 1.0)
    assert 0.0 <= reasoning_reward(text, annotation, HashingEmbedder()) <= 1.0


WIZARD_COMPLETIONS = st.one_of(hostile_structured_outputs(), completions("mobilewizard"))


@settings(max_examples=150, deadline=None)
@given(data=st.data(), component=st.sampled_from(["overall", "structure", "reasoning"]))
def test_structured_trl_rewards_return_one_finite_reward_per_completion_for_any_batch(data, component):
    n = data.draw(st.integers(0, 6))
    completions_ = data.draw(st.lists(WIZARD_COMPLETIONS, min_size=n, max_size=n))
    batch = {"target_action": data.draw(columns(TARGET_CELLS, n))}
    for name in ANNOTATION_COLUMNS:
        if data.draw(st.integers(0, 9)):  # now and then a column is missing
            batch[name] = data.draw(columns(PLANNING_CELLS, n))
    reward = make_trl_reward("mobilewizard", RewardConfig(structure_weight=0.5, reasoning_weight=0.5), component,
                             embed=HashingEmbedder())
    out = reward(completions_, **batch)
    assert len(out) == len(completions_) and all(isinstance(v, float) and math.isfinite(v) for v in out)
    assert not any(reason.startswith("unexpected") for reason in reward.failures)


def test_unscorable_rows_score_0_with_counted_reasons_and_the_rest_score():
    target = Action(type="click", point=(500, 500))
    good = render(target, "canonical")
    reward = make_trl_reward("canonical")
    out = reward(
        [good, [{"role": "assistant", "content": [{"type": "text", "text": None}, {"type": "text", "text": good}]}],
         good, 7, good],
        target_action=[target.to_json(), target.to_json(), "[" * DEEP, target.to_json(), '{"type": "click"}'],
    )
    assert out == [1.0, 1.0, 0.0, 0.0, 0.0]
    assert reward.failures == {"malformed target": 2, "unreadable completion": 1}


def test_a_ragged_column_scores_every_row_0_and_says_so():
    target = Action(type="click", point=(500, 500)).to_json()
    reward = make_trl_reward("canonical")
    assert reward(["x", "y"], target_action=[target]) == [0.0, 0.0]
    assert reward.failures == {"column target_action is ragged": 2}


def test_a_batch_without_targets_is_a_data_error():
    with pytest.raises(RewardInputError, match="target_action"):
        make_trl_reward("canonical")(["x"], target_box=[None])
