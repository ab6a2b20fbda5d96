"""Policy step prompts: the corrective-hint block and each agent's hint-contextualized step
prompt (MobileForge appendix G.3, prompts 5–7), MobileWizard's structured-reasoning prompt with
step memory (MobileWizard §3.3), plus a compact element-list prompt for the embedded tiny policy.

`build_policy_prompt` is a pure function of the step's text inputs; the screenshot is a
`{"type": "image"}` placeholder that the backend fills (see `ops.agent.messages`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from enum import Enum
from typing import Any

from ops.actions.formats import label_echo
from ops.actions import GRID, SYSTEM_BUTTONS
from ops.agent.episode import Hint
from ops.agent.hint_marks import hinted_actions, hinted_rows
from ops.agent.messages import IMAGE_PLACEHOLDER, Message
from ops.agent.reasoning_memory import ReasoningMemory


class PromptStyle(str, Enum):
    QWEN3VL = "qwen3vl"  # MobileForge prompt 6
    GUIOWL = "guiowl"  # MobileForge prompt 7
    ELEMENTS = "elements"  # compact element-list prompt for the tiny embedded model
    MOBILEWIZARD = "mobilewizard"  # MobileWizard §3.3: four-part reasoning, memory between steps


def writes_structured_reasoning(style: PromptStyle | str) -> bool:
    """Whether the style writes MobileWizard's four-part reasoning and keeps a memory between steps (§3.3)."""
    return PromptStyle(style) == PromptStyle.MOBILEWIZARD


# Name of the `ops.actions` format that parses each style's answers.
OUTPUT_FORMATS: dict[PromptStyle, str] = {
    PromptStyle.QWEN3VL: "qwen3vl",
    PromptStyle.GUIOWL: "guiowl",
    PromptStyle.ELEMENTS: "label_echo",
    PromptStyle.MOBILEWIZARD: "mobilewizard",
}

HINTS_HEADER = "EVALUATION HINTS FROM PREVIOUS ATTEMPTS"
HINTS_LABEL = "Hints:"  # first context line of the element-list prompt when it carries hints
HINTS_FOOTER = "END OF EVALUATION HINTS"


def _bullets(items: Sequence[str]) -> list[str]:
    return [f"- {item}" for item in items]


def render_hint_block(hints: Sequence[Hint]) -> str:
    """The corrective-hint context of earlier attempts (MobileForge prompt 5); "" without hints."""
    if not hints:
        return ""
    lines = [
        HINTS_HEADER,
        "These notes come from reviewing earlier attempts at this task that did not go well.",
        "Read them before acting so that the same mistakes are not made again.",
    ]
    for hint in hints:
        lines += ["", f"--- Hint from Attempt #{hint.attempt} ---", f"Summary: {hint.hint_summary}"]
        lines.append(f"Key Mistake: {hint.key_mistake}")
        for title, items in (
            ("What to Avoid", hint.what_to_avoid),
            ("Suggested Approach", hint.suggested_approach),
            ("Important Insights", hint.important_insights),
        ):
            if items:
                lines += [f"{title}:", *_bullets(items)]
    lines += ["", HINTS_FOOTER]
    return "\n".join(lines)


def _numbered(items: Sequence[str]) -> str:
    return "\n".join(f"{i}. {item}" for i, item in enumerate(items, start=1))


def _with_hints(instruction: str, hints: Sequence[Hint]) -> str:
    block = render_hint_block(hints)
    return f"{instruction}\n\n{block}" if block else instruction


_BUTTONS = ", ".join(SYSTEM_BUTTONS)

QWEN3VL_SYSTEM = f"""You operate a mobile phone to help the user finish a task, one step at a time, looking at the current screenshot.
You have one tool, mobile_use. Its "action" is one of click, long_press, swipe, type, answer, system_button, wait, terminate. Other arguments:
- "coordinate": [x, y] on a 0-{GRID} grid over the screen (click, long_press, start of a swipe);
- "coordinate2": [x, y], where a swipe ends;
- "text": what to type, or the answer to a question;
- "button": one of {_BUTTONS} (system_button);
- "time": seconds (wait, long_press);
- "status": "success" or "failure" (terminate).
Reply in exactly this form:
<thinking>your reasoning about the screen and the next step</thinking>
<tool_call>{{"name": "mobile_use", "arguments": {{...}}}}</tool_call>
<conclusion>UI observation: ... Intended action: ...</conclusion>
When the task is done, terminate with status "success"; if it cannot be done, terminate with status "failure".
If the screen and the record of earlier operations disagree, believe the screen.
If the task description carries hints from earlier attempts, use them so that their mistakes are not repeated."""

GUIOWL_SYSTEM = f"""You can use the mobile_use tool. Its "action" is one of key, click, long_press, swipe, type, system_button, open, wait, answer, terminate. Points are [x, y] on a 0-{GRID} grid over the screen ("coordinate", and "coordinate2" for the end of a swipe); "text" holds typed text, answers, app names and keys; "button" is one of {_BUTTONS}; "time" is in seconds; "status" is "success" or "failure".
For each step, output:
Action: <a short imperative describing the step>
<tool_call>{{"name": "mobile_use", "arguments": {{...}}}}</tool_call>"""

