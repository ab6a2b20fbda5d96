"""Curriculum prompt (MobileForge appendix G.1, prompt 1): assess one exploration trajectory
and generate new executable tasks x = (instruction, step_budget, core_functionality,
variation_type, prerequisites) grounded in it.

`CurriculumOutput` validates against an optional context
`{"min_tasks": a, "max_tasks": b, "max_steps": s}` (defaults 3, 8, 40 as in the paper).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, ValidationInfo, field_validator, model_validator

from ops.actions.excerpt import excerpt
from ops.agent.messages import Message, system, user

DEFAULT_MIN_TASKS = 3
DEFAULT_MAX_TASKS = 8
DEFAULT_MAX_STEPS = 40

VariationType = Literal["simplification", "parameter_change", "scenario_application", "step_progression"]
Text = Annotated[str, Field(min_length=1)]


class StepQualityAnalysis(BaseModel):
    total_steps: int = Field(ge=0)
    reasonable_steps: int = Field(ge=0)
    trajectory_quality_score: float = Field(ge=0.0, le=1.0)
    quality_summary: str = ""

    @model_validator(mode="after")
    def _counts(self) -> StepQualityAnalysis:
        if self.reasonable_steps > self.total_steps:
            raise ValueError(f"reasonable_steps {self.reasonable_steps} exceeds total_steps {self.total_steps}")
        return self


class TrajectoryEvaluation(BaseModel):
    task_reasonable: bool
    task_completed: bool
    reasonableness_explanation: str = ""
    completion_explanation: str = ""
    confidence_score: float = Field(ge=0.0, le=1.0)
    step_quality_analysis: StepQualityAnalysis


class CurriculumTask(BaseModel):
    task_id: Text
    instruction: Text
    step_budget: int = Field(ge=1)
    core_functionality: Text
    variation_type: VariationType
    prerequisites: str = ""

    @field_validator("variation_type", mode="before")
    @classmethod
    def _snake(cls, value: Any) -> Any:
        return value.strip().lower().replace(" ", "_").replace("-", "_") if isinstance(value, str) else value

    @field_validator("prerequisites", mode="before")
    @classmethod
    def _join(cls, value: Any) -> Any:
        if value is None:
            return ""
        return "; ".join(str(v) for v in value) if isinstance(value, list) else value


class CurriculumOutput(BaseModel):
    evaluation: TrajectoryEvaluation
    generated_tasks: list[CurriculumTask]

    @model_validator(mode="after")
    def _bounds(self, info: ValidationInfo) -> CurriculumOutput:
        ctx = info.context or {}
        lo = ctx.get("min_tasks", DEFAULT_MIN_TASKS)
        hi = ctx.get("max_tasks", DEFAULT_MAX_TASKS)
        max_steps = ctx.get("max_steps", DEFAULT_MAX_STEPS)
        if not lo <= len(self.generated_tasks) <= hi:
            raise ValueError(f"generated_tasks has {len(self.generated_tasks)} tasks; expected {lo} to {hi}")
        for task in self.generated_tasks:
            if task.step_budget > max_steps:
                raise ValueError(f"task {excerpt(task.task_id)}: step_budget {excerpt(task.step_budget)} "
                                 f"exceeds {max_steps}")
        repeated = sorted(task_id for task_id, n in Counter(t.task_id for t in self.generated_tasks).items() if n > 1)
        if repeated:
            raise ValueError(f"task_id values repeat: {excerpt(repeated)}")
        return self


CURRICULUM_SYSTEM = (
    "You are a curriculum designer: a teacher who writes learning tasks for GUI agents. Your aim is a "
    "curriculum that covers every function of the target app with steadily rising difficulty, so that "
    "agents learn to use the app systematically. Answer with JSON only."
)

DEFAULT_PRINCIPLES = """- Each task is self-contained: it names every concrete value it needs (names, numbers, texts).
- Each task can be done inside the app, starting from the app's opening screen, with what the app already holds.
- Each task ends in a state that can be checked on the screen (something created, changed, shown or answered).
- Each task teaches one core function; variations change the scenario or the path, not only a value.
- No task needs accounts, network content or files the app does not already have."""


def _render_examples(examples: Sequence[CurriculumTask]) -> str:
    if not examples:
        return "(none)"
    return "\n".join(e.model_dump_json() for e in examples)


def build_curriculum_prompt(
    app_name: str,
    original_goal: str,
    screenshots_png: Sequence[bytes],
    *,
    step_summaries: Sequence[str] = (),
    fewshot_examples: Sequence[CurriculumTask] = (),
    existing_tasks: Sequence[str] = (),
    principles: str = DEFAULT_PRINCIPLES,
    min_tasks: int = DEFAULT_MIN_TASKS,
    max_tasks: int = DEFAULT_MAX_TASKS,
    max_steps: int = DEFAULT_MAX_STEPS,
) -> list[Message]:
    """MobileForge prompt 1 for one exploration trajectory; pass the same bounds as the validation
    context of `CurriculumOutput` (see `curriculum_context`)."""
    if not 1 <= min_tasks <= max_tasks:
        raise ValueError(f"need 1 <= min_tasks <= max_tasks, got {min_tasks}, {max_tasks}")
    steps = "\n".join(f"{i}. {s}" for i, s in enumerate(step_summaries, start=1)) or "(see the screenshots)"
    existing = "\n".join(f"- {t}" for t in existing_tasks) or "(none yet)"
    text = f"""## App
