"""Exploration goals from an LLM (MobileForge appendix F); `ops.exploration.explorer.offline_goals` is the offline twin."""

from __future__ import annotations

from ops.agent.episode import Observation
from ops.agent.episode import Anchor
from ops.exploration.explorer import GoalGenerator
from ops.agent.llm import LLMClient
from ops.agent.llm_errors import LLMCallError
from ops.exploration.prompts import ExplorationGoals, build_exploration_goal_prompt


class GoalGenerationError(RuntimeError):
    """The LLM could not produce goals for an app (after the client's retries and repair)."""


def llm_goals(client: LLMClient, package_of: dict[str, str], max_goals: int = 8) -> GoalGenerator:
    """A goal generator that asks the LLM for goals from the anchors and the first screen."""

    def generate(app: str, anchors: list[Anchor], first: Observation) -> list[str]:
        messages = build_exploration_goal_prompt(app, package_of.get(app, app),
                                                 [f"{a.screen}: {a.title}" for a in anchors],
                                                 first.screenshot_png, max_goals)
        try:
            result = client.json(messages, ExplorationGoals)
        except LLMCallError as exc:
            raise GoalGenerationError(f"exploration goals for {app}: {exc}") from exc
        return result.value.goals[:max_goals]

    return generate