MEMORY_MARKER = "\n\nMemory of earlier steps:\n"  # the memory closes the mobilewizard prompt's text

MOBILEWIZARD_SYSTEM = f"""You operate a mobile phone to finish the user's task, one step at a time, looking at the current screenshot.
Reason in four parts, in this order, each in its own tag, all inside <think>:
<self_verification>Did the previous action succeed? Did the screen change as expected, and is the task closer to done?</self_verification>
<screen_analysis>The important elements on this screen and any information the task needs.</screen_analysis>
<planning>The sub-task to pursue now.</planning>
<action_guidance>The exact action to take now: its type and target.</action_guidance>
Then give exactly one action inside <answer>, one of:
CLICK(x, y) | LONG_PRESS(x, y) | SWIPE((x1, y1), (x2, y2)) | TYPE(content="...") | OPEN_APP(app="...") | WAIT(second="...") | System_Button(Back) | System_Button(Home) | System_Button(Enter) | System_Button(Recent) | Terminate(status="success") | Terminate(status="failure") | Answer(content="...")
Points are on a 0-{GRID} grid over the screen. Reply with <think>...</think> followed by <answer>...</answer> and nothing else.
Your memory of earlier steps comes with the task; if the screen and the memory disagree, believe the screen."""

# Keys of phonesim's element dicts and of uiautomator dumps (adb), most telling first.
_ELEMENT_TEXT_KEYS = ("text", "desc", "content-desc", "content_desc", "label")
_ELEMENT_KIND_KEYS = ("class", "cls", "role")


def element_label(element: str | Mapping[str, Any]) -> str:
    """Visible text of one element (its text, else content description, else its widget kind),
    plus its on/off state when it is checkable."""
    if isinstance(element, str):
        return element
    label = "(unlabelled)"
    for key in _ELEMENT_TEXT_KEYS:
        value = element.get(key)
        if isinstance(value, str) and value.strip():
            label = " ".join(value.split())
            break
    else:
        for key in _ELEMENT_KIND_KEYS:
            value = element.get(key)
            if isinstance(value, str) and value.strip():
                label = f"({value.rsplit('.', 1)[-1]})"
                break
    if element.get("checkable"):
        label += " [on]" if element.get("checked") else " [off]"
    return label


def render_element_list(elements: Sequence[str | Mapping[str, Any]]) -> str:
    """One `[index] label` line per element; the index is what `Action.element` refers to."""
    return "\n".join(f"[{i}] {element_label(e)}" for i, e in enumerate(elements))


def _qwen3vl(instruction: str, history: Sequence[str], hints: Sequence[Hint]) -> list[Message]:
    progress = _numbered(history) if history else "None yet."
    text = (
        f"The user query: {_with_hints(instruction, hints)}\n\n"
        f"Task progress (operations already performed on this device):\n{progress}"
    )
    return [
        {"role": "system", "content": QWEN3VL_SYSTEM},
        {"role": "user", "content": [{"type": "text", "text": text}, dict(IMAGE_PLACEHOLDER)]},
    ]


def _guiowl(instruction: str, history: Sequence[str], hints: Sequence[Hint]) -> list[Message]:
    previous = _numbered(history) if history else "No previous action."
    text = (
        "Please generate the next move according to the UI screenshot, instruction and previous actions.\n\n"
        f"Instruction: {_with_hints(instruction, hints)}\n\n"
        f"Previous actions:\n{previous}"
    )
    return [
        {"role": "system", "content": GUIOWL_SYSTEM},
        {"role": "user", "content": [{"type": "text", "text": text}, dict(IMAGE_PLACEHOLDER)]},
    ]


def _mobilewizard(instruction: str, hints: Sequence[Hint], memory: ReasoningMemory) -> list[Message]:
    text = f"Task: {_with_hints(instruction, hints)}{MEMORY_MARKER}{memory.render()}"
    return [
        {"role": "system", "content": MOBILEWIZARD_SYSTEM},
        {"role": "user", "content": [{"type": "text", "text": text}, dict(IMAGE_PLACEHOLDER)]},
    ]


def with_memory(messages: Sequence[Message], memory: ReasoningMemory) -> list[Message]:
    """A stored mobilewizard step prompt with `memory` in place of the memory it showed, everything
    else byte-identical; ValueError when no text part holds the memory section."""
    out = [dict(message) for message in messages]
    for message in out:
        content = message.get("content")
        for k, part in enumerate(content if isinstance(content, list) else []):
            text = part.get("text") if isinstance(part, dict) and part.get("type") == "text" else None
            if isinstance(text, str) and MEMORY_MARKER in text:
                head = text[:text.rindex(MEMORY_MARKER) + len(MEMORY_MARKER)]  # the memory ends the text
                message["content"] = [*content[:k], dict(part, text=head + memory.render()), *content[k + 1:]]
                return out
    raise ValueError("not a mobilewizard step prompt: no text part holds the 'Memory of earlier steps:' section")


