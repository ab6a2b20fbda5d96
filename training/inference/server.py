"""An OpenAI-compatible chat-completions server for a local checkpoint (`mobileforge serve`).

It lets the endpoint path — rollouts, benchmark, critic through litellm — run for real against
a model on this machine, the way vLLM serves one on a GPU: a Starlette app on uvicorn (a listen
backlog of `ServeLimits.backlog`, up to `max_connections` open connections). Requests arriving
together are answered in one batched `generate` call (grouped by their decoding settings), one
batch at a time. Images come as `image_url` data URLs. Decoding is unconstrained, as on any served
model: the local policy's row-echo and typing constraints need the observation, which a chat
request does not carry.

Each request is bounded before it costs anything (`training.inference.chat_request`): its body
reserves memory from a reading budget before it is read, is checked whole before any image is
decoded, and its prompt is tokenized (to check it fits the context) only once its text is known
to be short enough; a checked request reserves its size from the queue budget before it waits for
generation. So the memory held for requests stays under `ServeLimits.memory_bound_bytes()`, and a
client's mistake is a 4xx naming it.

Endpoints: `POST /v1/chat/completions`, `GET /v1/models`, `GET /health`.
"""

from __future__ import annotations

import asyncio
import copy
import queue
import socket
import sys
import threading
import time
import uuid
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import uvicorn
from PIL import Image
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from training.inference.byte_budget import ByteBudget
from training.inference.chat_request import BadRequest, ServeLimits, decode_images, parse_chat_request
from training.inference.local_policy import GenerationSettings, LocalPolicy

STARTUP_SECONDS = 60.0
STOP_SECONDS = 30.0


@dataclass
class _Job:
    messages: list[dict[str, Any]]
    images: list[Image.Image]
    settings: GenerationSettings
    prompt_tokens: int
    nbytes: int  # what it holds while queued: its pixels and its prompt's characters
    result: Future = field(default_factory=Future)


def _error(status: int, message: str) -> JSONResponse:
    kind = "invalid_request_error" if status < 500 else "server_error"
    return JSONResponse({"error": {"message": message, "type": kind, "code": status}}, status_code=status)


def model_context_tokens(model: Any) -> int | None:
    """The context length a checkpoint's config declares (its text model's position embeddings)."""
    config = model.config
    for candidate in (getattr(config, "text_config", None), config):
        length = getattr(candidate, "max_position_embeddings", None)
        if isinstance(length, int) and length > 0:
            return length
    return None


