"""Shared fixtures: simulator trajectories and the offline curriculum mined from them."""

from __future__ import annotations

import pytest

from ops.curriculum import SimCurriculumConfig, SimCurriculumResult, mine_simulator_tasks
from tests.ops.curriculum.traces import SCREEN, explored

# Contacts templates whose BFS solutions take well under a second (create/edit take ~10 s each).
FAST_CONTACTS_TEMPLATES = ("contacts.favorite", "contacts.query_phone", "contacts.query_birthday")


@pytest.fixture(scope="session")
def settings_paths():
    return explored("settings")


@pytest.fixture(scope="session")
def contacts_paths():
    return explored("contacts")


@pytest.fixture(scope="session")
def settings_curriculum(settings_paths) -> SimCurriculumResult:
    """Default offline mining over the settings exploration: every train template is a candidate."""
    return mine_simulator_tasks(settings_paths, SimCurriculumConfig(screen_size=SCREEN))


@pytest.fixture(scope="session")
def contacts_curriculum(contacts_paths) -> SimCurriculumResult:
    return mine_simulator_tasks(contacts_paths, SimCurriculumConfig(screen_size=SCREEN),
                                template_ids=FAST_CONTACTS_TEMPLATES)
