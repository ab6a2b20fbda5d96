"""MobileWizard's structured-reasoning prompt style and the step memory it carries (MobileWizard
§3.3): memory updates and bounds, and the loop prompt → structured answer → parse → memory →
next prompt."""

from __future__ import annotations

import pytest

from ops.actions import Action, ParsedOutput, ReasoningParts, parse_structured, render_structured
from ops.agent.episode import Hint
from ops.agent.policy import PromptedPolicy
from ops.agent.policy_prompt import OUTPUT_FORMATS, PromptStyle, build_policy_prompt, without_hints
from ops.agent.reasoning_memory import MemoryLimits, ReasoningMemory, StepOutcome
from ops.agent.reasoning_memory import ELLIPSIS

HINT = Hint(attempt=1, key_mistake="Tapped Sound", what_to_avoid=["Sound"], suggested_approach=["Open Display"],
            important_insights=[], hint_summary="On 'home', click 'Display'.")


def _step(n: int, plan: str = "Open the display settings") -> ReasoningParts:
    return ReasoningParts(f"Step {n - 1} worked.", f"Screen {n} shows Display and Sound.", plan,
                          f"Click 'Display' (step {n}).")


def _text(messages) -> str:
    return messages[-1]["content"][0]["text"]


def test_the_first_prompt_has_an_empty_memory_and_asks_for_the_four_parts_then_the_answer():
    messages = build_policy_prompt("mobilewizard", "Turn on dark theme", [], [], memory=ReasoningMemory())
    system, user = messages
    for tag in ("<think>", "<self_verification>", "<screen_analysis>", "<planning>", "<action_guidance>", "<answer>"):
        assert tag in system["content"]
    assert system["content"].index("<self_verification>") < system["content"].index("<action_guidance>")
    assert _text(messages).startswith("Task: Turn on dark theme\n\nMemory of earlier steps:\n")
    assert _text(messages).count("- none yet") == 3
    assert user["content"][1] == {"type": "image"}
    assert OUTPUT_FORMATS[PromptStyle.MOBILEWIZARD] == "mobilewizard"


def test_answer_parse_update_render_loop_carries_each_part_into_the_next_prompt():
    memory = ReasoningMemory()
    for n in (1, 2):
        prompt = _text(build_policy_prompt("mobilewizard", "Turn on dark theme", [], [], memory=memory))
        parts = _step(n, plan=f"sub-task {n}")
        parsed = parse_structured(render_structured(Action(type="click", point=(500, 300)), parts))
        assert parsed.reasoning == parts  # render → parse gives the same parts
        memory.update(parsed, StepOutcome.SUCCESS if n == 1 else "failure")
    prompt = _text(build_policy_prompt("mobilewizard", "Turn on dark theme", [], [], memory=memory))
    assert memory.steps == 2
    assert "- step 1: Screen 1 shows Display and Sound.\n- step 2: Screen 2 shows Display and Sound." in prompt
    assert "- step 1: Click 'Display' (step 1). [success]\n- step 2: Click 'Display' (step 2). [failure]" in prompt
    assert "Planning history (sub-tasks):\n- step 1: sub-task 1\n- step 2: sub-task 2" in prompt
    assert "Step 1 worked." not in prompt  # self-verification decides the outcome; it is not stored


def test_a_repeated_plan_or_screen_note_is_kept_once_and_a_failed_parse_is_noted():
    memory = ReasoningMemory()
    memory.update(ParsedOutput(Action(type="wait"), reasoning=_step(1)), "success")
    memory.update(ParsedOutput(Action(type="wait"), reasoning=ReasoningParts("ok", "Screen 1 shows Display and Sound.",
                                                                              "Open the display settings", "Wait.")),
                  "unverified")
    memory.update(parse_structured("<answer>WAIT()</answer>"), "failure")
    memory.update(ParsedOutput(Action(type="wait"), thinking="free text"), "success")
    text = memory.render()
    assert text.count("Screen 1 shows") == 1 and text.count("Open the display settings") == 1
    assert "- step 2: Wait. [unverified]" in text
    assert "- step 3: (invalid output: structured reasoning: the response does not start with <think>) [failure]" in text
    assert "- step 4: (output without structured reasoning) [success]" in text


