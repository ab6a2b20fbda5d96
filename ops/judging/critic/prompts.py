"""Hierarchical critic prompts and their JSON outputs (MobileForge appendix G.2, prompts 2–4):
per-step descriptions → final decision with step-level reasonableness → corrective hint.

Steps are numbered from 1 in every prompt and output. Output models validate against an
optional pydantic validation context `{"n_steps": N}` so an answer that skips or invents
steps is rejected (and repaired by the LLM client).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, ValidationInfo, field_validator, model_validator

from ops.actions.excerpt import excerpt
from ops.agent.episode import Hint, StepLabel
from ops.agent.messages import Message, system, user

Text = Annotated[str, Field(min_length=1)]  # a required, non-empty string


# --- outputs ---------------------------------------------------------------------------


class StepDescription(BaseModel):
    """Prompt 2 output: what the action did and what the screen showed before it."""

    action_description: Text
    ui_description: Text


class StepJudgement(BaseModel):
    reasonableness: Literal["reasonable", "unreasonable"]
    explanation: str

    @field_validator("reasonableness", mode="before")
    @classmethod
    def _lower(cls, value: Any) -> Any:
        return value.strip().lower() if isinstance(value, str) else value


class FinalDecision(BaseModel):
    """Prompt 3 output: outcome z_k, feasibility, failure step and per-step labels l_k^t."""

    decision: Literal[0, 1]
    reason: Text
    failure_step: int | None = None
    task_feasible: bool
    task_feasible_reason: str = ""
    task_barriers: list[str] = Field(default_factory=list)
    reasonable_steps: list[int] = Field(default_factory=list)
    unreasonable_steps: list[int] = Field(default_factory=list)
    step_analysis: dict[int, StepJudgement]

    @field_validator("decision", mode="before")
    @classmethod
    def _bool_decision(cls, value: Any) -> Any:
        return int(value) if isinstance(value, bool) else value

    @model_validator(mode="after")
    def _consistent(self, info: ValidationInfo) -> FinalDecision:
        n_steps = (info.context or {}).get("n_steps")
        steps = set(self.step_analysis)
        if n_steps is not None:
            _check_covers(steps, n_steps)
        if self.failure_step is not None and self.failure_step not in steps:
            raise ValueError(f"failure_step {excerpt(self.failure_step)} is not one of the analysed steps")
        if self.decision == 0 and steps and self.failure_step is None:
            raise ValueError("failure_step is required when decision is 0")
        labelled = {k for k, v in self.step_analysis.items() if v.reasonableness == "reasonable"}
        for name, listed, expected in (
            ("reasonable_steps", self.reasonable_steps, labelled),
            ("unreasonable_steps", self.unreasonable_steps, steps - labelled),
        ):
            if listed and set(listed) != expected:
                raise ValueError(f"{name} {excerpt(sorted(set(listed)))} disagrees with step_analysis "
                                 f"({excerpt(sorted(expected))})")
        return self

    def reasonable_fraction(self) -> float:
        """Q_k: fraction of steps judged reasonable (MobileForge eq. 12); 0 for no steps."""
        if not self.step_analysis:
            return 0.0
        good = sum(v.reasonableness == "reasonable" for v in self.step_analysis.values())
        return good / len(self.step_analysis)

    def step_labels(self) -> list[StepLabel]:
        """Per-step labels in step order (steps numbered from 1, as in the prompt)."""
        return [
            StepLabel(step=k, reasonable=v.reasonableness == "reasonable", rationale=v.explanation)
            for k, v in sorted(self.step_analysis.items())
        ]


def _check_covers(steps: set[int], n_steps: int) -> None:
    """ValueError unless `steps` is exactly 1..n_steps; work in the size of `steps`, whatever `n_steps` is."""
    unexpected = sorted(s for s in steps if not 1 <= s <= n_steps)
    n_missing = n_steps - (len(steps) - len(unexpected))
    if unexpected or n_missing:
        # the first missing steps lie among the first len(steps) + 5 numbers
        missing = [s for s in range(1, min(n_steps, len(steps) + 5) + 1) if s not in steps][:5]
        more = f" and {n_missing - len(missing)} more" if n_missing > len(missing) else ""
        raise ValueError(f"step_analysis must cover steps 1..{n_steps} exactly (missing {missing}{more}, "
                         f"unexpected {excerpt(unexpected)})")


class CorrectiveHintOutput(BaseModel):
    """Prompt 4 output: the self-reflection hint h_k carried into later attempts."""

    key_mistake: Text
    what_to_avoid: list[str] = Field(default_factory=list)
    suggested_approach: list[str] = Field(default_factory=list)
    important_insights: list[str] = Field(default_factory=list)
    hint_summary: Text

    def to_hint(self, attempt: int) -> Hint:
        return Hint(
            attempt=attempt,
            key_mistake=self.key_mistake,
            what_to_avoid=list(self.what_to_avoid),
            suggested_approach=list(self.suggested_approach),
            important_insights=list(self.important_insights),
            hint_summary=self.hint_summary,
        )


# --- inputs ----------------------------------------------------------------------------


@dataclass(frozen=True)
class CriticStep:
    """One step as the critic sees it: the raw action log and, once described, its description."""

    number: int  # 1-based
    action_type: str
    action_detail: str
    description: StepDescription | None = None


def _step_line(step: CriticStep) -> str:
    line = f"Step {step.number}: [{step.action_type}] {step.action_detail}"
    if step.description is not None:
        line += (
            f"\n  Action: {step.description.action_description}"
            f"\n  Screen before: {step.description.ui_description}"
        )
    return line


# --- prompt 2: step description ----------------------------------------------------------

STEP_DESCRIPTION_SYSTEM = (
    "You are an expert assistant for mobile devices. You are shown one image with two panels: the "
    "screen before an action (left) and after it (right). Describe the screen from the before panel "
    "only. Answer with JSON only."
)


def build_step_description_prompt(
    task: str, action_type: str, action_detail: str, before_after_png: bytes
) -> list[Message]:
    """MobileForge prompt 2: describe one visualised action (markers drawn on the two-panel image)."""
    text = f"""The overall task is: {task}

