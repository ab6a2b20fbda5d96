"""LLM curriculum over real HTTP (local OpenAI-compatible server) on real exploration
trajectories: records linked to their trajectory, failures counted, existing tasks per app."""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterator

import pytest

from ops.curriculum import CurriculumTask, LLMCurriculumConfig, mine_with_llm, trajectory_id
from ops.curriculum.llm_mining import CurriculumLLMError, trajectory_screenshots
from ops.agent.llm import LLMClient, LLMConfig
from ops.data.schemas import VARIATION_TYPES
from tests.support.fixtures import no_external_network  # noqa: F401  (autouse fixture)
from tests.support.openai_server import OpenAICompatibleServer, RecordedRequest, Reply

BROKEN_GOAL = "BROKEN exploration goal"


def _text(request: RecordedRequest) -> str:
    return request.messages[1]["content"][0]["text"]


def _app(request: RecordedRequest) -> str:
    return re.search(r"App name: (\S+)", _text(request)).group(1)


def _produced(request: RecordedRequest, n: int = 3) -> list[str]:
    """The instructions the scripted model writes for a request (unique per request)."""
    return [f"Task {request.index}.{j} in {_app(request)}: open screen {j}" for j in range(n)]


def _existing(request: RecordedRequest) -> list[str]:
    section = _text(request).split("## Tasks already generated for", 1)[1].split("Do not generate", 1)[0]
    return [line[2:] for line in section.splitlines() if line.startswith("- ")]


def _answer(request: RecordedRequest, n: int = 3) -> str:
    return json.dumps({
        "evaluation": {"task_reasonable": True, "task_completed": False, "confidence_score": 0.7,
                       "step_quality_analysis": {"total_steps": 4, "reasonable_steps": 3,
                                                 "trajectory_quality_score": 0.75}},
        "generated_tasks": [{"task_id": f"task_{j}", "instruction": text, "step_budget": 4 + j,
                             "core_functionality": "Navigation", "variation_type": "step_progression",
                             "prerequisites": ""} for j, text in enumerate(_produced(request, n))],
    })


def scripted_model(request: RecordedRequest) -> Reply:
    if BROKEN_GOAL in _text(request):
        return Reply("I looked at the screenshots and they look fine.")  # no JSON, also after repair
    return Reply(_answer(request))


@pytest.fixture
def server() -> Iterator[OpenAICompatibleServer]:
    with OpenAICompatibleServer(scripted_model) as s:
        yield s


def _client(server: OpenAICompatibleServer) -> LLMClient:
    return LLMClient(LLMConfig(model="openai/scripted-model", api_base=server.base_url, timeout_s=5.0,
                               max_retries=1, backoff_initial_s=0.01, backoff_max_s=0.05))


@pytest.fixture(scope="module")
def paths(settings_paths, contacts_paths):
    """Three settings and two contacts trajectories; the second settings one gets a goal the
    scripted model answers without JSON."""
    broken = settings_paths[1]
    broken = (dataclasses.replace(broken[0], goal=BROKEN_GOAL),) + broken[1:]
    return [settings_paths[0], broken, settings_paths[2], contacts_paths[0], contacts_paths[1]]


def _first_requests(server: OpenAICompatibleServer) -> list[RecordedRequest]:
    """Requests that open a call (repair rounds append an assistant and a user message)."""
    return [r for r in server.requests if len(r.messages) == 2]


def test_good_answers_become_records_linked_to_their_trajectory_and_a_bad_one_is_counted(server, paths):
    result = mine_with_llm(_client(server), paths)
    broken_id = trajectory_id(paths[1])
    good = {trajectory_id(p): p for p in paths if trajectory_id(p) != broken_id}

    assert [o.trajectory_id for o in result.failures] == [broken_id]
    assert result.failures[0].error["kind"] == "invalid_json" and result.failures[0].n_tasks == 0
    summary = result.summary()
    assert summary["calls_failed"] == 1 and summary["failures_invalid_json"] == 1
    assert summary["trajectories"] == 5 and summary["waves"] == 3 and summary["tasks"] == 12

    assert len(result.tasks) == 3 * len(good)
    assert len({t.task_id for t in result.tasks}) == len(result.tasks)
    for task in result.tasks:
        assert task.source_trace_id in good
        assert task.app == good[task.source_trace_id][0].before.app
        assert not task.verifiable and task.template_id is None and task.goal_screen is None
        assert task.variation_type in VARIATION_TYPES and task.prerequisites is None
    replies = {t for r in _first_requests(server) for t in _produced(r)}
    assert {t.instruction for t in result.tasks} <= replies

    for request in _first_requests(server):  # every call carried its trajectory's screens
        path = next(p for p in paths if p[0].goal in _text(request) and p[-1].summary in _text(request))
        assert len(request.image_urls()) == min(len(path) + 1, 8)
        assert f"Original goal of the exploration: {path[0].goal}" in _text(request)