def test_memory_is_bounded_older_entries_cut_then_counted():
    limits = MemoryLimits(recent=2, entry_chars=40, older=3, older_chars=12)
    memory = ReasoningMemory(limits)
    for n in range(1, 11):
        memory.update(ParsedOutput(Action(type="wait"), reasoning=_step(n, plan=f"plan {n} " + "x" * 100)), "success")
    lines = memory.render().split("\n")
    plans = lines[lines.index("Planning history (sub-tasks):") + 1:]
    assert plans[0] == "- (5 earlier entries not shown)"
    assert [p.split(":")[0] for p in plans[1:]] == [f"- step {n}" for n in range(6, 11)]
    assert plans[1] == "- step 6: plan 6 xxxx" + ELLIPSIS  # older: 12-character heads
    assert plans[-1] == "- step 10: plan 10 " + "x" * 31 + ELLIPSIS  # recent: cut to 40 characters
    assert len(memory.render()) < 1200
    long_run = ReasoningMemory()
    for n in range(1, 500):
        long_run.update(ParsedOutput(Action(type="wait"), reasoning=_step(n, plan="p" * 5000 + str(n))), "success")
    assert len(long_run.render()) < 8000


def test_entries_are_one_line_whatever_the_part_holds():
    memory = ReasoningMemory()
    memory.update(ParsedOutput(Action(type="wait"), reasoning=ReasoningParts("a", "line one\n\nline  two", "p", "g")),
                  "success")
    assert "- step 1: line one line two" in memory.render()


@pytest.mark.parametrize("bad", [dict(recent=0), dict(entry_chars=-1), dict(older=-1), dict(older_chars=True)])
def test_memory_limits_are_checked(bad):
    with pytest.raises(ValueError, match="MemoryLimits"):
        MemoryLimits(**bad)


def test_an_unknown_outcome_is_refused():
    with pytest.raises(ValueError):
        ReasoningMemory().update(ParsedOutput(Action(type="wait"), reasoning=_step(1)), "maybe")


def test_the_style_needs_memory_and_refuses_history_lines_and_other_styles_refuse_memory():
    with pytest.raises(ValueError, match="needs memory="):
        build_policy_prompt("mobilewizard", "Go back", [], [])
    with pytest.raises(ValueError, match="history lines would be lost"):
        build_policy_prompt("mobilewizard", "Go back", ["clicked"], [], memory=ReasoningMemory())
    with pytest.raises(ValueError, match="no place for reasoning memory"):
        build_policy_prompt("qwen3vl", "Go back", [], [], memory=ReasoningMemory())
    with pytest.raises(ValueError, match="always shows the screenshot"):
        build_policy_prompt("mobilewizard", "Go back", [], [], memory=ReasoningMemory(), with_image=False)


def test_hints_go_with_the_task_and_come_out_exactly():
    memory = ReasoningMemory()
    memory.update(ParsedOutput(Action(type="wait"), reasoning=_step(1)), "success")
    hinted = build_policy_prompt("mobilewizard", "Turn on dark theme", [], [HINT], memory=memory)
    plain = build_policy_prompt("mobilewizard", "Turn on dark theme", [], [], memory=memory)
    assert "Hint from Attempt #1" in _text(hinted) and _text(hinted).index("Hint") < _text(hinted).index("Memory")
    assert without_hints(hinted, 1) == plain


def test_prompted_policies_of_the_style_keep_memory_and_read_outputs_strictly():
    class Echo(PromptedPolicy):
        def act_batch(self, requests):
            return []

    policy = Echo("mobilewizard", "v")
    assert policy.keeps_memory and not Echo("qwen3vl", "v").keeps_memory
    free_text = "<think>I should go back.</think>\n<answer>System_Button(Back)</answer>"
    assert not policy.parse(free_text, None).ok
    assert "missing part" in policy.parse(free_text, None).action.reason
