"""LLM client over real HTTP (litellm → local OpenAI-compatible server)."""

from __future__ import annotations

import asyncio
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ops.agent.llm import JSONRequest, LLMConfig
from ops.agent.llm_answers import OutputError, extract_json
from ops.agent.llm_errors import ErrorKind, LLMCallError
from ops.judging.critic.prompts import FinalDecision, StepDescription, build_step_description_prompt
from tests.support.images import solid_png
from tests.support.openai_server import RecordedRequest, Reply, fixed, sequence

GOOD = json.dumps({"action_description": "Tapped Wi-Fi", "ui_description": "Settings list"})
PROMPT = [{"role": "user", "content": "describe"}]


def test_good_json_with_image_arrives_as_data_url(serve, connect):
    server = serve(fixed(GOOD))
    client = connect(server)
    png = solid_png()
    messages = build_step_description_prompt("Turn on Wi-Fi", "click", "element 3 'Wi-Fi'", png)

    result = client.json(messages, StepDescription)

    assert result.value == StepDescription(action_description="Tapped Wi-Fi", ui_description="Settings list")
    assert not result.repaired and result.attempts == 1
    [request] = server.requests
    assert request.body["model"] == "scripted-model"
    [url] = request.image_urls()
    assert url.startswith("data:image/png;base64,")
    assert request.headers["authorization"] == "Bearer EMPTY"  # keyless custom server
    stats = client.stats.summary()
    assert (stats["calls"], stats["requests"], stats["successes"], stats["failures"]) == (1, 1, 1, 0)


@pytest.mark.parametrize(
    "text",
    [
        GOOD,
        f"```json\n{GOOD}\n```",
        f"Here is my answer:\n{GOOD}\nHope it helps.",
        f"Thinking {{not json}} first. Then: {GOOD}",
    ],
)
def test_extract_json_from_fenced_or_prose_output(text):
    assert extract_json(text)["action_description"] == "Tapped Wi-Fi"


@settings(max_examples=60, deadline=None)
@given(
    value=st.dictionaries(st.text(min_size=1, max_size=8), st.integers() | st.text(max_size=8), min_size=1, max_size=4),
    before=st.text(alphabet=st.characters(blacklist_characters="{}[]`"), max_size=40),
    after=st.text(alphabet=st.characters(blacklist_characters="{}[]`"), max_size=40),
)
def test_extract_json_finds_an_object_inside_any_prose(value, before, after):
    assert extract_json(f"{before}{json.dumps(value)}{after}") == value


@pytest.mark.parametrize("text", ["", "no json here", "{broken: 1"])
def test_extract_json_rejects_output_without_json(text):
    with pytest.raises(OutputError) as info:
        extract_json(text)
    assert info.value.kind == ErrorKind.INVALID_JSON


def test_malformed_json_is_repaired_with_the_error_sent_back(serve, connect):
    server = serve(sequence([Reply(content='{"action_description": "Tapped'), Reply(content=GOOD)]))
    client = connect(server)

    result = client.json(PROMPT, StepDescription)

    assert result.repaired and result.attempts == 2
    assert result.value.ui_description == "Settings list"
    repair = server.requests[1].messages
    assert repair[-2] == {"role": "assistant", "content": '{"action_description": "Tapped'}
    assert "could not be used" in repair[-1]["content"] and "JSON" in repair[-1]["content"]
    assert client.stats.repairs == 1


def test_schema_error_is_repaired_naming_the_missing_field(serve, connect):
    server = serve(sequence([Reply(content='{"action_description": "Tapped"}'), Reply(content=GOOD)]))
    client = connect(server)

    result = client.json(PROMPT, StepDescription)

    assert result.repaired
    assert "ui_description" in server.requests[1].messages[-1]["content"]


def test_unrepairable_json_ends_as_typed_error(serve, connect):
    server = serve(fixed("I cannot answer in JSON."))
    client = connect(server)

    with pytest.raises(LLMCallError) as info:
        client.json(PROMPT, StepDescription)

    assert info.value.kind == ErrorKind.INVALID_JSON
    assert info.value.raw_text == "I cannot answer in JSON."
    assert len(server.requests) == 2  # the answer and exactly one repair round
    assert client.stats.failures == {"invalid_json": 1}


def test_schema_violation_twice_ends_as_schema_error(serve, connect):
    server = serve(fixed('{"action_description": ""}'))
    client = connect(server)

    with pytest.raises(LLMCallError) as info:
        client.json(PROMPT, StepDescription)

    assert info.value.kind == ErrorKind.SCHEMA
    assert "ui_description" in info.value.message


def test_validation_context_rejects_missing_steps_then_repairs(serve, connect):
    partial = {"decision": 1, "reason": "done", "task_feasible": True,
               "step_analysis": {"1": {"reasonableness": "reasonable", "explanation": "ok"}}}
    full = dict(partial, step_analysis={
        "1": {"reasonableness": "reasonable", "explanation": "ok"},
        "2": {"reasonableness": "Unreasonable", "explanation": "detour"},
    })
    server = serve(sequence([Reply(content=json.dumps(partial)), Reply(content=json.dumps(full))]))
    client = connect(server)

    result = client.json(PROMPT, FinalDecision, context={"n_steps": 2})

    assert result.repaired
    assert "missing [2]" in server.requests[1].messages[-1]["content"]
    assert result.value.reasonable_fraction() == 0.5