The image shows the screen before and after one action. Markers on it show where the action happened. The raw action log is:
- Action type: {action_type}
- Action detail: {action_detail}

Return JSON:
{{
  "action_description": "one crisp sentence saying what the action did",
  "ui_description": "the task-relevant UI elements visible before the action"
}}"""
    return [system(STEP_DESCRIPTION_SYSTEM), user(text, [before_after_png])]


# --- prompt 3: final decision ------------------------------------------------------------

FINAL_DECISION_SYSTEM = """You are an expert judge of mobile UI automation attempts.
Judge by these rules:
- The task succeeds only if the final state meets every requirement of the task.
- A requirement that already held before the attempt counts as met; it need not be done again.
- A logically correct sequence of actions can show success even when the last screen alone does not.
- The agent may make mistakes and correct them.
- If the task cannot be done at all, the agent succeeds by recognising that and saying so appropriately.
Answer with JSON only."""


def build_final_decision_prompt(
    task: str, steps: Sequence[CriticStep], final_screens_png: bytes
) -> list[Message]:
    """MobileForge prompt 3: outcome, feasibility, failure step and a label for every step."""
    breakdown = "\n".join(_step_line(s) for s in steps) or "(the agent took no steps)"
    text = f"""Task description: {task}

Below is the agent's attempt step by step: the raw action log of each step and a description of it.

{breakdown}

The attached image is a composite of the last screenshots of the attempt. Weigh it together with the full list of steps.

Assess:
1. Whether the attempt completed the task (decision 1) or not (decision 0).
2. Whether the task itself can be done in this app.
3. If the attempt failed, the step where it went wrong (failure_step).
4. For every step, whether it was reasonable (it moved the task forward) or unreasonable (unnecessary, wrong, counterproductive, looping, or moving back without need), with a short explanation.

Return JSON:
{{
  "decision": 1 or 0,
  "reason": "why you judged it so",
  "failure_step": step number or null,
  "task_feasible": true or false,
  "task_feasible_reason": "why the task can or cannot be done",
  "task_barriers": ["anything that blocks the task"],
  "reasonable_steps": [step numbers],
  "unreasonable_steps": [step numbers],
  "step_analysis": {{
    "1": {{"reasonableness": "reasonable" or "unreasonable", "explanation": "..."}}
  }}
}}
step_analysis must have one entry for each of the {len(steps)} steps."""
    return [system(FINAL_DECISION_SYSTEM), user(text, [final_screens_png])]


# --- prompt 4: corrective hint -----------------------------------------------------------

CORRECTIVE_HINT_SYSTEM = (
    "You are an agent reflecting on your own attempt at a task on a mobile phone. Using the "
    "judgement of each step, find your mistakes and wasted steps and draw lessons for the next "
    "attempt. Answer with JSON only."
)


def build_corrective_hint_prompt(task: str, steps: Sequence[CriticStep], decision: FinalDecision) -> list[Message]:
    """MobileForge prompt 4: turn a failed or inefficient attempt into a hint for the next one."""
    lines = []
    for step in steps:
        judgement = decision.step_analysis.get(step.number)
        verdict = f"\n  Judged {judgement.reasonableness}: {judgement.explanation}" if judgement else ""
        lines.append(_step_line(step) + verdict)
    outcome = "succeeded" if decision.decision == 1 else f"failed (at step {decision.failure_step})"
    text = f"""## Task
{task}

## My steps, with the judgement of each
{chr(10).join(lines) or "(no steps)"}

## Evaluation
The attempt {outcome}. {decision.reason}

Reflect on the attempt:
1. Name the key mistake, above all the unreasonable steps.
2. Say what to avoid next time.
3. Propose concrete ways to do it instead.
4. Note what you learned about the task and the app.

Return JSON:
{{
  "key_mistake": "the main mistake in one sentence",
  "what_to_avoid": ["..."],
  "suggested_approach": ["..."],
  "important_insights": ["..."],
  "hint_summary": "a short reminder to yourself for the next attempt"
}}"""
    return [system(CORRECTIVE_HINT_SYSTEM), user(text)]
