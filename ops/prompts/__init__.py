"""Prompt templates (seed 000 appendix G) and the pydantic models of their JSON answers."""

from ops.prompts.critic import (
    CorrectiveHintOutput,
    CriticStep,
    FinalDecision,
    StepDescription,
    StepJudgement,
    build_corrective_hint_prompt,
    build_final_decision_prompt,
    build_step_description_prompt,
)
from ops.prompts.curriculum import (
    CurriculumOutput,
    CurriculumTask,
    StepQualityAnalysis,
    TrajectoryEvaluation,
    build_curriculum_prompt,
    curriculum_context,
)
from ops.prompts.hint_marks import corrective_summary, element_name, hint_targets, hinted_rows, plan_summary
from ops.prompts.messages import (
    Message,
    fill_image_placeholders,
    messages_to_json,
    png_data_url,
    redact_images,
)
from ops.prompts.policy import (
    OUTPUT_FORMATS,
    PromptStyle,
    build_policy_prompt,
    element_context,
    element_label,
    render_element_list,
    render_hint_block,
    without_hints,
)

__all__ = [
    "OUTPUT_FORMATS",
    "CorrectiveHintOutput",
    "CriticStep",
    "CurriculumOutput",
    "CurriculumTask",
    "FinalDecision",
    "Message",
    "PromptStyle",
    "StepDescription",
    "StepJudgement",
    "StepQualityAnalysis",
    "TrajectoryEvaluation",
    "build_corrective_hint_prompt",
    "build_curriculum_prompt",
    "build_final_decision_prompt",
    "build_policy_prompt",
    "build_step_description_prompt",
    "corrective_summary",
    "curriculum_context",
    "element_context",
    "element_name",
    "element_label",
    "fill_image_placeholders",
    "hint_targets",
    "hinted_rows",
    "messages_to_json",
    "plan_summary",
    "png_data_url",
    "redact_images",
    "render_element_list",
    "render_hint_block",
    "without_hints",
]
