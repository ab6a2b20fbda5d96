"""An OpenAI-compatible chat-completions server for a local checkpoint (`mobileforge serve`).

It lets the endpoint path — rollouts, benchmark, critic through litellm — run for real against
a model on this machine, the way vLLM serves one on a GPU. Requests arriving together are
answered in one batched `generate` call (grouped by their decoding settings). Images come as
`image_url` data URLs. Decoding is unconstrained, as on any served model: the local policy's
row-echo and typing constraints need the observation, which a chat request does not carry.

Endpoints: `POST /v1/chat/completions`, `GET /v1/models`, `GET /health`.
"""

from __future__ import annotations

import base64
import binascii
import io
import json
import queue
import threading
import time
import uuid
from concurrent.futures import Future
from dataclasses import dataclass, field
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from PIL import Image

from ops.agent.messages import redact_images
from training.inference.local_policy import GenerationSettings, LocalPolicy

MAX_BODY_BYTES = 64 * 1024 * 1024
MAX_IMAGES_PER_REQUEST = 8


class BadRequest(ValueError):
    """A request the server answers with HTTP 400 and this message."""


@dataclass
class _Job:
    messages: list[dict[str, Any]]
    images: list[Image.Image]
    settings: GenerationSettings
    result: Future = field(default_factory=Future)


def _decode_image(url: Any) -> Image.Image:
    if not isinstance(url, str) or not url.startswith("data:image/") or ";base64," not in url:
        raise BadRequest("image_url.url must be a data:image/...;base64, URL (the server fetches nothing)")
    try:
        return Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1], validate=True))).convert("RGB")
    except (binascii.Error, OSError, ValueError) as error:
        raise BadRequest(f"image_url: not a decodable image ({error})") from None


def parse_request(body: bytes, defaults: GenerationSettings) -> _Job:
    """A chat-completions request body as a generation job; `BadRequest` names what is wrong."""
    try:
        request = json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as error:
        raise BadRequest(f"body is not JSON: {error}") from None
    if not isinstance(request, dict) or not isinstance(request.get("messages"), list) or not request["messages"]:
        raise BadRequest("body must be an object with a non-empty 'messages' list")
    images = []
    for message in request["messages"]:
        if not isinstance(message, dict) or message.get("role") not in ("system", "user", "assistant"):
            raise BadRequest("each message must be an object with role system, user or assistant")
        content = message.get("content")
        if isinstance(content, list):
            for part in content:
                if not isinstance(part, dict) or part.get("type") not in ("text", "image_url"):
                    raise BadRequest("content parts must be {'type': 'text'} or {'type': 'image_url'}")
                if part["type"] == "image_url":
                    images.append(_decode_image((part.get("image_url") or {}).get("url")))
                elif not isinstance(part.get("text"), str):
                    raise BadRequest("a text part needs a 'text' string")
        elif not isinstance(content, str):
            raise BadRequest("message content must be a string or a list of parts")
    if len(images) > MAX_IMAGES_PER_REQUEST:
        raise BadRequest(f"at most {MAX_IMAGES_PER_REQUEST} images per request, got {len(images)}")
    try:
        settings = GenerationSettings(
            max_new_tokens=int(request.get("max_tokens") or request.get("max_completion_tokens")
                               or defaults.max_new_tokens),
            temperature=float(request.get("temperature", defaults.temperature)),
            top_p=float(request.get("top_p", defaults.top_p)))
    except (TypeError, ValueError) as error:
        raise BadRequest(str(error)) from None
    return _Job(redact_images(request["messages"]), images, settings)


