"""Prompt templates (MobileForge appendix G) and the models of their JSON answers."""

from __future__ import annotations

import json

import pytest
from pydantic import BaseModel, ValidationError

from ops.actions import Action, ActionType, ParsedOutput, ReasoningParts
from ops.agent.hint_marks import describe_step_action
from ops.agent.episode import Hint
from ops.agent.hint_marks import corrective_summary, hint_actions, hint_targets, hinted_actions, hinted_rows, hinted_texts, plan_summary
from ops.agent.messages import fill_image_placeholders, messages_to_json, png_data_url, redact_images
from ops.agent.policy_prompt import PromptStyle, build_policy_prompt, render_hint_block, without_hints
from ops.agent.reasoning_memory import ReasoningMemory
from ops.curriculum.prompts import CurriculumOutput, build_curriculum_prompt, curriculum_context
from ops.judging.critic.prompts import CorrectiveHintOutput, CriticStep, FinalDecision, StepDescription, build_corrective_hint_prompt, build_final_decision_prompt, build_step_description_prompt
from tests.support.images import solid_png

HINT = Hint(
    attempt=2,
    key_mistake="Opened Display instead of Network",
    what_to_avoid=["Scrolling past Network & internet"],
    suggested_approach=["Tap Network & internet first"],
    important_insights=["Wi-Fi lives under Network & internet"],
    hint_summary="Go to Network & internet, then Wi-Fi",
)


def _text(messages: list[dict]) -> str:
    """All text of a prompt, system and user parts together."""
    out = []
    for m in messages:
        content = m["content"]
        out += [content] if isinstance(content, str) else [p["text"] for p in content if p["type"] == "text"]
    return "\n".join(out)


def _images(messages: list[dict]) -> list[dict]:
    return [p for m in messages if isinstance(m["content"], list) for p in m["content"] if p["type"] != "text"]


def test_hint_block_carries_every_hint_field_in_order():
    block = render_hint_block([HINT])
    lines = block.splitlines()
    assert lines[0] == "EVALUATION HINTS FROM PREVIOUS ATTEMPTS" and lines[-1] == "END OF EVALUATION HINTS"
    order = ["--- Hint from Attempt #2 ---", "Summary: Go to Network", "Key Mistake: Opened Display",
             "What to Avoid:", "- Scrolling past", "Suggested Approach:", "- Tap Network",
             "Important Insights:", "- Wi-Fi lives"]
    positions = [block.index(fragment) for fragment in order]
    assert positions == sorted(positions)
    assert render_hint_block([]) == ""


@pytest.mark.parametrize("style", [PromptStyle.QWEN3VL, PromptStyle.GUIOWL])
def test_native_styles_put_hints_after_instruction_and_history_after_hints(style):
    messages = build_policy_prompt(style, "Turn on Wi-Fi", ["Opened Settings", "Scrolled down"], [HINT])

    text = _text(messages)
    assert messages[0]["role"] == "system" and messages[1]["role"] == "user"
    user_text = messages[1]["content"][0]["text"]
    order = [user_text.index(part) for part in ("Turn on Wi-Fi", "EVALUATION HINTS", "1. Opened Settings")]
    assert order == sorted(order)
    assert "2. Scrolled down" in user_text
    assert "mobile_use" in text and "<tool_call>" in text
    assert _images(messages) == [{"type": "image"}]
    json.loads(messages_to_json(messages))  # storable as JSON text


def test_qwen3vl_prompt_asks_for_thinking_and_conclusion():
    text = _text(build_policy_prompt("qwen3vl", "Turn on Wi-Fi", [], []))
    for tag in ("<thinking>", "<conclusion>", 'status "success"', 'status "failure"'):
        assert tag in text
    assert "None yet." in text and "EVALUATION HINTS" not in text


def test_guiowl_prompt_asks_for_action_line():
    text = _text(build_policy_prompt("guiowl", "Turn on Wi-Fi", [], []))
    assert "Action: <a short imperative" in text and "No previous action." in text


def test_element_prompt_lists_elements_before_the_task():
    elements = [{"text": "Network &\ninternet", "desc": ""}, {"text": "", "desc": "Search settings",
                 "class": "android.widget.ImageButton"},
                {"class": "android.widget.Switch", "checkable": True, "checked": True}, "Display",
                {"text": "Dark theme", "checkable": True, "checked": False}]
    messages = build_policy_prompt("elements", "Turn on Wi-Fi", ["Opened Settings"], [HINT], elements)

    [user] = messages  # no system message: the embedded policy was pretrained without one
    user_text = user["content"][-1]["text"]
    lines = user_text.splitlines()
    rows = lines[lines.index("- Network & internet #0"):][:5]
    assert rows == ["- Network & internet #0", "- Search settings #1", "- (Switch) [on] #2", "- Display #3",
                    "- Dark theme [off] #4"]
    assert user_text.rstrip().endswith("Task: Turn on Wi-Fi")
    assert "- Go to Network & internet, then Wi-Fi" in user_text  # compact: summaries only
    assert "Key Mistake" not in user_text
    assert lines.index("Hints:") < lines.index("Done:") < lines.index("- Network & internet #0")
    assert _images(messages) == []  # the embedded element-list policy is text-only by default
    assert _images(build_policy_prompt("elements", "Go", [], [], elements, with_image=True)) == [{"type": "image"}]


