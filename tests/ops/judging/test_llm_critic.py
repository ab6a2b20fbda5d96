"""LLMCritic over real HTTP (litellm → local scripted OpenAI-compatible server)."""

from __future__ import annotations

import dataclasses
import json
import threading

import numpy as np
import pytest

from ops.actions import ParseFailure, parse
from ops.judging.critic.llm_critic import NO_AFTER_SCREEN_NOTE, CriticError
from ops.judging.critic.visualize import MARKER
from ops.agent.episode import Hint, StepLabel
from tests.ops.judging.scripted import (
    CLICK_ELEMENT,
    CLICK_POINT,
    HINT,
    STEP_COLORS,
    SWIPE_UP,
    TERMINATE,
    CriticScript,
    action_detail,
    decision_json,
    decode_image,
    make_attempt,
    request_text,
)
from tests.support.openai_server import Reply

PANEL_SCALE = 4  # 200-px-high screens drawn on 800-px-high panels
GAP = 12  # ops.judging.critic.visualize.stitch default gap


def _near(pixel: tuple[int, ...], color: tuple[int, int, int], tol: int = 25) -> bool:
    return all(abs(a - b) <= tol for a, b in zip(pixel, color))


def _marker_pixels(img, box: tuple[int, int, int, int]) -> int:
    """How many pixels inside `box` (x0, y0, x1, y1) have the annotation colour."""
    x0, y0, x1, y1 = box
    pixels = np.asarray(img, dtype=np.int16)[y0:y1, x0:x1]
    return int((np.abs(pixels - np.array(MARKER)) <= 25).all(axis=-1).sum())


def test_successful_attempt_is_judged_success_without_hint(critic_on):
    script = CriticScript(decide=[decision_json(1, {1: True, 2: True, 3: True})])
    critic = critic_on(script, name="llm:judge")
    feedback = critic.evaluate(make_attempt([CLICK_POINT, CLICK_ELEMENT, TERMINATE]))

    assert feedback.decision == 1
    assert feedback.failure_step is None
    assert feedback.task_feasible is True
    assert feedback.reason == "the Wi-Fi toggle is on"
    assert feedback.step_analysis == [StepLabel(t, True, f"step {t + 1} rationale") for t in range(3)]
    assert feedback.hint is None
    assert feedback.critic == "llm:judge"
    # descriptions stay in step order although the calls ran concurrently
    assert len(feedback.step_descriptions) == 3
    assert '"point": [500, 250]' in feedback.step_descriptions[0]
    assert '(element 1: "Display")' in feedback.step_descriptions[1]
    assert '"status": "success"' in feedback.step_descriptions[2]
    assert (len(script.requests["describe"]), len(script.requests["decide"]), len(script.requests["hint"])) == (3, 1, 0)
    assert critic.counts.summary() == {
        "attempts_judged": 1, "attempts_failed": 0, "describe_calls": 3, "describe_repaired": 0,
        "decide_calls": 1, "decide_repaired": 0, "hint_calls": 0, "hint_repaired": 0,
    }
    # the decision prompt carries every step's raw log and description, numbered from 1
    text = request_text(script.requests["decide"][0])
    assert "Step 1: [click]" in text and "Step 3: [terminate]" in text and "Step 4" not in text
    assert "Action: did" in text


def test_failed_attempt_gets_a_hint_with_zero_based_steps(critic_on):
    script = CriticScript(decide=[decision_json(0, {1: True, 2: False, 3: False}, failure_step=2)])
    critic = critic_on(script)
    feedback = critic.evaluate(make_attempt([CLICK_POINT, CLICK_ELEMENT, SWIPE_UP], attempt=2))

    assert feedback.decision == 0
    assert feedback.failure_step == 1  # prompt step 2
    assert [(lab.step, lab.reasonable) for lab in feedback.step_analysis] == [(0, True), (1, False), (2, False)]
    assert feedback.hint == Hint(attempt=2, **HINT)
    hint_text = request_text(script.requests["hint"][0])
    assert "failed (at step 2)" in hint_text
    assert "Step 2: [click]" in hint_text and "Judged unreasonable: step 2 rationale" in hint_text
    assert critic.counts.calls["hint"] == 1


