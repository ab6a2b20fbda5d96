"""Parsers and renderers of every native format: the registry, round trips, fuzzing (each format's own
examples: test_format_examples.py)."""

from __future__ import annotations

import pytest
from tests.ops.actions.action_strategies import ACTIONS_BY_TYPE, actions, texts
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ops.actions import (
    FORMAT_NAMES,
    Action,
    ActionType,
    ParseFailure,
    UnsupportedAction,
    detect_format,
    parse,
    parse_with_context,
    render,
    supports,
)
from ops.actions.coords import screen_pixels
from ops.actions.formats.base import INTERNAL_ERROR

A = ActionType

# Which canonical types each format can write (with at least one argument combination).
EXPRESSIBLE = {
    "qwen3vl": {
        A.CLICK,
        A.LONG_PRESS,
        A.SWIPE,
        A.TYPE,
        A.ANSWER,
        A.SYSTEM_BUTTON,
        A.OPEN_APP,
        A.WAIT,
        A.TERMINATE,
        A.KEY,
    },
    "androidworld": {
        A.CLICK,
        A.DOUBLE_TAP,
        A.LONG_PRESS,
        A.SWIPE,
        A.TYPE,
        A.ANSWER,
        A.SYSTEM_BUTTON,
        A.OPEN_APP,
        A.WAIT,
        A.TERMINATE,
    },
    "mobilegym": {
        A.CLICK,
        A.DOUBLE_TAP,
        A.LONG_PRESS,
        A.SWIPE,
        A.DRAG,
        A.TYPE,
        A.ANSWER,
        A.SYSTEM_BUTTON,
        A.OPEN_APP,
        A.WAIT,
        A.TERMINATE,
    },
    "mobilerl": {
        A.CLICK,
        A.DOUBLE_TAP,
        A.LONG_PRESS,
        A.SWIPE,
        A.TYPE,
        A.ANSWER,
        A.SYSTEM_BUTTON,
        A.OPEN_APP,
        A.WAIT,
        A.TERMINATE,
    },
    "mobilewizard": {
        A.CLICK,
        A.LONG_PRESS,
        A.SWIPE,
        A.TYPE,
        A.ANSWER,
        A.SYSTEM_BUTTON,
        A.OPEN_APP,
        A.WAIT,
        A.TERMINATE,
    },
    "canonical": set(A),
}
EXPRESSIBLE["guiowl"] = EXPRESSIBLE["qwen3vl"]
# Without the element list, label_echo writes element-free actions as canonical compact JSON.
EXPRESSIBLE["label_echo"] = EXPRESSIBLE["canonical"]


def test_every_format_is_registered():
    assert set(FORMAT_NAMES) == set(EXPRESSIBLE)


@pytest.mark.parametrize("fmt", sorted(EXPRESSIBLE))
@pytest.mark.parametrize("atype", list(A), ids=lambda t: t.value)
@settings(max_examples=40, suppress_health_check=[HealthCheck.filter_too_much])
@given(data=st.data())
def test_round_trip_for_each_expressible_type(fmt, atype, data):
    action = data.draw(ACTIONS_BY_TYPE[atype])
    if atype not in EXPRESSIBLE[fmt]:
        assert not supports(action, fmt)
        with pytest.raises(UnsupportedAction):
            render(action, fmt)
        return
    if supports(action, fmt):
        assert parse(render(action, fmt), fmt) == action
    else:
        with pytest.raises(UnsupportedAction):
            render(action, fmt)


@settings(max_examples=300)
@given(action=actions)
def test_round_trip_through_auto_detection(action):
    for fmt in FORMAT_NAMES:
        if supports(action, fmt):
            text = render(action, fmt)
            # Without thinking/conclusion, Qwen3-VL and GUI-Owl responses are identical.
            same = {"qwen3vl", "guiowl"} if fmt in ("qwen3vl", "guiowl") else {fmt}
            if fmt == "label_echo":  # element-free label_echo answers are canonical JSON
                same = {"canonical"}
            assert detect_format(text) in same, text
            assert parse(text, "auto") == action


@pytest.mark.parametrize(
    "fmt,action",
    [
        ("qwen3vl", Action(type="click", point=(12, 990))),
        ("guiowl", Action(type="long_press", point=(0, 1000), duration=2.0)),
        ("androidworld", Action(type="click", point=(500, 500))),
        ("mobilegym", Action(type="drag", point=(1, 2), end_point=(999, 1000))),
        ("mobilerl", Action(type="swipe", point=(1, 2), end_point=(999, 1000))),
        ("mobilewizard", Action(type="click", point=(1000, 0))),
    ],
)
def test_round_trip_in_screen_pixels(fmt, action):
    # 1080x2400 pixels are finer than the grid, so grid -> pixels -> grid is exact.
    frame = screen_pixels(1080, 2400)
    assert parse(render(action, fmt, frame=frame), fmt, frame=frame) == action


FRAGMENTS = [
    "<tool_call>",
    "</tool_call>",
    "<thinking>",
    "</thinking>",
    "<answer>",
    "</answer>",
    "{",
    "}",
    "[",
    "]",
    "(",
    ")",
    ",",
    ":",
    "=",
    '"',
    "'",
    "\\",
    " ",
    "\n",
    '"name"',
    '"mobile_use"',
    '"arguments"',
    '"action"',
    '"click"',
    '"swipe"',
    '"coordinate"',
    '"coordinate2"',
    '"text"',
    '"time"',
    '"button"',
    '"status"',
    '"action_type"',
    '"index"',
    '"x"',
    '"y"',
    '"direction"',
    '"scroll"',
    '"goal_status"',
    '"complete"',
    '"point"',
    '"point1"',
    '"value"',
    '"WAIT"',
    '"INFO"',
    '"type"',
    '"args"',
    "do",
    "finish",
    "action=",
    "element=",
    "start=",
    "message=",
    '"Tap"',
    '"Swipe"',
    '"Wait"',
    "CLICK",
    "SWIPE",
    "TYPE",
    "System_Button",
    "Back",
    "Terminate",
    "WAIT",
    "second=",
    "content=",
    "Action:",
    "1",
    "-5",
    "1e999",
    "NaN",
    "1.5",
    "2000",
    "null",
    "true",
    "[1,2]",
    "[1,2,3]",
]
structured_noise = st.lists(st.sampled_from(FRAGMENTS), max_size=40).map("".join)


@settings(max_examples=400)
@given(text=st.one_of(texts, st.text(), structured_noise))
def test_parsers_never_raise(text):
    for fmt in (*FORMAT_NAMES, "auto"):
        result = parse_with_context(text, fmt)
        assert isinstance(result.action, Action | ParseFailure)
        if isinstance(result.action, ParseFailure):
            assert result.action.reason
            assert not result.action.reason.startswith(INTERNAL_ERROR), result.action.reason


def test_non_text_input_is_a_failure():
    result = parse(None, "qwen3vl")  # type: ignore[arg-type]
    assert isinstance(result, ParseFailure)
    assert "expected text" in result.reason