class ChatServer:
    """Serves one checkpoint on `host:port` (port 0 picks a free one) until `stop()`."""

    def __init__(self, checkpoint: str | Path, *, model_name: str | None = None, host: str = "127.0.0.1",
                 port: int = 0, device: str = "cpu", batch_size: int = 16, max_new_tokens: int = 128,
                 batch_wait_s: float = 0.01, threads: int | None = None, limits: ServeLimits | None = None) -> None:
        self.defaults = GenerationSettings(max_new_tokens=max_new_tokens)
        self.policy = LocalPolicy(checkpoint, generation=self.defaults, device=device, batch_size=batch_size,
                                  threads=threads)
        limits = limits or ServeLimits()
        context = model_context_tokens(self.policy.model) or limits.context_tokens
        if context is None:
            raise ValueError(f"{checkpoint}: the model's config declares no context length; give limits.context_tokens")
        self.limits = limits = limits.for_model(context)
        # Prompts are measured with a processor of their own: a fast tokenizer's padding settings are
        # state of its Rust object, and a call from an intake thread would unpad the generator's batch.
        self._measuring = copy.deepcopy(self.policy.processor)
        self._measuring_lock = threading.Lock()
        self.model_name = model_name or Path(checkpoint).resolve().name
        self.batch_size = batch_size
        self.batch_wait_s = batch_wait_s
        self._jobs: queue.Queue[_Job | None] = queue.Queue()
        self._socket = socket.create_server((host, port), backlog=limits.backlog)
        self._uvicorn = uvicorn.Server(uvicorn.Config(
            self.app(), http="h11", lifespan="off", log_level="warning", access_log=False,
            backlog=limits.backlog, limit_concurrency=limits.max_connections, timeout_keep_alive=30,
            timeout_graceful_shutdown=STOP_SECONDS / 2))
        self._threads = [threading.Thread(target=self._uvicorn.run, kwargs={"sockets": [self._socket]}, daemon=True),
                         threading.Thread(target=self._generate_forever, daemon=True)]

    @property
    def base_url(self) -> str:
        host, port = self._socket.getsockname()[:2]
        return f"http://{host}:{port}/v1"

    def start(self) -> ChatServer:
        for thread in self._threads:
            thread.start()
        deadline = time.monotonic() + STARTUP_SECONDS
        while not self._uvicorn.started:
            if not self._threads[0].is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"the HTTP server did not start on {self.base_url}")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        self._uvicorn.should_exit = True  # answers what is in flight (the generator still runs), then stops
        self._threads[0].join(timeout=STOP_SECONDS)
        self._jobs.put(None)
        self._threads[1].join(timeout=STOP_SECONDS)
        self._socket.close()

    def __enter__(self) -> ChatServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- HTTP -----------------------------------------------------------------------------
    def app(self) -> Starlette:
        """The ASGI app; its budgets belong to the event loop that serves it."""
        reading = ByteBudget(self.limits.reading_budget)
        queued = ByteBudget(self.limits.queue_budget_bytes)
        intake = asyncio.Semaphore(self.limits.intake_workers)

        async def chat_completions(request: Request) -> JSONResponse:
            try:
                declared = self._declared_length(request)
                held = await reading.reserve(self.limits.reading_cost(declared))
                try:
                    body = await self._read_body(request)
                    async with intake:
                        job = await run_in_threadpool(self._intake, body)
                        del body
                        held.release()
                        held = await queued.reserve(job.nbytes)  # holding the intake slot: back-pressure
                    self._jobs.put(job)
                    text = await asyncio.wrap_future(job.result)
                finally:
                    held.release()
            except BadRequest as error:
                return _error(error.status, str(error))
            except ClientDisconnect:
                return _error(400, "the client closed the connection before sending its body")
            return JSONResponse(self._completion(job, text))

        async def models(request: Request) -> JSONResponse:
            return JSONResponse({"object": "list", "data": [
                {"id": self.model_name, "object": "model", "owned_by": "mobileforge",
                 "max_model_len": self.limits.context}]})

        async def health(request: Request) -> JSONResponse:
            return JSONResponse({"status": "ok"})

        async def http_error(request: Request, error: Exception) -> JSONResponse:
            assert isinstance(error, HTTPException)
            return _error(error.status_code, f"{request.method} {request.url.path}: {error.detail}")

        async def server_error(request: Request, error: Exception) -> JSONResponse:
            return _error(500, f"{type(error).__name__}: {str(error)[:300]}")

        return Starlette(routes=[
            Route("/v1/chat/completions", chat_completions, methods=["POST"]),
            Route("/chat/completions", chat_completions, methods=["POST"]),
            Route("/v1/models", models, methods=["GET"]), Route("/models", models, methods=["GET"]),
            Route("/health", health, methods=["GET"]),
        ], exception_handlers={HTTPException: http_error, Exception: server_error})

    def _declared_length(self, request: Request) -> int:
        """The body length the request declares (the largest allowed when chunked); 4xx if too large."""
        header = request.headers.get("content-length")
        if header is None:
            return self.limits.max_body_bytes
        if not header.isascii() or not header.isdigit():
            raise BadRequest(f"Content-Length: {header[:40]!r} is not a length in bytes")
        if len(header) > 20 or int(header) > self.limits.max_body_bytes:
            raise BadRequest(f"Content-Length: {header[:40]} bytes, over this server's limit of "
                             f"{self.limits.max_body_bytes}", status=413)
        return int(header)

    async def _read_body(self, request: Request) -> bytearray:
        """The body, stopping at the limit (a chunked body declares no length) and at `body_seconds`."""
        body = bytearray()
        try:
            async with asyncio.timeout(self.limits.body_seconds):
                async for chunk in request.stream():
                    body += chunk
                    if len(body) > self.limits.max_body_bytes:
                        raise BadRequest(f"body: over this server's limit of {self.limits.max_body_bytes} bytes",
                                         status=413)
        except TimeoutError:
            raise BadRequest(f"body: not received within {self.limits.body_seconds:.0f} s ({len(body)} bytes came)",
                             status=408) from None
        return body

    def _intake(self, body: bytearray) -> _Job:
        """A request checked, its images decoded and its prompt tokenized, ready for generation
        (runs in a worker thread)."""
        request = parse_chat_request(body, self.limits)
        images = decode_images(request.images)
        prompt_tokens = self._prompt_tokens(request.messages, images)
        new_tokens = request.max_tokens or self.defaults.max_new_tokens
        if prompt_tokens + new_tokens > self.limits.context:
            raise BadRequest(f"messages: the prompt is {prompt_tokens} tokens and max_tokens {new_tokens}; together "
                             f"over the model's context of {self.limits.context} tokens")
        settings = GenerationSettings(
            max_new_tokens=new_tokens,
            temperature=self.defaults.temperature if request.temperature is None else request.temperature,
            top_p=self.defaults.top_p if request.top_p is None else request.top_p)
        nbytes = sum(3 * i.width * i.height for i in images) + 4 * request.prompt_chars
        return _Job(request.messages, images, settings, prompt_tokens, nbytes)

    def _prompt_tokens(self, messages: list[dict[str, Any]], images: list[Image.Image]) -> int:
        """The prompt's length in tokens, images included, as the model's processor builds it."""
        processor = self._measuring
        try:
            with self._measuring_lock:
                text = processor.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
                inputs = processor(text=[text], images=images or None, return_tensors="pt")
        except Exception as error:  # noqa: BLE001 - what the processor refuses is this request's content
            raise BadRequest(f"messages: the model's processor refuses this prompt ({type(error).__name__}: "
                             f"{str(error)[:200]})") from None
        return int(inputs["input_ids"].shape[1])

    def _completion(self, job: _Job, text: str) -> dict[str, Any]:
        with self._measuring_lock:
            completion_tokens = len(self._measuring.tokenizer(text)["input_ids"])
        return {
            "id": f"chatcmpl-{uuid.uuid4().hex[:16]}", "object": "chat.completion", "created": int(time.time()),
            "model": self.model_name,
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}],
            "usage": {"prompt_tokens": job.prompt_tokens, "completion_tokens": completion_tokens,
                      "total_tokens": job.prompt_tokens + completion_tokens},
        }

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
                if job.result.set_running_or_notify_cancel():  # a cancelled request is not generated
                    groups.setdefault(job.settings, []).append(job)
            for settings, jobs in groups.items():
                try:
                    texts = self.policy.generate([j.messages for j in jobs], [i for j in jobs for i in j.images],
                                                 settings=settings)
                except Exception as error:  # noqa: BLE001 - every waiting request gets the error, none hangs
                    print(f"generation failed for {len(jobs)} requests: {type(error).__name__}: {error}",
                          file=sys.stderr)
                    for job in jobs:
                        job.result.set_exception(error)
                    continue
                for job, text in zip(jobs, texts):
                    job.result.set_result(text)