def test_element_prompt_without_image_and_errors():
    messages = build_policy_prompt("elements", "Go back", [], [], ["OK"], with_image=False)
    assert _images(messages) == []
    with pytest.raises(ValueError, match="element list"):
        build_policy_prompt("elements", "Go back", [], [])
    with pytest.raises(ValueError, match="always shows the screenshot"):
        build_policy_prompt("qwen3vl", "Go back", [], [], with_image=False)
    with pytest.raises(ValueError, match="instruction is empty"):
        build_policy_prompt("guiowl", "  ", [], [])
    with pytest.raises(ValueError):
        build_policy_prompt("unknown-style", "Go back", [], [])


@pytest.mark.parametrize("style", list(PromptStyle))
@pytest.mark.parametrize("history", [[], ["- Settings #3", "type {'text': 'hi'}"]])
def test_without_hints_gives_the_prompt_of_an_unhinted_attempt(style, history):
    second = Hint(attempt=3, key_mistake="k", what_to_avoid=[], suggested_approach=[], important_insights=[],
                  hint_summary="On 'display', click 'Dark theme'.")
    elements = [{"text": "Display", "grid": [0, 0, 1000, 90]},
                {"text": "Dark theme", "checkable": True, "checked": False, "grid": [0, 100, 1000, 190]}]
    memory = None
    if style == PromptStyle.MOBILEWIZARD:  # its history is the step memory, not history lines
        memory, history = ReasoningMemory(), []
        memory.update(ParsedOutput(Action(ActionType.WAIT), reasoning=ReasoningParts("ok", "Display", "plan", "tap")),
                      "success")
    hinted = build_policy_prompt(style, "Turn on dark theme", history, [HINT, second], elements, screen="display",
                                 memory=memory)
    plain = build_policy_prompt(style, "Turn on dark theme", history, [], elements, screen="display", memory=memory)
    assert hinted != plain
    if style == PromptStyle.ELEMENTS:
        assert "- Dark theme [off] #1 (hint)\n" in _text(hinted) and "(hint)" not in _text(plain)
    assert without_hints(hinted, 2) == plain
    assert without_hints(plain, 0) == plain


def test_rows_are_marked_only_for_hints_naming_them_on_this_screen():
    elements = [{"text": "Wi-Fi\nConnected"}, {"text": "Bluetooth"}, {"desc": "Wi-Fi"}, "Wi-Fi"]
    on_network = "On 'network', click 'Wi-Fi'."
    assert hinted_rows([on_network], "network", elements) == {0, 2}  # by first text line or description
    assert hinted_rows([on_network], "display", elements) == set()  # a stale hint marks nothing
    assert hinted_rows(["Avoid click 'Bluetooth' on 'network'.", "Finish every part of the task before terminating.",
                        "Tap Bluetooth next time"], "network", elements) == set()


@pytest.mark.parametrize("fix, target", [
    (Action(ActionType.CLICK, element=1), ("home", "Ana's phone")),
    (Action(ActionType.LONG_PRESS, element=1), ("home", "Ana's phone")),
    (Action(ActionType.TYPE, text="it's 'fine'", element=0), ("home", "Name")),
    (Action(ActionType.TYPE, text="hello"), None),  # no field named
    (Action(ActionType.SYSTEM_BUTTON, button="back"), None),
    (Action(ActionType.ANSWER, text="42"), None),
    (Action(ActionType.OPEN_APP, app="Clock"), None),
])
def test_hint_targets_read_the_element_the_critic_names(fix, target):
    elements = [{"text": "Name", "grid": [0, 0, 1000, 90]}, {"text": "Ana's phone", "grid": [0, 100, 1000, 190]}]
    summary = corrective_summary("home", describe_step_action(fix, elements), "click 'Name'")
    assert hint_targets(summary) == ([target] if target else [])
    assert hint_targets(corrective_summary("home", None, describe_step_action(fix, elements))) == []