def element_context(hint_summaries: Sequence[str], history: Sequence[str]) -> list[str]:
    """Context lines of the element-list prompt: hint summaries, then the steps done so far.

    Base-policy pretraining builds its episode-context samples with this same function, so its
    prompts match rollout prompts byte for byte.
    """
    context = []
    if hint_summaries:  # one line per hint, so `without_hints` can take them out exactly
        context += [HINTS_LABEL, *_bullets([" ".join(h.split()) for h in hint_summaries])]
    if history:
        context += ["Done:", _numbered(history)]
    return context


def _elements(
    instruction: str,
    history: Sequence[str],
    hints: Sequence[Hint],
    elements: Sequence[str | Mapping[str, Any]],
    screen: str,
    with_image: bool,
) -> list[Message]:
    # The label-echo format of the pretrained tiny policy (ops.actions.formats.label_echo):
    # element rows (those a hint names on this screen marked), then the instruction last;
    # hints and progress go before the rows.
    summaries = [h.hint_summary for h in hints]
    text = label_echo.prompt_text([element_label(e) for e in elements], instruction,
                                  element_context(summaries, history), hinted_rows(summaries, screen, elements),
                                  hinted_actions(summaries, screen))
    content: list[dict[str, Any]] = [dict(IMAGE_PLACEHOLDER)] if with_image else []
    content.append({"type": "text", "text": text})
    return [{"role": "user", "content": content}]


def without_hints(messages: Sequence[Message], n_hints: int) -> list[Message]:
    """The same step prompt as if the attempt had carried no hints: the hint block of any style
    taken out, everything else byte-identical (`n_hints`: how many hints the prompt carries)."""
    out = []
    for message in messages:
        content = message.get("content")
        if isinstance(content, list):
            content = [dict(part, text=_strip_hint_text(part["text"], n_hints)) if part.get("type") == "text" else part
                       for part in content]
        elif isinstance(content, str):
            content = _strip_hint_text(content, n_hints)
        out.append({**message, "content": content})
    return out


def _strip_hint_text(text: str, n_hints: int) -> str:
    start = text.find(HINTS_HEADER)
    if start >= 0:  # prompt-5 block appended to the instruction after a blank line
        end = text.index(HINTS_FOOTER, start) + len(HINTS_FOOTER)
        return text[:start].removesuffix("\n\n") + text[end:]
    if n_hints and text.startswith(HINTS_LABEL + "\n"):  # element-list prompt: hint lines and row marks
        return label_echo.strip_hint_marks("\n".join(text.split("\n")[1 + n_hints:]))
    return text


def build_policy_prompt(
    style: PromptStyle | str,
    instruction: str,
    history: Sequence[str],
    hints: Sequence[Hint],
    elements: Sequence[str | Mapping[str, Any]] | None = None,
    *,
    screen: str = "",
    with_image: bool | None = None,
    memory: ReasoningMemory | None = None,
) -> list[Message]:
    """Chat messages for one policy step.

    `history` is the list of earlier step conclusions of this attempt (the mobilewizard style
    carries its history in `memory` instead, and needs one: empty on the first step), `hints` the corrective
    hints of earlier attempts (rendered as the prompt-5 block, or as one-line summaries in the
    compact style; there the rows a hint names on `screen`, the observation's screen, are
    marked). The screenshot is one `{"type": "image"}` placeholder. `with_image` defaults
    to True except for the element-list style, whose embedded tiny policy is pretrained
    text-only (a screenshot it never saw shifts every text position; measured: echoed-label
    accuracy 0.74 -> 0.50), so it reads the element list, like accessibility-tree agents.
    """
    style = PromptStyle(style)
    if with_image is None:
        with_image = style != PromptStyle.ELEMENTS
    if not instruction.strip():
        raise ValueError("instruction is empty")
    if style == PromptStyle.MOBILEWIZARD:
        if memory is None:
            raise ValueError("the 'mobilewizard' prompt style needs memory= (a ReasoningMemory, empty on the first step)")
        if history:
            raise ValueError("the 'mobilewizard' prompt style keeps its history in memory; history lines would be lost")
    elif memory is not None:
        raise ValueError(f"the {style.value!r} prompt style has no place for reasoning memory")
    if style == PromptStyle.ELEMENTS:
        if elements is None:
            raise ValueError("the 'elements' prompt style needs the observation's element list")
        return _elements(instruction, history, hints, elements, screen, with_image)
    if not with_image:
        raise ValueError(f"the {style.value!r} prompt style always shows the screenshot")
    if style == PromptStyle.QWEN3VL:
        return _qwen3vl(instruction, history, hints)
    if style == PromptStyle.MOBILEWIZARD:
        return _mobilewizard(instruction, hints, memory)
    return _guiowl(instruction, history, hints)
