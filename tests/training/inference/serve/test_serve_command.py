"""`mobileforge serve`: the bundled base answers OpenAI chat-completions requests over HTTP, as
a plain client (urllib, no project code in between) sees it."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest

from ops.actions import Action, parse_with_context
from ops.agent.messages import fill_image_placeholders
from ops.agent.policy_prompt import build_policy_prompt, element_label
from ops.environments.simulator import SimEnvironment
from ops.agent.episode import TaskSpec


def _post(url: str, body: bytes) -> tuple[int, dict]:
    request = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def test_a_chat_completion_with_an_image_and_the_element_list_is_a_parseable_action(served):
    observation = SimEnvironment(size=(540, 1200)).reset(TaskSpec(task_id="t", instruction="", step_budget=5))
    elements = [element_label(e) for e in observation.elements]
    prompt = build_policy_prompt("elements", "Open the Clock app", [], [], observation.elements,
                                 screen=observation.screen)
    messages = fill_image_placeholders(prompt, [observation.screenshot_png] * sum(
        1 for m in prompt if isinstance(m.get("content"), list) for p in m["content"] if p.get("type") == "image"))
    body = json.dumps({"model": "tiny-base", "messages": messages, "max_tokens": 48, "temperature": 0}).encode()

    status, reply = _post(f"{served.base_url}/chat/completions", body)

    assert status == 200, reply
    assert reply["usage"]["prompt_tokens"] > 0 and reply["usage"]["completion_tokens"] > 0
    assert reply["model"] == "tiny-base" and reply["object"] == "chat.completion"
    text = reply["choices"][0]["message"]["content"]
    parsed = parse_with_context(text, "label_echo", labels=elements)
    assert isinstance(parsed.action, Action), text


def test_the_model_list_names_the_served_model(served):
    with urllib.request.urlopen(f"{served.base_url}/models", timeout=10) as response:
        assert [m["id"] for m in json.loads(response.read())["data"]] == ["tiny-base"]


@pytest.mark.parametrize(("body", "message"), [
    (b"{not json", "body is not JSON"),
    (b'{"messages": []}', "messages: List should have at least 1 item"),
    (b'{"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "http://x/y.png"}}]}]}',
     "data:image"),
    (b'{"messages": [{"role": "user", "content": "hi"}], "temperature": -1}', "temperature"),
])
def test_bad_requests_get_a_400_naming_the_problem(served, body, message):
    status, reply = _post(f"{served.base_url}/chat/completions", body)
    assert status == 400 and message in reply["error"]["message"]