def test_each_call_sees_the_tasks_generated_earlier_for_its_app_only(server, paths):
    seeded = CurriculumTask(task_id="nav:settings/wifi", app="settings", instruction="In Settings, open Wi-Fi.",
                            step_budget=5, core_functionality="settings: open Wi-Fi",
                            variation_type="simplification", prerequisites=None,
                            source_trace_id=trajectory_id(paths[0]), verifiable=True, goal_screen="wifi")
    mine_with_llm(_client(server), paths, existing=[seeded])
    by_app: dict[str, list[RecordedRequest]] = {}
    for request in sorted(_first_requests(server), key=lambda r: r.index):
        by_app.setdefault(_app(request), []).append(request)
    assert {app: len(v) for app, v in by_app.items()} == {"settings": 3, "contacts": 2}

    for app, requests in by_app.items():
        expected = [seeded.instruction] if app == "settings" else []
        for request in requests:
            assert _existing(request) == expected
            if BROKEN_GOAL not in _text(request):
                expected = expected + _produced(request)


def test_wider_waves_batch_more_calls_per_app(server, paths):
    result = mine_with_llm(_client(server), paths, LLMCurriculumConfig(wave_width=2))
    assert [o.wave for o in result.outcomes] == [0, 0, 0, 0, 1]
    assert result.summary()["waves"] == 2


def test_answers_outside_the_task_bounds_are_schema_failures(paths):
    def short_for_the_first(request: RecordedRequest) -> Reply:  # 1 task, fewer than 3
        return Reply(_answer(request, n=1 if paths[0][0].goal in _text(request) else 3))

    with OpenAICompatibleServer(short_for_the_first) as server:
        result = mine_with_llm(_client(server), [paths[0], paths[3]])
    kinds = {o.trajectory_id: o.error["kind"] if o.error else None for o in result.outcomes}
    assert kinds == {trajectory_id(paths[0]): "schema", trajectory_id(paths[3]): None}


def test_a_curriculum_step_whose_every_call_failed_fails_naming_the_count_and_cause(paths):
    with OpenAICompatibleServer(lambda r: Reply(_answer(r, n=1))) as short:
        with pytest.raises(CurriculumLLMError, match=r"all 2 curriculum LLM calls failed \(schema 2\)"):
            mine_with_llm(_client(short), paths[:2])


def test_a_refused_connection_fails_the_step_saying_so(paths):
    with OpenAICompatibleServer(scripted_model) as server:
        client = _client(server)
    # the server is stopped: nothing listens on its port any more
    with pytest.raises(CurriculumLLMError, match=r"all 3 curriculum LLM calls failed \(transport 3\).*connection refused"):
        mine_with_llm(client, paths[:3])


def test_some_failed_calls_are_logged_with_their_count(server, paths, caplog):
    with caplog.at_level("WARNING", logger="ops.curriculum.llm_mining"):
        mine_with_llm(_client(server), paths)
    assert "curriculum LLM: 1 of 5 calls failed (invalid_json 1)" in caplog.text


def test_screenshots_are_subsampled_keeping_first_and_last(settings_paths):
    path = next(p for p in settings_paths if len(p) == 4)
    shots = [path[0].before.screenshot_png] + [t.after.screenshot_png for t in path]
    assert trajectory_screenshots(path, 8) == shots
    assert trajectory_screenshots(path, 3) == [shots[0], shots[2], shots[4]]
    assert trajectory_screenshots(path, 2) == [shots[0], shots[4]]
