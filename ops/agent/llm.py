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
import json
import math
import os
import random
import re
import socket
import ssl
import statistics
import sys
import threading
import time
from collections import Counter
from collections.abc import Awaitable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from itertools import islice
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ValidationError

from ops.actions.excerpt import EXCERPT_CHARS, clipped
from ops.actions.json_limits import JSONLimitError, NoJSONFound, check_json_limits, find_json
from ops.agent.messages import Message

# litellm otherwise downloads its model cost map at import; keep every run offline.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

T = TypeVar("T", bound=BaseModel)
R = TypeVar("R")

NO_AUTH_KEY = "EMPTY"  # what keyless OpenAI-compatible servers (vLLM) accept as a key


class ErrorKind(str, Enum):
    TRANSPORT = "transport"  # connection failure, 5xx or 429, still failing after the retries
    TIMEOUT = "timeout"  # no answer within the per-request timeout, after the retries
    REJECTED = "rejected"  # a 4xx the server will repeat (bad request, auth, unknown model)
    INVALID_JSON = "invalid_json"  # no JSON value in the answer, even after the repair round
    SCHEMA = "schema"  # JSON that does not fit the output model, even after the repair round
    UNEXPECTED = "unexpected"  # anything else the client library raised (an answer it cannot read, a bug)


class LLMCallError(Exception):
    """A call that failed for good; `kind` says how, `raw_text` keeps the last answer if any."""

    def __init__(self, kind: ErrorKind, message: str, *, attempts: int = 0, raw_text: str | None = None) -> None:
        super().__init__(f"{kind.value}: {message}")
        self.kind = kind
        self.message = message
        self.attempts = attempts
        self.raw_text = raw_text
        self.key: str | None = None  # set by batch calls to the request's key

    def to_dict(self) -> dict[str, Any]:
        """JSON-able record of the failure, for tables and run metadata."""
        return {"kind": self.kind.value, "message": self.message, "attempts": self.attempts,
                "key": self.key, "raw_text": self.raw_text}


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


class OutputError(ValueError):
    """An answer that is not usable JSON for the requested model (before repair)."""

    def __init__(self, kind: ErrorKind, message: str) -> None:
        super().__init__(message)
        self.kind = kind


# Possessive whitespace: backtracking into it would rescan the rest of an unclosed fence once per
# whitespace character (12 s for a fence opened before 200,000 spaces).
_FENCE = re.compile(r"```(?:json|JSON)?\s*+(.*?)```", re.DOTALL)
MAX_ANSWER_CHARS = 200_000  # ~50,000 tokens: far past any answer's max_tokens; longer text is not read
MAX_FENCES = 8  # fenced blocks tried as a whole before searching the text for a JSON value


def extract_json(text: str) -> Any:
    """The JSON value in a model answer: the whole text, a fenced block, or the first JSON
    object/array embedded in prose. Raises `OutputError(INVALID_JSON)` when there is none, and
    when the answer is not text or is past the limits on length, nesting and digits
    (`ops.actions.json_limits`, `MAX_ANSWER_CHARS`), which are checked before anything is decoded."""
    if not isinstance(text, str):
        raise OutputError(ErrorKind.INVALID_JSON, f"the answer is {type(text).__name__}, not text")
    stripped = text.strip()
    if not stripped:
        raise OutputError(ErrorKind.INVALID_JSON, "the answer is empty")
    try:
        check_json_limits(text, max_chars=MAX_ANSWER_CHARS)
    except JSONLimitError as exc:
        raise OutputError(ErrorKind.INVALID_JSON, f"the answer cannot be read as JSON: {exc}") from None
    candidates = [stripped] + [m.group(1).strip() for m in islice(_FENCE.finditer(text), MAX_FENCES)]
    for candidate in candidates:
        try:
            return json.loads(candidate)
        except (ValueError, RecursionError):  # not JSON; or Python's own limits, as a backstop
            continue
    try:
        return find_json(text, (dict, list))
    except (NoJSONFound, JSONLimitError):
        raise OutputError(ErrorKind.INVALID_JSON, "no JSON object found in the answer") from None


def _describe_validation_error(exc: ValidationError, limit: int = 8) -> str:
    """The first `limit` errors, each naming where and what, clipped (an answer's keys can be long)."""
    parts = []
    for err in exc.errors(include_url=False, include_input=False)[:limit]:
        loc = ".".join(str(p) for p in err["loc"]) or "(root)"
        parts.append(f"{clipped(loc, EXCERPT_CHARS)}: {clipped(err['msg'])}")
    more = exc.error_count() - limit
    return "; ".join(parts) + (f"; and {more} more" if more > 0 else "")