def test_success_with_an_unreasonable_step_still_gets_a_hint(critic_on):
    script = CriticScript(decide=[decision_json(1, {1: False, 2: True})])
    feedback = critic_on(script).evaluate(make_attempt([SWIPE_UP, TERMINATE]))
    assert feedback.decision == 1
    assert feedback.step_analysis[0] == StepLabel(0, False, "step 1 rationale")
    assert feedback.hint is not None and feedback.hint.attempt == 1
    assert "succeeded" in request_text(script.requests["hint"][0])


def test_decision_that_omits_a_step_is_repaired(critic_on):
    script = CriticScript(decide=[decision_json(1, {1: True, 2: True}), decision_json(1, {1: True, 2: True, 3: True})])
    critic = critic_on(script)
    feedback = critic.evaluate(make_attempt([CLICK_POINT, CLICK_ELEMENT, TERMINATE]))

    assert [lab.step for lab in feedback.step_analysis] == [0, 1, 2]
    repair = script.requests["decide"][1].messages
    assert repair[-2]["role"] == "assistant"
    assert "missing [3]" in repair[-1]["content"]
    assert critic.counts.repaired["decide"] == 1


def test_unrepairable_omission_raises_critic_error(critic_on):
    script = CriticScript(decide=[decision_json(1, {1: True, 2: True})])
    critic = critic_on(script)
    with pytest.raises(CriticError) as info:
        critic.evaluate(make_attempt([CLICK_POINT, CLICK_ELEMENT, TERMINATE], task_id="wifi", attempt=3))
    err = info.value
    assert (err.attempt_id, err.stage, err.kind, err.step) == ("wifi#3", "decide", "schema", None)
    assert len(script.requests["decide"]) == 2  # the answer and one repair round
    assert critic.counts.summary()["decide_failures_schema"] == 1
    assert (critic.counts.attempts_judged, critic.counts.attempts_failed) == (0, 1)


def test_failed_step_description_raises_critic_error_naming_the_step(critic_on):
    def describe(request):
        if "swipe" in request_text(request):
            return Reply(status=400)
        return Reply(json.dumps({"action_description": "tapped", "ui_description": "list"}))

    script = CriticScript(decide=[decision_json(1, {1: True, 2: True, 3: True})], describe=describe)
    critic = critic_on(script)
    with pytest.raises(CriticError) as info:
        critic.evaluate(make_attempt([CLICK_POINT, SWIPE_UP, TERMINATE]))
    assert (info.value.stage, info.value.kind, info.value.step) == ("describe", "rejected", 1)
    assert script.requests["decide"] == []  # no decision without every description
    assert critic.counts.summary()["describe_failures_rejected"] == 1


def test_panels_reach_the_server_as_annotated_png_data_urls(critic_on):
    script = CriticScript(decide=[decision_json(1, {1: True, 2: True, 3: True})])
    critic_on(script).evaluate(make_attempt([CLICK_POINT, SWIPE_UP, TERMINATE]))
    by_type = {request_text(r).split("- Action type: ")[1].split("\n")[0]: r for r in script.requests["describe"]}

    click = by_type["click"]
    [url] = click.image_urls()
    panel = decode_image(url)
    left_w = 100 * PANEL_SCALE
    assert panel.size == (2 * left_w + GAP, 200 * PANEL_SCALE)
    tap = (500 / 1000 * left_w, 250 / 1000 * panel.height)  # grid (500, 250) on the Before panel
    assert _near(panel.getpixel((int(tap[0]), int(tap[1]))), MARKER)
    assert _marker_pixels(panel, (int(tap[0]) - 60, int(tap[1]) - 60, int(tap[0]) + 60, int(tap[1]) + 60)) > 400
    assert _marker_pixels(panel, (0, 500, left_w, 520)) == 0  # nothing drawn far from the tap
    assert _near(panel.getpixel((20, 700)), STEP_COLORS[0])  # Before = step 0's screen
    assert _near(panel.getpixel((left_w + GAP + 20, 700)), STEP_COLORS[1])  # After = step 1's screen

    terminate = by_type["terminate"]
    last = decode_image(terminate.image_urls()[0])
    assert _near(last.getpixel((left_w + GAP + 20, 700)), STEP_COLORS[2])  # no later screen: repeats its own
    assert NO_AFTER_SCREEN_NOTE in action_detail(terminate)
    assert NO_AFTER_SCREEN_NOTE not in action_detail(click)


