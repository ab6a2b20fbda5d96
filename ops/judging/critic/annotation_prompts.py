"""The reasoning-annotation prompt (MobileWizard App. C.1) and its JSON answer: a VLM sees the
previous, current and next screen of a kept step, with the step's action marked on the current
one, and writes the four parts of structured reasoning the agent should have thought before acting,
with a confidence score.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, Field

from ops.actions import ReasoningParts
from ops.judging.critic.prompts import Text
from ops.agent.messages import Message, system, user

ANNOTATION_SYSTEM = (
    "You annotate the step-by-step reasoning of an agent that operates a mobile phone. For one step you see "
    "the screens around it and the action the agent took, which was a good one. Write the reasoning that "
    "leads to that action, as the agent would think it before acting. Answer with JSON only."
)


class ReasoningAnnotationOutput(BaseModel):
    """The four parts of one step's reasoning (MobileWizard §3.3) and the annotator's confidence."""

    self_verification: Text
    screen_analysis: Text
    planning: Text
    action_guidance: Text
    confidence: float = Field(ge=0, le=1)

    def parts(self) -> ReasoningParts:
        return ReasoningParts(self.self_verification.strip(), self.screen_analysis.strip(), self.planning.strip(),
                              self.action_guidance.strip())


def _screens(has_previous: bool, has_next: bool) -> str:
    shown = (["the previous screen"] if has_previous else []) + ["the current screen, with the action marked in red"] \
        + (["the screen after the action"] if has_next else [])
    missing = (" There is no previous screen: this is the attempt's first step." if not has_previous else "") + \
        (" No screen was recorded after the action." if not has_next else "")
    return f"The image shows, from left to right: {'; '.join(shown)}.{missing}"


def build_reasoning_annotation_prompt(task: str, earlier_steps: Sequence[str], action: str, screens_png: bytes, *,
                                      has_previous: bool, has_next: bool) -> list[Message]:
    """MobileWizard App. C.1: annotate one step from its screens (`step_context_panel`), the task,
    the steps before it (one line each, numbered) and its action in words."""
    earlier = "\n".join(earlier_steps) or "(none: this is the first step)"
    text = f"""The task: {task}

The steps the agent took before this one:
{earlier}

The action of this step: {action}

{_screens(has_previous, has_next)}

Write the agent's reasoning for this step in four parts:
1. self_verification: comparing the previous and the current screen, did the previous action succeed, did the screen change as expected, and is the task closer to done? On the first step, say that nothing has been done yet.
2. screen_analysis: the important elements of the current screen and any information the task needs.
3. planning: the sub-task to pursue now, from the task, the screens and how such apps work.
4. action_guidance: the exact action to take now, its type and its target: the action above, in words.
Rate your confidence in this annotation from 0 (a guess) to 1 (certain).

Return JSON:
{{
  "self_verification": "...",
  "screen_analysis": "...",
  "planning": "...",
  "action_guidance": "...",
  "confidence": a number from 0 to 1
}}"""
    return [system(ANNOTATION_SYSTEM), user(text, [screens_png])]