class ChatServer:
    """Serves one checkpoint on `host:port` (port 0 picks a free one) until `stop()`."""

    def __init__(self, checkpoint: str | Path, *, model_name: str | None = None, host: str = "127.0.0.1",
                 port: int = 0, device: str = "cpu", batch_size: int = 16, max_new_tokens: int = 128,
                 batch_wait_s: float = 0.01, threads: int | None = None) -> None:
        self.defaults = GenerationSettings(max_new_tokens=max_new_tokens)
        self.policy = LocalPolicy(checkpoint, generation=self.defaults, device=device, batch_size=batch_size,
                                  threads=threads)
        self.model_name = model_name or Path(checkpoint).resolve().name
        self.batch_size = batch_size
        self.batch_wait_s = batch_wait_s
        self._jobs: queue.Queue[_Job | None] = queue.Queue()
        self._http = ThreadingHTTPServer((host, port), self._handler())
        self._threads = [threading.Thread(target=self._http.serve_forever, daemon=True),
                         threading.Thread(target=self._generate_forever, daemon=True)]

    @property
    def base_url(self) -> str:
        host, port = self._http.server_address[:2]
        return f"http://{host}:{port}/v1"

    def start(self) -> ChatServer:
        for thread in self._threads:
            thread.start()
        return self

    def stop(self) -> None:
        self._http.shutdown()
        self._http.server_close()
        self._jobs.put(None)
        for thread in self._threads:
            thread.join(timeout=30)

    def __enter__(self) -> ChatServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- generation -----------------------------------------------------------------------
    def _next_batch(self) -> list[_Job] | None:
        first = self._jobs.get()
        if first is None:
            return None
        batch = [first]
        deadline = time.monotonic() + self.batch_wait_s
        while len(batch) < self.batch_size:
            try:
                job = self._jobs.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                break
            if job is None:
                self._jobs.put(None)
                break
            batch.append(job)
        return batch

    def _generate_forever(self) -> None:
        while (batch := self._next_batch()) is not None:
            groups: dict[GenerationSettings, list[_Job]] = {}
            for job in batch:
                groups.setdefault(job.settings, []).append(job)
            for settings, jobs in groups.items():
                try:
                    texts = self.policy.generate([j.messages for j in jobs], [i for j in jobs for i in j.images],
                                                 settings=settings)
                except Exception as error:  # noqa: BLE001 - every waiting request gets the error, none hangs
                    for job in jobs:
                        job.result.set_exception(error)
                    continue
                for job, text in zip(jobs, texts):
                    job.result.set_result(text)

    def complete(self, job: _Job, timeout_s: float = 600.0) -> dict[str, Any]:
        """Queue one job and build its chat-completions response."""
        self._jobs.put(job)
        text = job.result.result(timeout=timeout_s)
        return {
            "id": f"chatcmpl-{uuid.uuid4().hex[:16]}", "object": "chat.completion", "created": int(time.time()),
            "model": self.model_name,
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}],
            "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
        }

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # requests are not logged line by line
                return

            def _send(self, status: HTTPStatus, payload: dict[str, Any]) -> None:
                body = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def _error(self, status: HTTPStatus, message: str) -> None:
                self._send(status, {"error": {"message": message, "type": status.phrase, "code": status.value}})

            def do_GET(self) -> None:  # noqa: N802 - http.server's naming
                if self.path.rstrip("/") in ("/v1/models", "/models"):
                    self._send(HTTPStatus.OK, {"object": "list", "data": [
                        {"id": server.model_name, "object": "model", "owned_by": "mobileforge"}]})
                elif self.path.rstrip("/") == "/health":
                    self._send(HTTPStatus.OK, {"status": "ok"})
                else:
                    self._error(HTTPStatus.NOT_FOUND, f"no route {self.path}")

            def do_POST(self) -> None:  # noqa: N802
                if self.path.rstrip("/") not in ("/v1/chat/completions", "/chat/completions"):
                    self._error(HTTPStatus.NOT_FOUND, f"no route {self.path}")
                    return
                length = int(self.headers.get("Content-Length") or 0)
                if length > MAX_BODY_BYTES:
                    self._error(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, f"body over {MAX_BODY_BYTES} bytes")
                    return
                try:
                    job = parse_request(self.rfile.read(length), server.defaults)
                    self._send(HTTPStatus.OK, server.complete(job))
                except BadRequest as error:
                    self._error(HTTPStatus.BAD_REQUEST, str(error))
                except Exception as error:  # noqa: BLE001 - a failed generation is the client's 500, not a dead server
                    self._error(HTTPStatus.INTERNAL_SERVER_ERROR, f"{type(error).__name__}: {error}")

        return Handler
