"""A small, real OpenAI-compatible HTTP server on 127.0.0.1 for tests and benchmarks.

It implements `POST /v1/chat/completions` (non-streaming) with scripted behaviour: each
request is answered by a `Reply` chosen by a behaviour function (fixed reply, a sequence
that then repeats its last entry, or any callable). Every request body is recorded, and the
server tracks how many requests were in flight at once, so tests can assert on what the
client sent and on its concurrency bound (`GET /stats` reports the counts over HTTP).

Run standalone (e.g. so a benchmark's client does not share the server's GIL):
    python -m tests.support.openai_server --content '{"ok": true}' --latency-ms 200
prints the base URL on its first line, then serves until killed.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Reply:
    """One scripted answer: HTTP `status`, assistant `content` (for 200), and a `delay_s`
    the server waits before answering."""

    content: str = ""
    status: int = 200
    delay_s: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class RecordedRequest:
    index: int  # 0-based arrival order
    path: str
    body: dict[str, Any]
    headers: dict[str, str]  # lower-cased names

    @property
    def messages(self) -> list[dict[str, Any]]:
        return self.body.get("messages", [])

    def image_urls(self) -> list[str]:
        """Every `image_url.url` in the request's message contents."""
        urls = []
        for message in self.messages:
            content = message.get("content")
            if isinstance(content, list):
                urls += [p["image_url"]["url"] for p in content if p.get("type") == "image_url"]
        return urls


Behaviour = Callable[[RecordedRequest], Reply]


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256  # the default listen backlog (5) drops bursts of new connections


def fixed(content: str, delay_s: float = 0.0) -> Behaviour:
    """Every request gets the same successful reply, after `delay_s`."""
    reply = Reply(content=content, delay_s=delay_s)
    return lambda request: reply


def sequence(replies: Sequence[Reply]) -> Behaviour:
    """The n-th request gets `replies[n]`; requests beyond the end get the last reply."""
    if not replies:
        raise ValueError("sequence() needs at least one reply")
    items = list(replies)
    return lambda request: items[min(request.index, len(items) - 1)]


class OpenAICompatibleServer:
    """Threaded HTTP server; use as a context manager. `base_url` ends in `/v1`."""

    def __init__(self, behaviour: Behaviour, model_name: str = "scripted-model") -> None:
        self.behaviour = behaviour
        self.model_name = model_name
        self.requests: list[RecordedRequest] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()
        self._httpd = _Server(("127.0.0.1", 0), self._handler_class())
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> OpenAICompatibleServer:
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, name="openai-server", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> OpenAICompatibleServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _record(self, path: str, body: dict[str, Any], headers: dict[str, str]) -> RecordedRequest:
        with self._lock:
            request = RecordedRequest(len(self.requests), path, body, headers)
            self.requests.append(request)
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        return request

    def _finish(self) -> None:
        with self._lock:
            self.in_flight -= 1

    def _completion_body(self, content: str) -> dict[str, Any]:
        return {
            "id": f"chatcmpl-{len(self.requests)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": self.model_name,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        }

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, like a real inference server
            # Headers and body go out in separate writes; without TCP_NODELAY, Nagle plus the
            # client's delayed ACK stall every keep-alive response by ~40 ms.
            disable_nagle_algorithm = True

            def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
                pass

            def do_GET(self) -> None:
                if self.path.rstrip("/") != "/stats":
                    self._send(404, {"error": {"message": f"no route {self.path}"}})
                    return
                with server._lock:
                    stats = {"requests": len(server.requests), "max_in_flight": server.max_in_flight}
                self._send(200, stats)

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                raw = self.rfile.read(length)
                if self.path.rstrip("/") == "/v1/load_lora_adapter":  # vLLM's runtime LoRA loading, recorded
                    server._record(self.path, json.loads(raw), {k.lower(): v for k, v in self.headers.items()})
                    server._finish()
                    self._send(200, {"loaded": True})
                    return
                if self.path.rstrip("/") != "/v1/chat/completions":
                    self._send(404, {"error": {"message": f"no route {self.path}"}})
                    return
                try:
                    body = json.loads(raw)
                except json.JSONDecodeError:
                    self._send(400, {"error": {"message": "request body is not JSON"}})
                    return
                request = server._record(self.path, body, {k.lower(): v for k, v in self.headers.items()})
                try:
                    reply = server.behaviour(request)
                    if reply.delay_s:
                        time.sleep(reply.delay_s)
                    if reply.status == 200:
                        self._send(200, server._completion_body(reply.content), reply.headers)
                    else:
                        error = {"error": {"message": f"scripted status {reply.status}", "type": "scripted"}}
                        self._send(reply.status, error, reply.headers)
                finally:
                    server._finish()

            def _send(self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
                data = json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for key, value in (headers or {}).items():
                        self.send_header(key, value)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (e.g. its timeout fired); nothing to answer

        return Handler


def main() -> None:
    import argparse

    parser = argparse.ArgumentParser(description="Serve one fixed chat completion with a fixed latency.")
    parser.add_argument("--content", required=True, help="assistant message content of every reply")
    parser.add_argument("--latency-ms", type=float, default=0.0)
    args = parser.parse_args()
    server = OpenAICompatibleServer(fixed(args.content, delay_s=args.latency_ms / 1000)).start()
    print(server.base_url, flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        server.stop()


if __name__ == "__main__":
    main()
