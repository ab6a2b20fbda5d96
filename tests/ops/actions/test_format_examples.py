"""Each native format on its own examples: what parses to what, and how each failure is named."""

from __future__ import annotations

import pytest

from ops.actions import (
    FORMATS,
    Action,
    ActionType,
    ParseFailure,
    detect_format,
    parse,
    parse_with_context,
    render,
)
from ops.actions.coords import screen_pixels

A = ActionType

CALL = '<tool_call>{{"name": "mobile_use", "arguments": {}}}</tool_call>'
QWEN_RESPONSE = (
    "<thinking>The search bar is at the top.</thinking>\n"
    '<tool_call>\n{"name": "mobile_use", "arguments": {"action": "click", "coordinate": [540, 82]}}'
    "\n</tool_call>\n<conclusion>UI observation: home. Intended action: tap search.</conclusion>"
)



def test_qwen3vl_keeps_thinking_and_conclusion():
    out = parse_with_context(QWEN_RESPONSE, "qwen3vl")
    assert out.action == Action(type="click", point=(540, 82))
    assert out.thinking == "The search bar is at the top."
    assert out.conclusion == "UI observation: home. Intended action: tap search."
    assert out.envelope_ok


def test_qwen3vl_render_with_context_round_trips():
    action = Action(type="terminate", status="success")
    text = render(action, "qwen3vl", thinking="done", conclusion="Task finished.")
    out = parse_with_context(text, "qwen3vl")
    assert (out.action, out.thinking, out.conclusion, out.envelope_ok) == (
        action,
        "done",
        "Task finished.",
        True,
    )


def test_qwen3vl_missing_conclusion_parses_but_envelope_is_incomplete():
    out = parse_with_context(QWEN_RESPONSE.split("<conclusion>")[0], "qwen3vl")
    assert isinstance(out.action, Action)
    assert not out.envelope_ok


@pytest.mark.parametrize(
    "arguments,expected",
    [
        (
            '{"action": "system_button", "button": "Home"}',
            Action(type="system_button", button="home"),
        ),
        ('{"action": "open", "text": "Settings"}', Action(type="open_app", app="Settings")),
        ('{"action": "key", "text": "volume_up"}', Action(type="key", key="volume_up")),
        ('{"action": "wait", "time": 3}', Action(type="wait", duration=3)),
        ('{"action": "answer", "text": "42"}', Action(type="answer", text="42")),
        ('"{\\"action\\": \\"type\\", \\"text\\": \\"hi\\"}"', Action(type="type", text="hi")),
    ],
)
def test_qwen3vl_argument_variants(arguments, expected):
    assert parse(CALL.format(arguments), "qwen3vl") == expected


@pytest.mark.parametrize(
    "text,reason",
    [
        ("I will tap the button.", "no <tool_call>"),
        ('<tool_call>{"name": "computer_use", "arguments": {"action": "click"}}', "computer_use"),
        (
            '<tool_call>{"name": "mobile_use", "arguments": {"action": "fly"}}',
            "unknown mobile_use action",
        ),
        (CALL.format('{"action": "click", "coordinate": [1200, 5]}'), "outside the 0–1000 grid"),
        ('<tool_call>{"name": "mobile_use", "arguments": {"action": "click"}}', "needs a point"),
        (CALL.format('{"action": "click", "coordinate": [1, "a"]}'), "expected a number"),
        (CALL.format('{"action": "terminate", "status": "ok"}'), "status 'ok'"),
        ("<tool_call>{oops</tool_call>", "malformed JSON"),
    ],
)
def test_qwen3vl_failures_are_specific(text, reason):
    result = parse(text, "qwen3vl")
    assert isinstance(result, ParseFailure)
    assert reason in result.reason
    assert result.format == "qwen3vl" and result.raw == text


