"""The adaptive GUI action reward (MobileForge eq. 22–24, table 12) and its TRL wrapper."""

from __future__ import annotations

import json
import math
from types import SimpleNamespace

import pytest
from tests.ops.actions.action_strategies import actions
from hypothesis import given, settings
from pydantic import ValidationError

from ops.actions import Action, ParseFailure, render
from ops.judging.action_reward import RewardConfig, RewardInputError, score_action, score_output, swipe_direction, token_f1
from ops.judging.reward_columns import make_trl_reward

ELEMENTS = [(0, 0, 100, 100), (100, 100, 300, 200), (400, 400, 600, 800)]


def test_exact_click_on_point_scores_one():
    b = score_action(Action(type="click", point=(500, 500)), Action(type="click", point=(500, 500)))
    assert (b.reward, b.type, b.arg, b.format_ok) == (1.0, 1.0, 1.0, True)


def test_point_target_decays_linearly_to_zero_at_50():
    target = Action(type="click", point=(500, 500))
    assert score_action(Action(type="click", point=(530, 500)), target).arg == pytest.approx(0.4)
    assert score_action(Action(type="click", point=(530, 540)), target).arg == 0.0
    assert score_action(Action(type="click", point=(530, 500)), target).reward == pytest.approx(
        0.2 + 0.8 * 0.4
    )


def test_box_target_inside_scores_one_and_outside_decays_with_centre_distance():
    target = Action(type="click", point=(200, 150))
    box = (100, 100, 300, 200)
    assert score_action(Action(type="click", point=(299, 101)), target, target_box=box).arg == 1.0
    diagonal = math.dist((100, 100), (300, 200))
    outside = score_action(Action(type="click", point=(350, 150)), target, target_box=box).arg
    assert outside == pytest.approx(1 - 150 / diagonal)
    far = score_action(Action(type="click", point=(900, 900)), target, target_box=box).arg
    assert far == 0.0


def test_element_target_resolves_through_elements():
    target = Action(type="click", element=2)
    inside = score_action(Action(type="click", point=(500, 600)), target, elements=ELEMENTS)
    assert inside.arg == 1.0
    wrong_element = score_action(Action(type="click", element=0), target, elements=ELEMENTS)
    assert wrong_element.arg == 0.0  # centre (50, 50) is far from element 2
    assert score_action(Action(type="click", element=2), target).arg == 1.0  # no boxes needed
    off_screen = score_action(Action(type="click", element=17), target, elements=ELEMENTS)
    assert off_screen.arg == 0.0


def test_element_prediction_against_point_target_uses_element_centre():
    target = Action(type="long_press", point=(200, 150))
    b = score_action(Action(type="long_press", element=1), target, elements=ELEMENTS)
    assert b.arg == 1.0


def test_unresolvable_targets_are_errors_not_zeros():
    with pytest.raises(RewardInputError, match="no point and no box"):
        score_action(Action(type="click", point=(1, 1)), Action(type="click", element=3))
    with pytest.raises(RewardInputError, match="pass `elements`"):
        score_action(Action(type="click", element=1), Action(type="click", point=(1, 1)))
    with pytest.raises(RewardInputError, match="not"):
        score_action(
            Action(type="click", point=(1, 1)),
            Action(type="click", point=(1, 1)),
            target_box=(10, 10, 0, 0),
        )


@settings(max_examples=200)
@given(prediction=actions, target=actions)
def test_wrong_type_gets_no_argument_credit(prediction, target):
    if prediction.type == target.type:
        return
    b = score_action(prediction, target, elements=ELEMENTS * 20)
    assert (b.reward, b.type, b.arg) == (0.0, 0.0, 0.0)


@settings(max_examples=200)
@given(action=actions)
def test_an_action_scores_full_reward_against_itself(action):
    b = score_action(action, action, elements=[(0, 0, 1000, 1000)] * 60)
    assert b.reward == pytest.approx(1.0) and b.type == 1.0


def test_parse_failure_scores_zero_and_bad_format():
    b = score_action(ParseFailure("no tool call"), Action(type="wait"))
    assert (b.reward, b.format_ok) == (0.0, False)


