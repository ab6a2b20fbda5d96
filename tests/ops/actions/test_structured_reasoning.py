"""MobileWizard's four-part structured reasoning in the mobilewizard format: render → parse round
trips, and every malformed output a specific, recorded parse failure."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ops.actions import (
    REASONING_PARTS,
    Action,
    ParseFailure,
    ReasoningParts,
    parse_structured,
    parse_with_context,
    render_structured,
    supports,
)
from ops.actions.coords import screen_pixels
from ops.actions.formats.base import MAX_OUTPUT_CHARS
from ops.actions.formats.reasoning import read_layout, render_reasoning
from tests.ops.actions.action_strategies import actions

PARTS = ReasoningParts(
    self_verification="The Settings app opened, as intended.",
    screen_analysis="Settings lists Network, Display (y≈300) and Sound.",
    planning="Open the display settings.",
    action_guidance='Click "Display" at (500, 300).',
)
CLICK = Action(type="click", point=(500, 300))
GOOD = render_structured(CLICK, PARTS)


def _tagged(*blocks: tuple[str, str]) -> str:
    return "".join(f"<{name}>{text}</{name}>" for name, text in blocks)


def _response(think: str, answer: str = "CLICK(500, 300)") -> str:
    return f"<think>{think}</think>\n<answer>{answer}</answer>"


ALL = [(name, text) for name, text in zip(REASONING_PARTS, PARTS.texts(), strict=True)]

part_texts = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=60).filter(
    lambda t: t.strip() and "<" not in t)
reasoning = st.builds(ReasoningParts, part_texts, part_texts, part_texts,
                      st.one_of(part_texts, st.just("tap 1 < 2 <b>now</b>")))


def test_the_rendered_response_reads_back_with_its_four_parts_and_action():
    parsed = parse_structured(GOOD)
    assert parsed.action == CLICK and parsed.reasoning == PARTS and parsed.envelope_ok
    assert GOOD.startswith("<think>\n<self_verification>") and GOOD.endswith("</think>\n<answer>CLICK(500, 300)</answer>")


@settings(max_examples=300, deadline=None)
@given(parts=reasoning, action=actions.filter(lambda a: supports(a, "mobilewizard")))
def test_render_then_parse_gives_the_same_parts_and_action(parts, action):
    parsed = parse_structured(render_structured(action, parts))
    assert parsed.action == action
    assert parsed.reasoning == ReasoningParts(*(t.strip() for t in parts.texts()))


def test_pixel_frames_round_trip_like_the_plain_format():
    frame = screen_pixels(1080, 2400)
    parsed = parse_structured(render_structured(CLICK, PARTS, frame), frame)
    assert parsed.reasoning == PARTS and parsed.action == Action(type="click", point=(500, 300))


def test_the_lenient_parse_fills_the_parts_only_for_structured_thinking():
    assert parse_with_context(GOOD, "mobilewizard").reasoning == PARTS
    assert parse_with_context(GOOD, "auto").reasoning == PARTS
    free = parse_with_context(_response("I should tap Display."), "mobilewizard")
    assert free.ok and free.reasoning is None


@pytest.mark.parametrize(("text", "reason"), [
    (_response(_tagged(*ALL[:2], ALL[3])), "missing part planning"),
    (_response(_tagged(ALL[1], ALL[0], *ALL[2:])), "parts out of order: screen_analysis, self_verification"),
    (_response(_tagged(*ALL, ALL[2])), "part planning repeated"),
    (_response(_tagged(*ALL[:2], ("planning", "  "), ALL[3])), "part planning is empty"),
    (_response(_tagged(*ALL[:2]) + "I will open it." + _tagged(*ALL[2:])), "text outside the four parts"),
    (_response(_tagged(*ALL) + " done"), "text outside the four parts"),
    (_response("<self_verification>ok" + _tagged(*ALL[1:])), "<screen_analysis> inside <self_verification>"),
    (_response(_tagged(*ALL[:3]) + "<action_guidance>click"), "<action_guidance> is not closed"),
    (_response("</planning>" + _tagged(*ALL)), "</planning> without <planning>"),
    (_response("I should tap Display."), "missing part self_verification, screen_analysis, planning, action_guidance"),
    ("<think>" + _tagged(*ALL) + "</think>", "no <answer> right after </think>"),
    (GOOD.replace("</answer>", ""), "<answer> is not closed"),
    (GOOD + "\nThanks!", "text after </answer>"),
    ("<answer>CLICK(500, 300)</answer>", "the response does not start with <think>"),
    ("Sure. " + GOOD, "the response does not start with <think>"),
    (GOOD.replace("<think>", "<thinking>").replace("</think>", "</thinking>"), "does not start with <think>"),
    (GOOD.replace("</think>", ""), "<think> is not closed"),
    ("", "the response does not start with <think>"),
])
def test_malformed_structure_is_a_parse_failure_naming_the_problem(text, reason):
    failure = parse_structured(text).action
    assert isinstance(failure, ParseFailure) and failure.format == "mobilewizard"
    assert failure.reason.startswith("structured reasoning: ") and reason in failure.reason


def test_a_structured_response_with_a_bad_action_fails_on_the_action():
    failure = parse_structured(GOOD.replace("CLICK(500, 300)", "FLY(1)")).action
    assert isinstance(failure, ParseFailure) and failure.reason == "no action call found"


@pytest.mark.parametrize(("text", "reason"), [
    (GOOD + " " * MAX_OUTPUT_CHARS, "characters"),
    (GOOD.replace("as intended", "as \ud800 intended"), "lone surrogate U+D800"),
    (GOOD.encode(), "expected text, got bytes"),
    (None, "expected text, got NoneType"),
])
def test_huge_surrogate_and_non_text_output_are_parse_failures(text, reason):
    failure = parse_structured(text).action
    assert isinstance(failure, ParseFailure) and reason in failure.reason


def test_reading_pathological_tag_runs_is_linear():
    for text in ("<think>" + "<planning>" * 9_000 + "</think><answer>WAIT()</answer>",
                 "<think>" + "</planning><planning>" * 4_500,
                 "<think>" + "<planning>x</planning>" * 4_000 + "</think><answer>WAIT()</answer>"):
        assert not parse_structured(text).ok
        assert read_layout(text).sections.problem


@pytest.mark.parametrize("bad", ["", "   ", "a <planning> b", "ends </think> here", "x <answer>", "y</action_guidance>"])
def test_render_refuses_parts_it_could_not_read_back(bad):
    with pytest.raises(ValueError, match="part planning"):
        render_reasoning(ReasoningParts("ok", "ok", bad, "ok"))