def test_guiowl_action_line_is_the_conclusion():
    text = (
        "<think>need to go back</think>\nAction: Go back to the list\n"
        '<tool_call>\n{"name": "mobile_use", "arguments": {"action": "system_button", '
        '"button": "Back"}}\n</tool_call>'
    )
    out = parse_with_context(text, "guiowl")
    assert out.action == Action(type="system_button", button="back")
    assert (out.thinking, out.conclusion, out.envelope_ok) == (
        "need to go back",
        "Go back to the list",
        True,
    )
    assert detect_format(text) == "guiowl"


@pytest.mark.parametrize(
    "text,expected",
    [
        ('{"action_type": "click", "index": 4}', Action(type="click", element=4)),
        (
            'Reason: open it\nAction: {"action_type": "open_app", "app_name": "Clock"}',
            Action(type="open_app", app="Clock"),
        ),
        # scroll names the content direction; the finger moves the other way.
        ('{"action_type": "scroll", "direction": "down"}', Action(type="swipe", direction="up")),
        (
            '{"action_type": "scroll", "direction": "left", "index": 2}',
            Action(type="swipe", direction="right", element=2),
        ),
        ('{"action_type": "swipe", "direction": "left"}', Action(type="swipe", direction="left")),
        (
            '{"action_type": "input_text", "text": "milk", "index": 1}',
            Action(type="type", text="milk", element=1),
        ),
        ('{"action_type": "keyboard_enter"}', Action(type="system_button", button="enter")),
        ('{"action_type": "navigate_back"}', Action(type="system_button", button="back")),
        (
            '{"action_type": "status", "goal_status": "infeasible"}',
            Action(type="terminate", status="failure"),
        ),
        (
            '{"action_type": "double_tap", "x": 10, "y": 20}',
            Action(type="double_tap", point=(10, 20)),
        ),
    ],
)
def test_androidworld_examples(text, expected):
    assert parse(text, "androidworld") == expected


def test_androidworld_pixels_frame():
    text = '{"action_type": "click", "x": 540, "y": 1200}'
    assert parse(text, "androidworld", frame=screen_pixels(1080, 2400)) == Action(
        type="click", point=(500, 500)
    )


@pytest.mark.parametrize(
    "text,reason",
    [
        ('{"action_type": "unknown"}', "unsupported action_type 'unknown'"),
        ('{"action_type": "status", "goal_status": "done"}', "goal_status 'done'"),
        ('{"action_type": "scroll", "direction": "north"}', "direction 'north'"),
        ('{"action_type": "click", "index": 1.5}', "index must be an integer"),
        ('{"index": 3}', "no string 'action_type'"),
    ],
)
def test_androidworld_failures(text, reason):
    result = parse(text, "androidworld")
    assert isinstance(result, ParseFailure) and reason in result.reason


@pytest.mark.parametrize(
    "text,expected",
    [
        ("->CLICK[880,78]", Action(type="click", point=(880, 78))),
        ("BACK", Action(type="system_button", button="back")),
        (
            '{"action": "SWIPE", "point1": [500, 800], "point2": [500, 200]}',
            Action(type="swipe", point=(500, 800), end_point=(500, 200)),
        ),
        ('{"action": "TYPE", "value": "hello", "clear": true}', Action(type="type", text="hello")),
        (
            '{"action": "AWAKE", "value": "com.android.settings"}',
            Action(type="open_app", app="com.android.settings"),
        ),
        ('{"action": "WAIT", "value": 2}', Action(type="wait", duration=2)),
        ('{"action": "COMPLETE"}', Action(type="terminate", status="success")),
        ('{"action": "ABORT"}', Action(type="terminate", status="failure")),
    ],
)
def test_mobilegym_examples(text, expected):
    assert parse(text, "mobilegym") == expected


@pytest.mark.parametrize("name", ["INFO", "NOOP"])
def test_mobilegym_info_and_noop_are_unsupported(name):
    result = parse(f'{{"action": "{name}", "value": "which one?"}}', "mobilegym")
    assert isinstance(result, ParseFailure)
    assert result.reason.startswith(f"unsupported action {name}")