def test_plan_hint_names_one_element_per_step_and_marks_each_on_its_screen():
    fixes = [("launcher", "click 'Notes'"), ("folders", "click 'Work. On 'x', y'"), ("folder", "pressing back"),
             ("note", "typing 'it's 'ok'. On' into 'Title'")]
    summary = plan_summary("launcher", fixes, "click 'Clock'")
    assert summary == ("On 'launcher', click 'Notes'. On 'folders', click 'Work. On 'x', y'. "
                       "On 'folder', pressing back. On 'note', typing 'it's 'ok'. On' into 'Title'.")
    assert hint_targets(summary) == [("launcher", "Notes"), ("note", "Title")]  # the odd name is lost, never misread
    assert plan_summary("launcher", [], "click 'Clock'") == "Avoid click 'Clock' on 'launcher'."
    rows = [{"text": "Title"}, {"text": "Notes"}]
    assert hinted_rows([summary], "note", rows) == {0}
    assert hinted_rows([summary], "launcher", rows) == {1}


def test_image_placeholders_are_filled_with_data_urls_and_redacted_back():
    messages = build_policy_prompt("qwen3vl", "Turn on Wi-Fi", [], [])
    png = solid_png()

    filled = fill_image_placeholders(messages, [png])

    [part] = _images(filled)
    assert part == {"type": "image_url", "image_url": {"url": png_data_url(png)}}
    assert _images(messages) == [{"type": "image"}]  # the input is not modified
    assert redact_images(filled) == messages
    with pytest.raises(ValueError, match="1 image placeholder"):
        fill_image_placeholders(messages, [png, png])


def test_png_data_url_rejects_non_png():
    with pytest.raises(ValueError, match="PNG"):
        png_data_url(b"GIF89a....")


def _field_names(model: type[BaseModel]) -> set[str]:
    names = set(model.model_fields)
    for info in model.model_fields.values():
        annotation = info.annotation
        for arg in getattr(annotation, "__args__", ()) + (annotation,):
            if isinstance(arg, type) and issubclass(arg, BaseModel):
                names |= _field_names(arg)
    return names


STEPS = [CriticStep(1, "click", "element 3 'Display'"),
         CriticStep(2, "system_button", "back", StepDescription(action_description="Went back",
                                                                 ui_description="Display settings"))]
DECISION = FinalDecision.model_validate({
    "decision": 0, "reason": "Wi-Fi stayed off", "failure_step": 1, "task_feasible": True,
    "step_analysis": {"1": {"reasonableness": "unreasonable", "explanation": "wrong menu"},
                      "2": {"reasonableness": "reasonable", "explanation": "recovers"}},
})


@pytest.mark.parametrize(
    ("messages", "model", "n_images"),
    [
        (build_step_description_prompt("Turn on Wi-Fi", "click", "element 3", solid_png()), StepDescription, 1),
        (build_final_decision_prompt("Turn on Wi-Fi", STEPS, solid_png()), FinalDecision, 1),
        (build_corrective_hint_prompt("Turn on Wi-Fi", STEPS, DECISION), CorrectiveHintOutput, 0),
        (build_curriculum_prompt("Settings", "Turn on Wi-Fi", [solid_png(), solid_png()]), CurriculumOutput, 2),
    ],
    ids=["step_description", "final_decision", "corrective_hint", "curriculum"],
)
def test_each_prompt_names_every_output_field_and_carries_its_images(messages, model, n_images):
    text = _text(messages)
    missing = sorted(name for name in _field_names(model) if f'"{name}"' not in text)
    assert missing == []
    assert "JSON" in messages[0]["content"]
    images = _images(messages)
    assert len(images) == n_images
    assert all(p["image_url"]["url"].startswith("data:image/png;base64,") for p in images)


def test_final_decision_prompt_lists_steps_and_descriptions():
    text = _text(build_final_decision_prompt("Turn on Wi-Fi", STEPS, solid_png()))
    assert "Step 1: [click] element 3 'Display'" in text
    assert "Step 2: [system_button] back\n  Action: Went back\n  Screen before: Display settings" in text
    assert "each of the 2 steps" in text


def test_corrective_hint_prompt_carries_judgements_and_outcome():
    text = _text(build_corrective_hint_prompt("Turn on Wi-Fi", STEPS, DECISION))
    assert "Judged unreasonable: wrong menu" in text and "Judged reasonable: recovers" in text
    assert "failed (at step 1). Wi-Fi stayed off" in text