def parse_json_output(text: str, schema: type[T], context: Mapping[str, Any] | None = None) -> T:
    """Extract and validate; raises `OutputError` with kind INVALID_JSON or SCHEMA, and nothing
    else, for any `text`."""
    data = extract_json(text)
    try:
        return schema.model_validate(data, context=dict(context) if context else None)
    except ValidationError as exc:
        raise OutputError(ErrorKind.SCHEMA, _describe_validation_error(exc)) from None
    except (ValueError, TypeError, RecursionError, OverflowError) as exc:  # raised by a validator itself
        raise OutputError(ErrorKind.SCHEMA, f"{type(exc).__name__}: {clipped(str(exc))}") from None


def repair_message(error: OutputError) -> str:
    return (
        f"Your previous answer could not be used: {error}. "
        "Reply again with only the corrected JSON object, including every required field."
    )


def _litellm() -> Any:
    import litellm

    litellm.suppress_debug_info = True  # no "Give Feedback" banners in logs
    return litellm


def _status_of(exc: BaseException) -> int | None:
    status = getattr(exc, "status_code", None)
    return status if isinstance(status, int) else None


def _retry_after_s(exc: BaseException) -> float | None:
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    value = headers.get("retry-after") if headers is not None else None
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


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


def _loaded_class(module: str, name: str) -> tuple[type, ...]:
    """`module.name` as a one-class tuple for isinstance if `module` is already imported, else ():
    no exception can be an instance of a class nobody imported. Keeps openai and httpx (seconds
    of import) out of processes that never make a call."""
    loaded = sys.modules.get(module)
    return (getattr(loaded, name),) if loaded is not None else ()


def _exception_chain(exc: BaseException) -> list[BaseException]:
    chain: list[BaseException] = []
    link: BaseException | None = exc
    while link is not None and link not in chain:
        chain.append(link)
        link = link.__cause__ or link.__context__
    return chain


def _cause_of(link: BaseException) -> str | None:
    """What went wrong, for the exceptions below HTTP that litellm wraps (as "HTTP 500")."""
    if isinstance(link, ConnectionRefusedError):
        return "connection refused"
    if isinstance(link, socket.gaierror):
        return "DNS lookup failed"
    if isinstance(link, ssl.SSLError | ssl.CertificateError):
        return "TLS error"
    if isinstance(link, (TimeoutError, *_loaded_class("openai", "APITimeoutError"))):
        return "timed out"
    if isinstance(link, ConnectionResetError | ConnectionAbortedError | BrokenPipeError):
        return "connection closed by the server"
    if isinstance(link, UnicodeEncodeError):
        return "the request is not encodable as UTF-8"
    if isinstance(link, json.JSONDecodeError):
        return "the server's answer is not JSON"
    return None


def describe_request_failure(exc: BaseException, endpoint: str | None = None) -> str:
    """One line saying why a request failed: the cause below HTTP (connection refused, DNS,
    TLS, timeout, ...) when there is one, else the HTTP status the server really sent, else
    that no usable answer came. (litellm reports all three as "HTTP 500".)"""
    chain = _exception_chain(exc)
    where = f" ({endpoint})" if endpoint else ""
    for link in chain:
        cause = _cause_of(link)
        if cause:
            return f"{cause}{where}: {type(link).__name__}: {str(link)[:200]}"
    # litellm's own exceptions carry a status even when no server sent one; httpx's is real.
    http_status_error = _loaded_class("httpx", "HTTPStatusError")
    status = next((link.response.status_code for link in chain if isinstance(link, http_status_error)), None)
    if status is not None:
        return f"HTTP {status}{where}: {str(exc)[:300]}"
    return f"no usable answer{where}: {str(exc)[:300]}"


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
        status = _status_of(exc)
        if status is not None and 400 <= status < 500 and status not in (408, 429):
            return ErrorKind.REJECTED
        if any(isinstance(link, UnicodeEncodeError) for link in _exception_chain(exc)):
            return ErrorKind.REJECTED  # sending it again cannot help
        if isinstance(exc, (*_loaded_class("openai", "APIError"), ConnectionError)):  # litellm's subclass openai's
            return ErrorKind.TRANSPORT
        return ErrorKind.UNEXPECTED

    def _backoff_s(self, attempt: int, exc: BaseException) -> float:
        cfg = self.config
        delay = min(cfg.backoff_max_s, cfg.backoff_initial_s * 2 ** (attempt - 1))
        delay *= random.uniform(0.5, 1.0)  # jitter keeps a crowd of retries from landing together
        hinted = _retry_after_s(exc)
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