@pytest.mark.parametrize(
    "text,expected",
    [
        ('do(action="Tap", element=[100, 200])', Action(type="click", point=(100, 200))),
        ('do(action="Tap", element=[100, 200, 300, 400])', Action(type="click", point=(200, 300))),
        ('do(action="Long_Pres", element=[1, 2])', Action(type="long_press", point=(1, 2))),
        (
            'do(action="Swipe", element=[0, 0, 1000, 1000], direction="up", dist="long")',
            Action(type="swipe", direction="up", point=(500, 500)),
        ),
        (
            'do(action="Swipe", start=[5, 900], end=[5, 100])',
            Action(type="swipe", point=(5, 900), end_point=(5, 100)),
        ),
        ('do(action="Launch", app="Clock")', Action(type="open_app", app="Clock")),
        ('do(action="Wait", duration="3 seconds")', Action(type="wait", duration=3)),
        ('do(action="Back")', Action(type="system_button", button="back")),
        ("finish()", Action(type="terminate", status="success")),
        ('finish(message="The total is $12")', Action(type="answer", text="The total is $12")),
    ],
)
def test_mobilerl_examples(text, expected):
    assert parse(text, "mobilerl") == expected


@pytest.mark.parametrize(
    "text,reason",
    [
        ('do(action="Fly")', "unknown MobileRL action 'Fly'"),
        ('do(action="Tap", element=[1, 2, 3])', "expected [x, y]"),
        ('do(action="Tap", element=[1, 2]', "unbalanced"),
        ('do(action="Tap", element=foo())', "not a literal"),
        ('do(action="Wait", duration="soon")', "cannot read seconds"),
    ],
)
def test_mobilerl_failures(text, reason):
    result = parse(text, "mobilerl")
    assert isinstance(result, ParseFailure) and reason in result.reason


@pytest.mark.parametrize(
    "text,expected",
    [
        (
            "<think>a</think><answer>CLICK(100, 200)</answer>",
            Action(type="click", point=(100, 200)),
        ),
        (
            "<answer>SWIPE((500, 800), (500, 200))</answer>",
            Action(type="swipe", point=(500, 800), end_point=(500, 200)),
        ),
        ('<answer>TYPE(content="hi there")</answer>', Action(type="type", text="hi there")),
        ('<answer>OPEN_APP(app="Maps")</answer>', Action(type="open_app", app="Maps")),
        ('<answer>WAIT(second="3")</answer>', Action(type="wait", duration=3)),
        ("<answer>System_Button(Recent)</answer>", Action(type="system_button", button="recent")),
        (
            '<answer>Terminate(status="failure")</answer>',
            Action(type="terminate", status="failure"),
        ),
        ('<answer>Answer(content="7 apples")</answer>', Action(type="answer", text="7 apples")),
    ],
)
def test_mobilewizard_examples(text, expected):
    assert parse(text, "mobilewizard") == expected


def test_mobilewizard_thinking_and_envelope():
    out = parse_with_context(
        "<think>plan</think>\n<answer>LONG_PRESS(3, 4)</answer>", "mobilewizard"
    )
    assert (out.thinking, out.envelope_ok) == ("plan", True)
    assert not parse_with_context("<answer>LONG_PRESS(3, 4)</answer>", "mobilewizard").envelope_ok


def test_canonical_failures_are_specific():
    result = parse('{"type": "click", "args": {"point": [1, 2], "colour": "red"}}', "canonical")
    assert isinstance(result, ParseFailure) and "unknown arguments ['colour']" in result.reason


def test_unknown_format_and_undetectable_text():
    assert parse("CLICK[1,2]", "nope").reason == "unknown format 'nope'"
    assert parse("hello there", "auto").reason == "could not detect the action format"
    with pytest.raises(ValueError, match="unknown format"):
        render(Action(type="wait"), "nope")


def test_render_refuses_context_a_format_cannot_hold():
    with pytest.raises(ValueError, match="no place for thinking"):
        render(Action(type="wait"), "androidworld", thinking="hmm")


def test_formats_registry_names_match():
    assert all(name == fmt.name for name, fmt in FORMATS.items())
