"""`mobileforge serve`: the bundled base answers OpenAI chat-completions requests over HTTP, as
a plain client (urllib, no project code in between) sees it."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from ops.actions import Action, parse_with_context
from ops.agent.messages import fill_image_placeholders
from ops.agent.policy_prompt import build_policy_prompt, element_label
from ops.environments.simulator import SimEnvironment
from ops.agent.episode import TaskSpec
from training.base.bundled import BUNDLED_DIR

REPO = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _post(url: str, body: bytes) -> tuple[int, dict]:
    request = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


@pytest.fixture(scope="module")
def served() -> str:
    port = _free_port()
    process = subprocess.Popen([sys.executable, "-m", "mobileforge.cli.main", "serve", str(BUNDLED_DIR),
                                "--port", str(port), "--model-name", "tiny-base"],
                               cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    base = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(f"{base}/models", timeout=2).close()
            break
        except OSError:
            if process.poll() is not None:
                pytest.fail(f"serve exited: {process.stdout.read()}")
            time.sleep(0.3)
    yield base
    process.terminate()
    process.wait(timeout=30)


def test_a_chat_completion_with_an_image_and_the_element_list_is_a_parseable_action(served):
    observation = SimEnvironment(size=(540, 1200)).reset(TaskSpec(task_id="t", instruction="", step_budget=5))
    elements = [element_label(e) for e in observation.elements]
    prompt = build_policy_prompt("elements", "Open the Clock app", [], [], observation.elements,
                                 screen=observation.screen)
    messages = fill_image_placeholders(prompt, [observation.screenshot_png] * sum(
        1 for m in prompt if isinstance(m.get("content"), list) for p in m["content"] if p.get("type") == "image"))
    body = json.dumps({"model": "tiny-base", "messages": messages, "max_tokens": 48, "temperature": 0}).encode()

    status, reply = _post(f"{served}/chat/completions", body)

    assert status == 200, reply
    assert reply["model"] == "tiny-base" and reply["object"] == "chat.completion"
    text = reply["choices"][0]["message"]["content"]
    parsed = parse_with_context(text, "label_echo", labels=elements)
    assert isinstance(parsed.action, Action), text


def test_the_model_list_names_the_served_model(served):
    with urllib.request.urlopen(f"{served}/models", timeout=10) as response:
        assert [m["id"] for m in json.loads(response.read())["data"]] == ["tiny-base"]


@pytest.mark.parametrize(("body", "message"), [
    (b"{not json", "body is not JSON"),
    (b'{"messages": []}', "non-empty 'messages' list"),
    (b'{"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "http://x/y.png"}}]}]}',
     "data:image"),
    (b'{"messages": [{"role": "user", "content": "hi"}], "temperature": -1}', "temperature"),
])
def test_bad_requests_get_a_400_naming_the_problem(served, body, message):
    status, reply = _post(f"{served}/chat/completions", body)
    assert status == 400 and message in reply["error"]["message"]
