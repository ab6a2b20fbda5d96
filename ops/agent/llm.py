"""Client for hosted or OpenAI-compatible VLMs (critic, curriculum, endpoint policy) via litellm.

One `LLMClient` per endpoint: bounded concurrency, per-request timeouts, exponential backoff on
transport errors / 5xx / 429, JSON answers validated against a pydantic model with one repair
round, counters. API keys come only from the environment variable the config names.

Error contract: every call ends as its result or as an `LLMCallError` whose `kind` says how it
failed and whose message names the cause (connection refused, DNS, TLS, timeout, an HTTP
status, an unreadable answer); nothing else escapes a call, whatever the server sends. Batch
calls return errors in place, one outcome per request, and the counters add up (`calls` =
`successes` + failures). Answers are read with bounded work (`ops.actions.json_limits`). Lone
surrogates (from an unpaired `\\ud800` escape in the server's JSON) become U+FFFD in answers
and in requests, as a UTF-8 decoder does with invalid bytes, so every text stays storable
and sendable.

All calls run on one process-wide event loop in a background thread, so a client's concurrency
bound holds across every caller (sync or async, any thread). One long-lived loop also suits
litellm, which caches its HTTP sessions per event loop (keyed by the loop's id, which a new loop
could reuse after an old one is collected).
"""

from __future__ import annotations

import asyncio
import math
import os
import random
import re
import statistics
import threading
import time
from collections import Counter
from collections.abc import Awaitable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from pydantic import BaseModel

from ops.agent.messages import Message

from ops.agent.llm_answers import OutputError, parse_json_output, repair_message
from ops.agent.llm_errors import (ErrorKind, LLMCallError, describe_request_failure, exception_chain, loaded_class,
                                  retry_after_s, status_of)

# litellm otherwise downloads its model cost map at import; keep every run offline.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

T = TypeVar("T", bound=BaseModel)


R = TypeVar("R")


NO_AUTH_KEY = "EMPTY"  # what keyless OpenAI-compatible servers (vLLM) accept as a key


@dataclass(frozen=True)
class LLMConfig:
    """Endpoint and call policy. `model` uses litellm names (`openai/<served name>` for an
    OpenAI-compatible server at `api_base`, `gemini/...`, `gpt-4o`, ...)."""

    model: str
    api_base: str | None = None
    api_key_env: str | None = None  # name of the environment variable holding the key
    max_concurrency: int = 8
    timeout_s: float = 60.0
    max_retries: int = 3  # extra attempts per request on transport errors / timeouts
    backoff_initial_s: float = 1.0
    backoff_max_s: float = 30.0
    temperature: float = 0.0
    max_tokens: int = 1024
    json_mode: bool = False  # send response_format=json_object (only if the server supports it)

    def __post_init__(self) -> None:
        checks = {
            "model": bool(self.model and self.model.strip()),
            "max_concurrency": self.max_concurrency >= 1,
            "timeout_s": self.timeout_s > 0,
            "max_retries": self.max_retries >= 0,
            "backoff_initial_s": self.backoff_initial_s >= 0,
            "backoff_max_s": self.backoff_max_s >= self.backoff_initial_s,
            "temperature": self.temperature >= 0,
            "max_tokens": self.max_tokens >= 1,
        }
        for name, ok in checks.items():
            if not ok:
                raise ValueError(f"LLMConfig.{name}: invalid value {getattr(self, name)!r}")
        if self.api_key_env is not None and not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", self.api_key_env):
            raise ValueError(f"LLMConfig.api_key_env: {self.api_key_env!r} is not an environment variable name")

    def resolve_api_key(self) -> str | None:
        """The key from `api_key_env`; a placeholder for keyless custom servers; None lets
        litellm use the provider's own environment variable."""
        if self.api_key_env is None:
            return NO_AUTH_KEY if self.api_base else None
        key = os.environ.get(self.api_key_env)
        if not key:
            raise ValueError(f"LLMConfig.api_key_env: environment variable {self.api_key_env} is not set")
        return key