@pytest.mark.parametrize(
    "prediction,target,arg",
    [
        (Action(type="swipe", direction="up"), Action(type="swipe", direction="up"), 1.0),
        (Action(type="swipe", direction="down"), Action(type="swipe", direction="up"), 0.0),
        # direction derived from points: finger moves from y=800 to y=200, i.e. up
        (
            Action(type="swipe", point=(500, 800), end_point=(510, 200)),
            Action(type="swipe", direction="up"),
            1.0,
        ),
        (
            Action(type="swipe", direction="left"),
            Action(type="swipe", point=(900, 500), end_point=(100, 520)),
            1.0,
        ),
        # a target without a direction (zero-length stroke): any valid swipe is fine
        (
            Action(type="swipe", direction="left"),
            Action(type="swipe", point=(5, 5), end_point=(5, 5)),
            1.0,
        ),
        (Action(type="type", text="buy milk"), Action(type="type", text="Buy milk!"), 1.0),
        (Action(type="type", text="buy"), Action(type="type", text="buy milk"), 2 / 3),
        (Action(type="answer", text="anything"), Action(type="answer", text=""), 1.0),
        (Action(type="answer", text="42 apples"), Action(type="answer", text="42"), 2 / 3),
        (
            Action(type="system_button", button="back"),
            Action(type="system_button", button="back"),
            1.0,
        ),
        (
            Action(type="system_button", button="home"),
            Action(type="system_button", button="back"),
            0.0,
        ),
        (
            Action(type="terminate", status="failure"),
            Action(type="terminate", status="success"),
            0.0,
        ),
        (
            Action(type="terminate", status="success"),
            Action(type="terminate", status="success"),
            1.0,
        ),
        (Action(type="key", key="Volume_Up"), Action(type="key", key="volume_up"), 1.0),
        (Action(type="key", key="volume_down"), Action(type="key", key="volume_up"), 0.0),
        (Action(type="open_app", app="settings"), Action(type="open_app", app="Settings"), 1.0),
        (Action(type="open_app", app="Maps"), Action(type="open_app", app="Google Maps"), 4 / 11),
        (Action(type="open_app", app="Clock"), Action(type="open_app", app="Maps"), 0.0),
        (Action(type="wait", duration=5), Action(type="wait"), 1.0),
        (
            Action(type="drag", point=(0, 0), end_point=(100, 100)),
            Action(type="drag", point=(0, 0), end_point=(100, 125)),
            0.75,
        ),
        (Action(type="double_tap", point=(10, 10)), Action(type="double_tap", point=(10, 10)), 1.0),
    ],
)
def test_argument_scores_by_type(prediction, target, arg):
    assert score_action(prediction, target).arg == pytest.approx(arg)


def test_token_f1_handles_empty_and_cjk_text():
    assert token_f1("", "") == 1.0
    assert token_f1("", "a") == 0.0
    assert token_f1("打开设置", "打开设置") == 1.0
    assert token_f1("打开", "打开设置") == pytest.approx(2 / 3)


def test_swipe_direction_of_a_zero_stroke_is_none():
    assert swipe_direction(Action(type="swipe", point=(1, 1), end_point=(1, 1))) is None
    assert swipe_direction(Action(type="swipe", point=(1, 1), end_point=(9, 1))) == "right"


def test_weights_are_configurable():
    config = RewardConfig(lambda_type=0.5, lambda_arg=0.5)
    b = score_action(Action(type="type", text="x"), Action(type="type", text="y"), config=config)
    assert b.reward == 0.5


def test_gated_f1_zeroes_weak_text_matches():
    config = RewardConfig(text_f1_gate=0.5)
    target = Action(type="type", text="one two three four")
    assert score_action(Action(type="type", text="one"), target, config=config).arg == 0.0
    assert score_action(Action(type="type", text="one two three"), target, config=config).arg == (
        pytest.approx(6 / 7)
    )


def test_click_threshold_is_binary_and_shrinks_with_progress():
    config = RewardConfig(shrink_stages=(0.14, 0.10, 0.07, 0.04))
    assert [config.at_progress(p).click_threshold for p in (0.0, 0.3, 0.6, 0.99, 1.0)] == [
        0.14,
        0.10,
        0.07,
        0.04,
        0.04,
    ]
    target = Action(type="click", point=(500, 500))
    near = Action(type="click", point=(500, 580))  # 80 grid units = 8% of the screen
    assert score_action(near, target, config=config.at_progress(0.3)).arg == 1.0
    assert score_action(near, target, config=config.at_progress(0.6)).arg == 0.0