@pytest.mark.parametrize("status", [500, 503, 429])
def test_error_status_is_retried_then_succeeds(serve, connect, status):
    server = serve(sequence([Reply(status=status), Reply(status=status), Reply(content=GOOD)]))
    client = connect(server, max_retries=2)

    result = client.json(PROMPT, StepDescription)

    assert result.attempts == 3 and not result.repaired
    assert client.stats.retries == 2


def test_persistent_server_error_ends_as_transport_error(serve, connect):
    server = serve(lambda request: Reply(status=500))
    client = connect(server, max_retries=2)

    with pytest.raises(LLMCallError) as info:
        client.json(PROMPT, StepDescription)

    assert info.value.kind == ErrorKind.TRANSPORT
    assert "HTTP 500" in info.value.message
    assert info.value.attempts == 3 and len(server.requests) == 3


def test_client_error_is_not_retried(serve, connect):
    server = serve(lambda request: Reply(status=400))
    client = connect(server, max_retries=3)

    with pytest.raises(LLMCallError) as info:
        client.complete(PROMPT)

    assert info.value.kind == ErrorKind.REJECTED
    assert len(server.requests) == 1


def test_slow_server_ends_as_timeout_error(serve, connect):
    server = serve(fixed(GOOD, delay_s=3.0))
    client = connect(server, timeout_s=0.3, max_retries=1)

    with pytest.raises(LLMCallError) as info:
        client.json(PROMPT, StepDescription)

    assert info.value.kind == ErrorKind.TIMEOUT
    assert len(server.requests) == 2  # first attempt and one retry
    assert client.stats.failures == {"timeout": 1}


def test_connection_refused_ends_as_transport_error(connect, serve):
    server = serve(fixed(GOOD))
    server.stop()  # nothing listens on the port any more
    client = connect(server, max_retries=1)

    with pytest.raises(LLMCallError) as info:
        client.complete(PROMPT)

    assert info.value.kind == ErrorKind.TRANSPORT


def test_concurrency_bound_is_respected(serve, connect):
    server = serve(fixed(GOOD, delay_s=0.2))
    client = connect(server, max_concurrency=3)

    results = client.map_json([JSONRequest(PROMPT, StepDescription) for _ in range(12)])

    assert all(not isinstance(r, LLMCallError) for r in results)
    assert len(server.requests) == 12
    assert 1 < server.max_in_flight <= 3


def test_map_json_keeps_errors_in_place(serve, connect):
    def behaviour(request: RecordedRequest) -> Reply:
        return Reply(status=400) if "reject me" in request.messages[-1]["content"] else Reply(content=GOOD)

    server = serve(behaviour)
    client = connect(server)
    requests = [
        JSONRequest([{"role": "user", "content": text}], StepDescription, key=f"r{i}")
        for i, text in enumerate(["fine", "reject me", "fine too"])
    ]

    results = client.map_json(requests)

    assert isinstance(results[0].value, StepDescription) and isinstance(results[2].value, StepDescription)
    assert isinstance(results[1], LLMCallError)
    assert results[1].kind == ErrorKind.REJECTED and results[1].key == "r1"
    record = results[1].to_dict()
    assert (record["kind"], record["key"], record["attempts"]) == ("rejected", "r1", 1)
    assert json.loads(json.dumps(record)) == record
    assert client.stats.summary()["failures_rejected"] == 1


def test_async_api_works_from_another_event_loop(serve, connect):
    server = serve(fixed(GOOD))
    client = connect(server)

    async def run():
        return await asyncio.gather(client.ajson(PROMPT, StepDescription), client.acomplete(PROMPT))

    structured, raw = asyncio.run(run())

    assert structured.value.action_description == "Tapped Wi-Fi"
    assert raw.text == GOOD


def test_api_key_comes_from_the_named_environment_variable(serve, connect, monkeypatch):
    monkeypatch.setenv("MF_TEST_LLM_KEY", "sk-test-123")
    server = serve(fixed(GOOD))
    client = connect(server, api_key_env="MF_TEST_LLM_KEY")

    client.complete(PROMPT)

    assert server.requests[0].headers["authorization"] == "Bearer sk-test-123"


def test_missing_key_variable_fails_at_construction(serve, connect, monkeypatch):
    monkeypatch.delenv("MF_TEST_LLM_KEY", raising=False)
    server = serve(fixed(GOOD))
    with pytest.raises(ValueError, match="api_key_env.*MF_TEST_LLM_KEY"):
        connect(server, api_key_env="MF_TEST_LLM_KEY")


@pytest.mark.parametrize(
    ("field", "value"),
    [("model", ""), ("max_concurrency", 0), ("timeout_s", 0), ("max_retries", -1), ("api_key_env", "sk-abc def")],
)
def test_bad_config_names_the_field(field, value):
    with pytest.raises(ValueError, match=f"LLMConfig.{field}"):
        LLMConfig(**{"model": "openai/m", field: value})
