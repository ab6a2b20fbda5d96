import json

import pytest

from ops.exploration.explorer import ExplorationConfig, explore_app, offline_goals, trajectories, transitions_from_rows
from ops.exploration.goals import GoalGenerationError, llm_goals
from ops.agent.llm import LLMClient, LLMConfig
from ops.environments.simulator import SimEnvironment
from tests.support.openai_server import OpenAICompatibleServer, Reply
from assets.exploration import transition_rows


def test_dfs_exploration_restores_parents_and_stays_in_the_app():
    env = SimEnvironment(size=(270, 600))
    transitions = explore_app(env, "settings", ExplorationConfig(max_depth=3, max_transitions=25))
    assert 0 < len(transitions) <= 25
    assert all(t.before.app == t.after.app == "settings" for t in transitions)
    by_id = {t.transition_id: t for t in transitions}
    for t in transitions:  # every branch starts from its parent's after-state (restored, not continued)
        if t.parent_id is not None:
            assert by_id[t.parent_id].after.screen == t.before.screen
            assert t.depth == by_id[t.parent_id].depth + 1
    paths = trajectories(transitions)
    assert all(p[0].parent_id is None for p in paths)
    assert len({t.after.screen for t in transitions}) >= 3  # it reached several screens of the app


def test_transitions_round_trip_through_the_table():
    env = SimEnvironment(size=(270, 600))
    transitions = explore_app(env, "clock", ExplorationConfig(max_depth=2, max_transitions=8))
    rebuilt = transitions_from_rows(transition_rows("clock", transitions))
    assert [(t.transition_id, t.parent_id, t.action, t.after.screen) for t in rebuilt] == \
        [(t.transition_id, t.parent_id, t.action, t.after.screen) for t in transitions]


def test_llm_goals_come_from_the_endpoint_with_screenshot_and_anchors():
    with OpenAICompatibleServer(lambda r: Reply(content=json.dumps({"goals": ["Turn on Wi-Fi", "Open Display"]}))) \
            as server:
        generate = llm_goals(LLMClient(LLMConfig(model="openai/goals", api_base=server.base_url)), {"settings": "com.x"})
        env = SimEnvironment(size=(270, 600))
        transitions = explore_app(env, "settings", ExplorationConfig(max_depth=2, max_transitions=6), generate)
    assert {t.goal for t in transitions} <= {"Turn on Wi-Fi", "Open Display"}
    text = json.dumps(server.requests[0].messages)
    assert "data:image/png;base64," in text and "com.x" in text


def test_llm_goal_failure_is_a_specific_error():
    with OpenAICompatibleServer(lambda r: Reply(content="no json here")) as server:
        generate = llm_goals(LLMClient(LLMConfig(model="openai/goals", api_base=server.base_url, max_retries=0)), {})
        with pytest.raises(GoalGenerationError, match="exploration goals for settings"):
            explore_app(SimEnvironment(size=(270, 600)), "settings", goals=generate)


def test_offline_goals_name_every_declared_screen():
    env = SimEnvironment(size=(270, 600))
    first = env.launch("contacts")
    goals = offline_goals("contacts", env.anchors("contacts"), first)
    assert len(goals) == len(env.anchors("contacts")) and all("contacts" in g for g in goals)