@dataclass
class LLMStats:
    """Counters of one client. `calls` are logical calls; `requests` are HTTP attempts."""

    calls: int = 0
    requests: int = 0
    retries: int = 0
    repairs: int = 0
    successes: int = 0
    failures: Counter[str] = field(default_factory=Counter)
    latencies_s: list[float] = field(default_factory=list)  # server time of each answered request
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def summary(self) -> dict[str, Any]:
        """Plain numbers for logs and Dagster metadata."""
        lat = sorted(self.latencies_s)
        out: dict[str, Any] = {
            "calls": self.calls,
            "requests": self.requests,
            "retries": self.retries,
            "repairs": self.repairs,
            "successes": self.successes,
            "failures": sum(self.failures.values()),
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
        }
        out.update({f"failures_{k}": v for k, v in sorted(self.failures.items())})
        if lat:
            out["request_latency_mean_s"] = statistics.fmean(lat)
            out["request_latency_p50_s"] = lat[len(lat) // 2]
            out["request_latency_p95_s"] = lat[min(len(lat) - 1, math.ceil(0.95 * len(lat)) - 1)]
            out["request_latency_max_s"] = lat[-1]
        return out


@dataclass(frozen=True)
class Completion:
    text: str
    latency_s: float  # request to answer of the request that succeeded (the model's time)
    elapsed_s: float  # the whole call: waiting for a slot, failed attempts, backoff
    attempts: int


@dataclass(frozen=True)
class JSONResult(Generic[T]):
    value: T
    raw_text: str
    latency_s: float  # summed `Completion.latency_s` of the answer and its repair, if any
    elapsed_s: float  # the whole call, as in `Completion`
    attempts: int  # HTTP requests made
    repaired: bool


@dataclass(frozen=True)
class JSONRequest:
    """One structured call of a batch. `context` is passed to pydantic validation."""

    messages: Sequence[Message]
    schema: type[BaseModel]
    context: Mapping[str, Any] | None = None
    key: str | None = None  # caller's id, copied onto the result's error


def _litellm() -> Any:
    import litellm

    litellm.suppress_debug_info = True  # no "Give Feedback" banners in logs
    return litellm


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def replace_lone_surrogates(value: Any) -> Any:
    """`value` (text, or messages: dicts and lists holding text) with every lone surrogate
    replaced by U+FFFD."""
    if isinstance(value, str):
        return _LONE_SURROGATE.sub("\ufffd", value) if _LONE_SURROGATE.search(value) else value
    if isinstance(value, dict):
        return {k: replace_lone_surrogates(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [replace_lone_surrogates(v) for v in value]
    return value


_LOOP_LOCK = threading.Lock()


_LOOP: asyncio.AbstractEventLoop | None = None


_LOOP_THREAD: threading.Thread | None = None


def _background_loop() -> asyncio.AbstractEventLoop:
    """The process-wide loop all clients run their calls on (started on first use)."""
    global _LOOP, _LOOP_THREAD
    with _LOOP_LOCK:
        if _LOOP is None:
            _LOOP = asyncio.new_event_loop()
            _LOOP_THREAD = threading.Thread(target=_LOOP.run_forever, name="llm-client-loop", daemon=True)
            _LOOP_THREAD.start()
        return _LOOP


def _in_background_loop() -> bool:
    return _LOOP_THREAD is not None and threading.current_thread() is _LOOP_THREAD


class LLMClient:
    """Bounded-concurrency litellm client for one endpoint; cheap to create, nothing to close."""

    def __init__(self, config: LLMConfig) -> None:
        self.config = config
        self._api_key = config.resolve_api_key()
        self._litellm = _litellm()
        self.stats = LLMStats()
        self._loop = _background_loop()
        self._semaphore = self._on_loop(self._make_semaphore())

    async def _make_semaphore(self) -> asyncio.Semaphore:
        return asyncio.Semaphore(self.config.max_concurrency)

    # --- plumbing between the caller and the background loop ------------------------------

    def _on_loop(self, coro: Awaitable[R]) -> R:
        """Run `coro` on the background loop and block until it finishes (sync callers)."""
        if _in_background_loop():
            raise RuntimeError("sync LLMClient methods cannot be called from inside an async LLMClient call")
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result()

    async def _via_loop(self, coro: Awaitable[R]) -> R:
        """Await `coro` on the background loop from any loop (async callers)."""
        if asyncio.get_running_loop() is self._loop:
            return await coro
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coro, self._loop))

    # --- one HTTP request with retries ----------------------------------------------------

    def _classify(self, exc: BaseException) -> ErrorKind:
        """Error kind of a failed request (TRANSPORT and TIMEOUT are retried)."""
        litellm = self._litellm
        if isinstance(exc, (asyncio.TimeoutError, litellm.Timeout)):
            return ErrorKind.TIMEOUT
        status = status_of(exc)
        if status is not None and 400 <= status < 500 and status not in (408, 429):
            return ErrorKind.REJECTED
        if any(isinstance(link, UnicodeEncodeError) for link in exception_chain(exc)):
            return ErrorKind.REJECTED  # sending it again cannot help
        if isinstance(exc, (*loaded_class("openai", "APIError"), ConnectionError)):  # litellm's subclass openai's
            return ErrorKind.TRANSPORT
        return ErrorKind.UNEXPECTED

    def _backoff_s(self, attempt: int, exc: BaseException) -> float:
        cfg = self.config
        delay = min(cfg.backoff_max_s, cfg.backoff_initial_s * 2 ** (attempt - 1))
        delay *= random.uniform(0.5, 1.0)  # jitter keeps a crowd of retries from landing together
        hinted = retry_after_s(exc)
        return min(cfg.backoff_max_s, max(delay, hinted)) if hinted is not None else delay

    async def _request(self, messages: Sequence[Message]) -> Completion:
        cfg = self.config
        kwargs: dict[str, Any] = {
            "model": cfg.model,
            "messages": replace_lone_surrogates(list(messages)),
            "temperature": cfg.temperature,
            "max_tokens": cfg.max_tokens,
            "timeout": cfg.timeout_s,
            "max_retries": 0,  # retries are ours (counted, with backoff), not the SDK's
            "num_retries": 0,
        }
        if cfg.api_base:
            kwargs["api_base"] = cfg.api_base
        if self._api_key is not None:
            kwargs["api_key"] = self._api_key
        if cfg.json_mode:
            kwargs["response_format"] = {"type": "json_object"}
        start = time.monotonic()
        attempt = 0
        while True:
            attempt += 1
            self.stats.requests += 1
            try:
                async with self._semaphore:
                    sent = time.monotonic()
                    # Backstop in case the transport ignores its own timeout.
                    response = await asyncio.wait_for(
                        self._litellm.acompletion(**kwargs), timeout=cfg.timeout_s + 1.0
                    )
                    latency = time.monotonic() - sent
            except Exception as exc:  # noqa: BLE001 — every failure becomes a classified LLMCallError
                kind = self._classify(exc)
                if kind in (ErrorKind.TRANSPORT, ErrorKind.TIMEOUT) and attempt <= cfg.max_retries:
                    self.stats.retries += 1
                    await asyncio.sleep(self._backoff_s(attempt, exc))
                    continue
                raise LLMCallError(kind, describe_request_failure(exc, cfg.api_base), attempts=attempt) from exc
            self.stats.latencies_s.append(latency)
            try:
                text = _answer_text(response)
            except Exception as exc:  # noqa: BLE001 — a body litellm let through but nobody can read
                raise LLMCallError(ErrorKind.UNEXPECTED, f"unreadable answer: {type(exc).__name__}: {str(exc)[:200]}",
                                   attempts=attempt) from exc
            usage = getattr(response, "usage", None)
            self.stats.prompt_tokens += _token_count(getattr(usage, "prompt_tokens", 0))
            self.stats.completion_tokens += _token_count(getattr(usage, "completion_tokens", 0))
            return Completion(text, latency_s=latency, elapsed_s=time.monotonic() - start, attempts=attempt)

    # --- public async API -----------------------------------------------------------------

    async def _complete(self, messages: Sequence[Message]) -> Completion:
        _check_messages(messages)
        self.stats.calls += 1
        try:
            completion = await self._request(messages)
        except Exception as exc:  # noqa: BLE001 — one recorded outcome per call
            err = self._failed(exc)
            if err is exc:
                raise
            raise err from exc
        self.stats.successes += 1
        return completion

    def _failed(self, exc: Exception) -> LLMCallError:
        """`exc` as the call's `LLMCallError`, counted once."""
        err = exc if isinstance(exc, LLMCallError) else LLMCallError(
            ErrorKind.UNEXPECTED, f"{type(exc).__name__}: {str(exc)[:300]}")
        self.stats.failures[err.kind.value] += 1
        return err

    async def _json(
        self, messages: Sequence[Message], schema: type[T], context: Mapping[str, Any] | None
    ) -> JSONResult[T]:
        _check_messages(messages)
        self.stats.calls += 1
        start = time.monotonic()
        conversation = list(messages)
        attempts, latency = 0, 0.0
        try:
            for repair_round in (False, True):
                completion = await self._request(conversation)
                attempts += completion.attempts
                latency += completion.latency_s
                try:
                    value = parse_json_output(completion.text, schema, context)
                except OutputError as err:
                    if repair_round:
                        raise LLMCallError(err.kind, str(err), attempts=attempts, raw_text=completion.text) from None
                    self.stats.repairs += 1
                    conversation += [
                        {"role": "assistant", "content": completion.text},
                        {"role": "user", "content": repair_message(err)},
                    ]
                    continue
                self.stats.successes += 1
                elapsed = time.monotonic() - start
                return JSONResult(value, completion.text, latency, elapsed, attempts, repaired=repair_round)
        except Exception as exc:  # noqa: BLE001 — one recorded outcome per call
            err = self._failed(exc)
            if err is exc:
                raise
            raise err from exc
        raise AssertionError("unreachable")

    async def _captured(self, coro: Awaitable[R], key: str | None) -> R | LLMCallError:
        try:
            return await coro
        except LLMCallError as err:
            err.key = key
            return err

    async def acomplete(self, messages: Sequence[Message]) -> Completion:
        """Raw text answer for `messages`; raises `LLMCallError`."""
        return await self._via_loop(self._complete(messages))

    async def ajson(
        self, messages: Sequence[Message], schema: type[T], context: Mapping[str, Any] | None = None
    ) -> JSONResult[T]:
        """Answer parsed into `schema` (one repair round); raises `LLMCallError`."""
        return await self._via_loop(self._json(messages, schema, context))

    async def amap_json(self, requests: Sequence[JSONRequest]) -> list[JSONResult | LLMCallError]:
        """All requests concurrently (bounded); each slot holds a result or its error."""
        return await self._via_loop(self._map_json(requests))

    async def amap_complete(self, conversations: Sequence[Sequence[Message]]) -> list[Completion | LLMCallError]:
        return await self._via_loop(self._map_complete(conversations))

    async def _map_json(self, requests: Sequence[JSONRequest]) -> list[JSONResult | LLMCallError]:
        for request in requests:  # a malformed request is the caller's bug: raise before any call
            _check_messages(request.messages)
        return list(await asyncio.gather(
            *(self._captured(self._json(r.messages, r.schema, r.context), r.key) for r in requests)
        ))

    async def _map_complete(self, conversations: Sequence[Sequence[Message]]) -> list[Completion | LLMCallError]:
        for messages in conversations:
            _check_messages(messages)
        return list(await asyncio.gather(*(self._captured(self._complete(m), None) for m in conversations)))

    # --- public sync API ------------------------------------------------------------------

    def complete(self, messages: Sequence[Message]) -> Completion:
        return self._on_loop(self._complete(messages))

    def json(
        self, messages: Sequence[Message], schema: type[T], context: Mapping[str, Any] | None = None
    ) -> JSONResult[T]:
        return self._on_loop(self._json(messages, schema, context))

    def map_json(self, requests: Sequence[JSONRequest]) -> list[JSONResult | LLMCallError]:
        return self._on_loop(self._map_json(requests))

    def map_complete(self, conversations: Sequence[Sequence[Message]]) -> list[Completion | LLMCallError]:
        return self._on_loop(self._map_complete(conversations))


def _answer_text(response: Any) -> str:
    """The assistant text of a chat completion ("" for none), lone surrogates replaced."""
    content = response.choices[0].message.content
    if content is None:
        return ""
    if not isinstance(content, str):
        raise TypeError(f"message content is {type(content).__name__}, not text")
    return replace_lone_surrogates(content)


def _token_count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def _check_messages(messages: Sequence[Message]) -> None:
    if not messages:
        raise ValueError("messages is empty")
    for i, message in enumerate(messages):
        if not isinstance(message, Mapping) or "role" not in message or "content" not in message:
            raise ValueError(f"messages[{i}] must be a mapping with 'role' and 'content'")
