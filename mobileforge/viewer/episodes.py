"""An episode as the viewer shows it: each step's screenshot with its action drawn on it, the model's
raw output and parsed action, the critic's verdict on the step, and the attempt's hints and
verdict; and the links between the viewer's pages."""

from __future__ import annotations

import json
from dataclasses import dataclass

from mobileforge.viewer.overlay import Overlay, action_overlay, png_size
from mobileforge.viewer.store import EpisodeKey
from ops.actions import REASONING_PARTS
from ops.agent.episode import AttemptRecord, StepLabel
from resources.viewer_links import experiment_path

EPISODE_PAGE, TASK_PAGE, COMPARE_PAGE, FORK_PAGE = "episode", "task", "compare", "fork"
SCREENSHOT, BENCHMARK_EPISODE = "screenshot", "benchmark/episode"


def episode_url(key: EpisodeKey) -> str:
    return experiment_path(key.experiment, EPISODE_PAGE, stage=key.stage, policy=key.policy_version,
                           task=key.task_id, attempt=str(key.attempt))


def screenshot_url(key: EpisodeKey, step: int | None) -> str:
    """A step's screenshot, or with `step` None the screen after the last action."""
    query = {"step": str(step)} if step is not None else {}
    return experiment_path(key.experiment, SCREENSHOT, stage=key.stage, policy=key.policy_version,
                           task=key.task_id, attempt=str(key.attempt), **query)


def benchmark_episode_url(experiment: str, policy: str, task_id: str, attempt: int) -> str:
    return experiment_path(experiment, BENCHMARK_EPISODE, policy=policy, task=task_id, attempt=str(attempt))


@dataclass(frozen=True)
class StepView:
    """One step: what the page shows of it."""

    step: int
    app: str
    screen: str
    screenshot: str  # URL
    overlay: Overlay
    raw_output: str
    action: str | None  # the parsed canonical action, as JSON
    parse_error: str | None
    env_ok: bool
    env_reason: str | None
    label: StepLabel | None  # the critic's verdict on the step
    reasoning: list[tuple[str, str]]  # structured reasoning parts, when the policy wrote them
    verified_outcome: str | None
    latency_s: float
    failure_step: bool  # where the critic says the attempt went wrong
    marked: bool  # a step the page points at (a fork step)


@dataclass(frozen=True)
class EpisodeView:
    key: EpisodeKey
    record: AttemptRecord
    steps: list[StepView]
    verdict: str  # success | failure | no verdict, by the attempt's judge
    final_screenshot: str | None

    @property
    def url(self) -> str:
        return episode_url(self.key)


def verdict_of(record: AttemptRecord) -> str:
    decision = record.feedback.decision if record.feedback else (
        int(record.ground_truth.success) if record.ground_truth else None)
    return "no verdict" if decision is None else ("success" if decision else "failure")


def episode_view(key: EpisodeKey, record: AttemptRecord, marked_steps: frozenset[int] = frozenset()) -> EpisodeView:
    """The page's view of `record`, staged at `key`; `marked_steps` are the steps the page points at."""
    labels = {label.step: label for label in (record.feedback.step_analysis if record.feedback else [])}
    failure_step = record.feedback.failure_step if record.feedback else None
    steps = []
    for s in record.steps:
        parts = s.reasoning.texts() if s.reasoning else ()
        steps.append(StepView(
            step=s.step, app=s.app, screen=s.screen, screenshot=screenshot_url(key, s.step),
            overlay=action_overlay(s.action, s.elements or [], png_size(s.screenshot_png), s.parse_error),
            raw_output=s.raw_output, action=json.dumps(s.action, ensure_ascii=False) if s.action else None,
            parse_error=s.parse_error, env_ok=s.env_ok, env_reason=s.env_reason, label=labels.get(s.step),
            reasoning=[(name.replace("_", " "), text) for name, text in zip(REASONING_PARTS, parts)],
            verified_outcome=str(s.verified_outcome.value) if s.verified_outcome is not None else None,
            latency_s=s.latency_s, failure_step=s.step == failure_step, marked=s.step in marked_steps))
    final = screenshot_url(key, None) if record.final_screenshot_png else None
    return EpisodeView(key, record, steps, verdict_of(record), final)
