"""Observations for policy tests."""

from __future__ import annotations

from ops.agent.episode import Observation
from tests.support.images import solid_png


def make_observation(elements: list[dict] | None = None, color: tuple[int, int, int] = (30, 120, 200)) -> Observation:
    return Observation(
        screenshot_png=solid_png(90, 200, color),
        elements=elements if elements is not None else [{"text": "Network & internet"}, {"text": "Display"}],
        a11y=None,
        app="settings",
        screen="main",
    )