App name: {app_name}
Original goal of the exploration: {original_goal}

## The explored trajectory
The attached screenshots show the trajectory in order. Its steps:
{steps}

## Example tasks
{_render_examples(fewshot_examples)}

## Principles for tasks
{principles}

## Tasks already generated for {app_name}
{existing}
Do not generate tasks that are close to these.

## Step 1: assess the trajectory
1. Reasonableness: would a real user want to do the original goal in this app? Is it clear and achievable, and does it fit the app?
2. Step quality: look at the visible steps. A reasonable step moves logically toward the goal; an unreasonable one is unnecessary, wrong, counterproductive, stuck in a loop, or goes back without need. Failed trajectories can contain reasonable steps, and successful ones can contain detours. trajectory_quality_score = reasonable_steps / total_steps.
3. Completion: did the agent reach the goal state, with the required steps done correctly?

## Step 2: generate tasks
Write {min_tasks} to {max_tasks} new tasks that
- cover different core functions of {app_name};
- need between 1 and {max_steps} steps (step_budget: the steps a competent agent needs, with a little slack);
- are useful for teaching a GUI agent and do not repeat existing tasks;
- vary the core function, not only a parameter, with at most 3 parameter variations per function.

Return JSON:
{{
  "evaluation": {{
    "task_reasonable": true or false,
    "task_completed": true or false,
    "reasonableness_explanation": "...",
    "completion_explanation": "...",
    "confidence_score": number from 0 to 1,
    "step_quality_analysis": {{
      "total_steps": 10,
      "reasonable_steps": 8,
      "trajectory_quality_score": 0.8,
      "quality_summary": "..."
    }}
  }},
  "generated_tasks": [
    {{
      "task_id": "task_1",
      "instruction": "a self-contained task instruction",
      "step_budget": 5,
      "core_functionality": "the function this task teaches",
      "variation_type": "simplification" or "parameter_change" or "scenario_application" or "step_progression",
      "prerequisites": "only prerequisites that are not obvious, else empty"
    }}
  ]
}}"""
    return [system(CURRICULUM_SYSTEM), user(text, list(screenshots_png))]


def curriculum_context(
    min_tasks: int = DEFAULT_MIN_TASKS, max_tasks: int = DEFAULT_MAX_TASKS, max_steps: int = DEFAULT_MAX_STEPS
) -> dict[str, int]:
    """Validation context matching `build_curriculum_prompt`'s bounds."""
    return {"min_tasks": min_tasks, "max_tasks": max_tasks, "max_steps": max_steps}
