"""Endpoint policy round trip over real HTTP (litellm → local OpenAI-compatible server)."""

from __future__ import annotations

import json

import pytest

from ops.actions.formats import FORMATS
from ops.actions import Action, ActionType
from ops.agent.episode import Hint, PolicyRequest
from ops.agent.llm import LLMConfig
from ops.agent.policy import EndpointPolicy, PolicyCallError
from ops.agent.messages import png_data_url
from ops.agent.policy_prompt import OUTPUT_FORMATS
from tests.support.observations import make_observation
from tests.support.openai_server import OpenAICompatibleServer, RecordedRequest, Reply


def _reply_naming_the_instruction(request: RecordedRequest) -> Reply:
    text = request.messages[-1]["content"][0]["text"]
    x = 100 + 100 * int(text.split("row ")[1][0])  # instruction "... row N ..." → x = 100 + 100 N
    call = {"name": "mobile_use", "arguments": {"action": "click", "coordinate": [x, 500]}}
    return Reply(content=f"<thinking>look</thinking>\n<tool_call>{json.dumps(call)}</tool_call>\n"
                         f"<conclusion>Tapped row {text.split('row ')[1][0]}</conclusion>")


def _policy(server: OpenAICompatibleServer, **overrides) -> EndpointPolicy:
    config = LLMConfig(model="openai/qwen3-vl", api_base=server.base_url, max_retries=1,
                       backoff_initial_s=0.01, backoff_max_s=0.02, **overrides)
    return EndpointPolicy(config, "qwen3vl")


def test_every_prompt_style_has_a_registered_parser():
    assert set(OUTPUT_FORMATS.values()) <= set(FORMATS)


def test_endpoint_policy_round_trip():
    hint = Hint(2, "Missed the row", ["Guessing"], ["Read labels"], ["Rows are sorted"], "Read the row labels")
    observations = [make_observation(color=(10 * i, 50, 90)) for i in range(3)]
    requests = [PolicyRequest(obs, f"Tap row {i}", ["Opened Settings"], [hint]) for i, obs in enumerate(observations)]
    with OpenAICompatibleServer(_reply_naming_the_instruction) as server:
        policy = _policy(server, max_concurrency=2)

        outputs = policy.act_batch(requests)

    assert policy.output_format == "qwen3vl" and policy.version == "endpoint:openai/qwen3-vl"
    actions = [FORMATS[policy.output_format].parse(o.raw_text).action for o in outputs]
    assert actions == [Action(ActionType.CLICK, point=(100 + 100 * i, 500)) for i in range(3)]
    sent = sorted(server.requests, key=lambda r: r.messages[-1]["content"][0]["text"])
    assert [r.image_urls() for r in sent] == [[png_data_url(o.screenshot_png)] for o in observations]
    assert all(r.body["model"] == "qwen3-vl" for r in sent)
    stored = json.loads(outputs[0].prompt)
    assert {"type": "image"} in stored[-1]["content"]  # placeholder, not the image bytes
    assert "Hint from Attempt #2" in stored[-1]["content"][0]["text"]
    assert "1. Opened Settings" in stored[-1]["content"][0]["text"]
    assert all(o.latency_s > 0 for o in outputs)


def test_endpoint_policy_act_sends_the_element_prompt():
    answer = '- Display #1\n{"type": "click", "args": {"element": 1}}'
    with OpenAICompatibleServer(lambda r: Reply(content=answer)) as server:
        config = LLMConfig(model="openai/tiny", api_base=server.base_url)
        policy = EndpointPolicy(config, "elements", version="tiny-v1")

        output = policy.act(make_observation(), "Open Display")

    assert FORMATS[policy.output_format].parse(output.raw_text).action == Action(ActionType.CLICK, element=1)
    text = server.requests[0].messages[-1]["content"][-1]["text"]
    assert "- Display #1" in text and text.endswith("Task: Open Display")


def test_failed_calls_raise_policy_error_for_the_batch():
    with OpenAICompatibleServer(lambda r: Reply(status=503)) as server:
        policy = _policy(server)
        with pytest.raises(PolicyCallError, match="2 of 2 policy calls failed; first: transport"):
            policy.act_batch([PolicyRequest(make_observation(), "Tap row 1", [], [])] * 2)