def test_final_decision_quality_and_labels():
    assert DECISION.reasonable_fraction() == 0.5
    labels = DECISION.step_labels()
    assert [(s.step, s.reasonable) for s in labels] == [(1, False), (2, True)]
    assert FinalDecision.model_validate({**DECISION.model_dump(), "decision": True}).decision == 1


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"failure_step": None}, "failure_step is required"),
        ({"failure_step": 7}, "not one of the analysed steps"),
        ({"reasonable_steps": [1, 2]}, "reasonable_steps [1, 2] disagrees"),
        ({"decision": 2}, "decision"),
    ],
)
def test_final_decision_rejects_inconsistent_answers(change, message):
    with pytest.raises(ValidationError, match=message.replace("[", r"\[").replace("]", r"\]")):
        FinalDecision.model_validate({**DECISION.model_dump(), **change})


def test_final_decision_context_requires_every_step():
    data = DECISION.model_dump()
    FinalDecision.model_validate(data, context={"n_steps": 2})
    with pytest.raises(ValidationError, match=r"missing \[3\]"):
        FinalDecision.model_validate(data, context={"n_steps": 3})


def test_corrective_hint_output_becomes_a_hint_for_the_next_prompt():
    output = CorrectiveHintOutput.model_validate({
        "key_mistake": HINT.key_mistake, "what_to_avoid": HINT.what_to_avoid,
        "suggested_approach": HINT.suggested_approach, "important_insights": HINT.important_insights,
        "hint_summary": HINT.hint_summary,
    })
    assert output.to_hint(2) == HINT
    with pytest.raises(ValidationError, match="hint_summary"):
        CorrectiveHintOutput.model_validate({"key_mistake": "x", "hint_summary": ""})


def _curriculum(n_tasks: int, budget: int = 5) -> dict:
    return {
        "evaluation": {
            "task_reasonable": True, "task_completed": True, "confidence_score": 0.9,
            "step_quality_analysis": {"total_steps": 4, "reasonable_steps": 3, "trajectory_quality_score": 0.75},
        },
        "generated_tasks": [
            {"task_id": f"task_{i}", "instruction": f"Do thing {i}", "step_budget": budget,
             "core_functionality": "toggles", "variation_type": "Parameter change", "prerequisites": ["none"]}
            for i in range(n_tasks)
        ],
    }


def test_curriculum_output_normalises_and_checks_bounds():
    out = CurriculumOutput.model_validate(_curriculum(3))
    assert out.generated_tasks[0].variation_type == "parameter_change"
    assert out.generated_tasks[0].prerequisites == "none"
    with pytest.raises(ValidationError, match="expected 3 to 8"):
        CurriculumOutput.model_validate(_curriculum(2))
    CurriculumOutput.model_validate(_curriculum(1), context=curriculum_context(min_tasks=1, max_tasks=2))
    with pytest.raises(ValidationError, match="exceeds 40"):
        CurriculumOutput.model_validate(_curriculum(3, budget=41))


def test_curriculum_prompt_includes_existing_tasks_and_bounds():
    text = _text(build_curriculum_prompt(
        "Settings", "Turn on Wi-Fi", [solid_png()], step_summaries=["Tap Network"],
        existing_tasks=["Turn off Bluetooth"], min_tasks=2, max_tasks=4, max_steps=20,
    ))
    assert "- Turn off Bluetooth" in text and "1. Tap Network" in text
    assert "Write 2 to 4 new tasks" in text and "between 1 and 20 steps" in text


def test_steps_without_an_element_go_on_the_last_line_of_their_screen():
    plan = ("On 'launcher', click 'Clock'. On 'main', swiping up. On 'main', answering '13:30'. "
            "On 'edit', typing '15'. On 'edit', typing 'Ana' into 'Name'. On 'main', finish the task.")
    assert hint_actions(plan) == [("main", "swiping up"), ("main", "answering '13:30'"), ("edit", "typing '15'"),
                                  ("main", "finish the task")]
    assert hinted_actions([plan, "On 'main', swiping up."], "main") == [
        "swiping up", "answering '13:30'", "finish the task"]
    assert hinted_actions([plan], "launcher") == [] and hinted_actions(["Avoid swiping up on 'main'."], "main") == []
    assert hinted_texts([plan]) == (["15", "Ana"], ["13:30"])
    elements = [{"text": "Alarms", "grid": [0, 0, 1000, 90]}]
    hint = Hint(attempt=1, key_mistake="k", what_to_avoid=[], suggested_approach=[], important_insights=[],
                hint_summary=plan)
    text = _text(build_policy_prompt("elements", "Check my alarm", [], [hint], elements, screen="main"))
    assert text.endswith("\nTask: Check my alarm\nHint: swiping up / answering '13:30' / finish the task")
    assert without_hints(build_policy_prompt("elements", "Check my alarm", [], [hint], elements, screen="main"), 1) \
        == build_policy_prompt("elements", "Check my alarm", [], [], elements, screen="main")