def test_decision_sees_the_stitched_last_screens(critic_on):
    script = CriticScript(decide=[decision_json(1, {k: True for k in range(1, 5)})])
    critic_on(script, last_screens=2).evaluate(make_attempt([CLICK_POINT, SWIPE_UP, CLICK_ELEMENT, TERMINATE]))
    [url] = script.requests["decide"][0].image_urls()
    composite = decode_image(url)
    width = 100 * PANEL_SCALE
    assert composite.size == (2 * width + GAP, 200 * PANEL_SCALE)
    assert _near(composite.getpixel((10, 10)), STEP_COLORS[2])
    assert _near(composite.getpixel((width + GAP + 10, 10)), STEP_COLORS[3])
    assert _marker_pixels(composite, (0, 0, composite.width, composite.height)) == 0  # plain screens


def test_invalid_action_is_described_from_its_raw_output(critic_on):
    script = CriticScript(decide=[decision_json(0, {1: False, 2: False}, failure_step=1)])
    feedback = critic_on(script).evaluate(make_attempt([None, CLICK_POINT]))
    invalid = next(r for r in script.requests["describe"] if "Action type: invalid" in request_text(r))
    detail = action_detail(invalid)
    assert "no action found" in detail and "I think I should tap..." in detail
    panel = decode_image(invalid.image_urls()[0])
    assert _marker_pixels(panel, (0, 0, panel.width, panel.height)) == 0  # nothing to mark
    assert feedback.failure_step == 0
    assert len(feedback.step_descriptions) == 2


def test_steps_are_described_concurrently(critic_on):
    n = 4
    barrier = threading.Barrier(n, timeout=10)  # breaks unless all n descriptions are in flight at once

    def describe(request):
        barrier.wait()
        return Reply(json.dumps({"action_description": "acted", "ui_description": "list"}))

    script = CriticScript(decide=[decision_json(1, {k: True for k in range(1, n + 1)})], describe=describe)
    feedback = critic_on(script).evaluate(make_attempt([CLICK_POINT, SWIPE_UP, CLICK_ELEMENT, TERMINATE]))
    assert feedback.step_descriptions == ["acted Screen before: list"] * n


def test_without_step_descriptions_only_the_decision_is_asked(critic_on):
    script = CriticScript(decide=[decision_json(1, {1: True, 2: True})])
    feedback = critic_on(script, describe_steps=False).evaluate(make_attempt([CLICK_POINT, TERMINATE]))
    assert script.requests["describe"] == []
    assert feedback.step_descriptions == []
    text = request_text(script.requests["decide"][0])
    assert "Step 1: [click]" in text and "Action: " not in text


def test_attempt_without_steps_is_refused(critic_on):
    critic = critic_on(CriticScript(decide=[decision_json(1, {})]))
    with pytest.raises(ValueError, match="without steps"):
        critic.evaluate(make_attempt([]))


def test_a_lone_surrogate_in_an_output_is_judged_not_lost(critic_on):
    # A `\ud800` escape in model JSON is an invalid action, not an action holding a surrogate;
    # a raw output holding one reaches the critic's VLM as U+FFFD instead of failing to encode.
    parsed = parse('{"type": "type", "args": {"text": "\\ud800"}}', "canonical")
    assert isinstance(parsed, ParseFailure) and "lone surrogate U+D800" in parsed.reason
    attempt = make_attempt([None, CLICK_POINT])
    attempt.steps[0] = dataclasses.replace(attempt.steps[0], raw_output="typed \ud800 here", parse_error=parsed.reason)
    script = CriticScript(decide=[decision_json(0, {1: False, 2: False}, failure_step=1)])

    feedback = critic_on(script).evaluate(attempt)

    assert feedback.decision == 0 and len(feedback.step_descriptions) == 2
    invalid = next(r for r in script.requests["describe"] if "Action type: invalid" in request_text(r))
    assert "typed \ufffd here" in action_detail(invalid) and "lone surrogate" in action_detail(invalid)
