"""Function-aware exploration goal prompt (MobileForge appendix F): app, anchors, current screen."""

from __future__ import annotations

from typing import Sequence

from pydantic import BaseModel, Field

from ops.agent.messages import Message, system, user

_SYSTEM = (
    "You plan the exploration of a mobile app. From the app's declared screens and its current "
    "screenshot, propose concrete user goals that start from the current screen, can be done in "
    "a bounded number of steps, and together cover different functions: viewing, editing, "
    "searching, sharing, configuration and information lookup. Output JSON."
)


class ExplorationGoals(BaseModel):
    goals: list[str] = Field(min_length=1, max_length=20, description="concrete, diverse user goals")


def build_exploration_goal_prompt(app: str, package: str, anchors: Sequence[str], screenshot_png: bytes,
                                  max_goals: int = 8) -> list[Message]:
    anchor_lines = "\n".join(f"- {a}" for a in anchors)
    return [
        system(_SYSTEM),
        user(
            f"App: {app} (package {package})\nDeclared screens:\n{anchor_lines}\n\n"
            f"The screenshot shows the current screen. Propose up to {max_goals} goals.\n"
            'Return JSON: {"goals": ["...", "..."]}',
            images=[screenshot_png],
        ),
    ]