@pytest.mark.parametrize(
    "kwargs,field",
    [
        ({"lambda_type": -0.1}, "lambda_type"),
        ({"click_threshold": 2}, "click_threshold"),
        ({"shrink_stages": (0.04, 0.14)}, "shrink_stages"),
        ({"text_f1_gate": 1.5}, "text_f1_gate"),
        ({"lambda_type": 0, "lambda_arg": 0}, "both 0"),
        ({"lambda_tpye": 0.3}, "lambda_tpye"),
    ],
)
def test_bad_config_names_the_field(kwargs, field):
    with pytest.raises(ValidationError, match=field):
        RewardConfig(**kwargs)


def test_score_output_requires_the_full_template_for_format_ok():
    target = Action(type="click", point=(100, 100))
    bare = render(target, "qwen3vl")
    full = render(target, "qwen3vl", thinking="t", conclusion="c")
    assert score_output(bare, "qwen3vl", target).format_ok is False
    assert score_output(bare, "qwen3vl", target).reward == 1.0  # format is logged, not rewarded
    assert score_output(full, "qwen3vl", target).format_ok is True


def test_trl_reward_reads_columns_and_chat_completions():
    target = Action(type="click", element=2)
    hit = render(Action(type="click", point=(500, 600)), "qwen3vl", thinking="t", conclusion="c")
    completions = [
        hit,
        [{"role": "assistant", "content": hit}],
        [{"role": "assistant", "content": [{"type": "text", "text": "no action here"}]}],
        render(Action(type="wait"), "qwen3vl"),
    ]
    columns = {
        "target_action": [target.to_json()] * 4,
        "elements": [json.dumps(ELEMENTS)] * 4,
        "target_box": [None] * 4,
        "prompt": ["p"] * 4,
    }
    assert make_trl_reward("qwen3vl")(completions, **columns) == [1.0, 1.0, 0.0, 0.0]
    assert make_trl_reward("qwen3vl", component="type")(completions, **columns) == [1, 1, 0, 0]
    assert make_trl_reward("qwen3vl", component="arg")(completions, **columns) == [1, 1, 0, 0]
    assert make_trl_reward("qwen3vl", component="format")(completions, **columns) == [1, 1, 0, 0]
    assert make_trl_reward("auto").__name__ == "gui_action_overall"


def test_trl_reward_accepts_element_objects_and_follows_trainer_progress():
    target = Action(type="click", point=(500, 500))
    near = render(Action(type="click", point=(500, 580)), "mobilegym")
    reward = make_trl_reward("mobilegym", RewardConfig(shrink_stages=(0.14, 0.04)), component="arg")
    early, late = (
        SimpleNamespace(global_step=1, max_steps=10),
        SimpleNamespace(global_step=9, max_steps=10),
    )
    cols = {"target_action": [target.to_dict()], "elements": [[{"box": [0, 0, 10, 10]}]]}
    assert reward([near], trainer_state=early, **cols) == [1.0]
    assert reward([near], trainer_state=late, **cols) == [0.0]


def test_trl_reward_resolves_label_echo_rows_like_the_rollout():
    # The tiny policy picks its element by the row it echoes; the JSON index after it is often
    # wrong. With labels in the elements column the reward scores what the rollout would do.
    elements = [{"box": [0, 0, 1000, 100], "label": "Wi-Fi [off]"}, {"box": [0, 800, 1000, 900], "label": "Bluetooth"}]
    target = Action(type="click", element=1)
    echo_right_index_wrong = '- Bluetooth #1\n{"type":"click","args":{"element":0}}'
    echo_wrong = '- Wi-Fi [off] #0\n{"type":"click","args":{"element":1}}'
    reward = make_trl_reward("label_echo")
    cols = {"target_action": [target.to_json()] * 2, "elements": [json.dumps(elements)] * 2}
    right, wrong = reward([echo_right_index_wrong, echo_wrong], **cols)
    assert right == 1.0 and wrong < 0.5
    boxes_only = {"target_action": [target.to_json()] * 2, "elements": [json.dumps([e["box"] for e in elements])] * 2}
    right, wrong = reward([echo_right_index_wrong, echo_wrong], **boxes_only)  # the JSON index stands
    assert right < 0.5 and wrong == 1.0


def test_trl_reward_needs_target_column_and_valid_component():
    with pytest.raises(RewardInputError, match="target_action"):
        make_trl_reward("qwen3vl")(["x"], prompt=["p"])
    with pytest.raises(ValueError, match="component"):
        make_trl_reward("qwen3vl", component="speed")  # type: ignore[arg-type]
