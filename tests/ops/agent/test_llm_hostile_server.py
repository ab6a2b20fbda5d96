"""The LLM client against a hostile or absent server (issue #26): every call of a batch ends
in exactly one recorded outcome, the counters add up, and a failure names its cause."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from ops.agent.llm import JSONRequest, JSONResult, LLMClient, LLMConfig
from ops.agent.llm_errors import ErrorKind, LLMCallError
from ops.judging.critic.prompts import StepDescription
from tests.support.openai_server import RecordedRequest, Reply

GOOD = json.dumps({"action_description": "Tapped Wi-Fi", "ui_description": "Settings list"})
PATHOLOGICAL_ANSWERS = [
    GOOD, "[" * 100_000, "{" * 300_000, '{"a":' * 100_000, "9" * 5000, '{"action_description": NaN}',
    '{"action_description": "\\ud800", "ui_description": "x"}', "x" * 150_000 + GOOD,
    '{"action_description": ' + "1" * 5000 + "}", "\ud800", "", "```json\n" * 50_000,
]


def _config(base_url: str, **overrides: object) -> LLMConfig:
    settings: dict[str, object] = {"model": "openai/scripted-model", "api_base": base_url, "timeout_s": 5.0,
                                   "max_retries": 1, "backoff_initial_s": 0.01, "backoff_max_s": 0.02}
    settings.update(overrides)
    return LLMConfig(**settings)  # type: ignore[arg-type]


def test_a_batch_of_pathological_answers_yields_one_outcome_per_call(serve):
    def behaviour(request: RecordedRequest) -> Reply:
        return Reply(PATHOLOGICAL_ANSWERS[int(request.messages[0]["content"]) % len(PATHOLOGICAL_ANSWERS)])

    client = LLMClient(_config(serve(behaviour).base_url))
    requests = [JSONRequest([{"role": "user", "content": str(i)}], StepDescription, key=str(i)) for i in range(24)]

    start = time.monotonic()
    results = client.map_json(requests)

    assert time.monotonic() - start < 60
    assert len(results) == 24
    for i, result in enumerate(results):
        if i % len(PATHOLOGICAL_ANSWERS) in (0, 7):  # the good answer, also after 150,000 characters of prose
            assert isinstance(result, JSONResult)
        else:
            assert isinstance(result, LLMCallError) and result.key == str(i)
            assert result.kind in (ErrorKind.INVALID_JSON, ErrorKind.SCHEMA)
    stats = client.stats.summary()
    assert stats["calls"] == 24 == stats["successes"] + stats["failures"]


BODIES = {
    "not JSON": b"<html>502 Bad Gateway</html>",
    "a JSON list": b"[1, 2]",
    "no choices": json.dumps({"id": "x", "object": "chat.completion", "model": "m"}).encode(),
    "empty choices": json.dumps({"id": "x", "object": "chat.completion", "model": "m", "choices": []}).encode(),
    "content not text": json.dumps({"id": "x", "object": "chat.completion", "model": "m", "choices": [
        {"index": 0, "message": {"role": "assistant", "content": 5}, "finish_reason": "stop"}]}).encode(),
    "nested 100,000 deep": b'{"choices": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
    "empty": b"",
}


class RawBodyServer:
    """Answers every POST with status 200 and the raw body of `BODIES` its URL path names."""

    def __init__(self) -> None:
        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length", "0")))
                body = BODIES[self.path.split("/")[1].replace("_", " ")]
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def url(self, name: str) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/{name.replace(' ', '_')}/v1"


@pytest.fixture
def raw_server() -> Iterator[RawBodyServer]:
    server = RawBodyServer()
    yield server
    server.httpd.shutdown()
    server.httpd.server_close()


@pytest.mark.parametrize("name", list(BODIES))
def test_a_body_that_is_not_a_chat_completion_is_a_recorded_failure_that_says_so(raw_server, name):
    client = LLMClient(_config(raw_server.url(name)))

    [result] = client.map_json([JSONRequest([{"role": "user", "content": "hi"}], StepDescription)])

    assert isinstance(result, LLMCallError) and result.kind in (ErrorKind.TRANSPORT, ErrorKind.UNEXPECTED)
    assert not result.message.startswith("HTTP")  # the server answered 200; litellm calls it 500
    assert result.message.startswith(("no usable answer", "the server's answer is not JSON", "unreadable answer"))
    assert client.stats.summary()["calls"] == 1 == client.stats.summary()["failures"]


def test_a_refused_connection_is_reported_as_such_not_as_http_500():
    with socket.socket() as probe:  # a localhost port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    client = LLMClient(_config(f"http://127.0.0.1:{port}/v1"))

    results = client.map_json([JSONRequest([{"role": "user", "content": str(i)}], StepDescription) for i in range(3)])

    assert all(isinstance(r, LLMCallError) and r.kind == ErrorKind.TRANSPORT for r in results)
    assert all(r.message.startswith(f"connection refused (http://127.0.0.1:{port}/v1)") for r in results)
    assert "HTTP 500" not in results[0].message and results[0].attempts == 2
    assert client.stats.summary()["failures_transport"] == 3


def test_a_timeout_is_reported_as_such(serve):
    client = LLMClient(_config(serve(lambda request: Reply(GOOD, delay_s=2.0)).base_url, timeout_s=0.3, max_retries=0))
    with pytest.raises(LLMCallError) as info:
        client.complete([{"role": "user", "content": "hi"}])
    assert info.value.kind == ErrorKind.TIMEOUT and info.value.message.startswith("timed out")
