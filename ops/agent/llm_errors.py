"""How an LLM call can fail: the kinds of failure, the error a call ends in, and a message naming the
cause (connection refused, DNS, TLS, timeout, an HTTP status) however deep litellm wrapped it."""

from __future__ import annotations

import json
import socket
import ssl
import sys
from enum import Enum
from typing import Any



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


def status_of(exc: BaseException) -> int | None:
    status = getattr(exc, "status_code", None)
    return status if isinstance(status, int) else None


def retry_after_s(exc: BaseException) -> float | None:
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    value = headers.get("retry-after") if headers is not None else None
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


def loaded_class(module: str, name: str) -> tuple[type, ...]:
    """`module.name` as a one-class tuple for isinstance if `module` is already imported, else ():
    no exception can be an instance of a class nobody imported. Keeps openai and httpx (seconds
    of import) out of processes that never make a call."""
    loaded = sys.modules.get(module)
    return (getattr(loaded, name),) if loaded is not None else ()


def exception_chain(exc: BaseException) -> list[BaseException]:
    chain: list[BaseException] = []
    link: BaseException | None = exc
    while link is not None and link not in chain:
        chain.append(link)
        link = link.__cause__ or link.__context__
    return chain


def cause_of(link: BaseException) -> str | None:
    """What went wrong, for the exceptions below HTTP that litellm wraps (as "HTTP 500")."""
    if isinstance(link, ConnectionRefusedError):
        return "connection refused"
    if isinstance(link, socket.gaierror):
        return "DNS lookup failed"
    if isinstance(link, ssl.SSLError | ssl.CertificateError):
        return "TLS error"
    if isinstance(link, (TimeoutError, *loaded_class("openai", "APITimeoutError"))):
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
    chain = exception_chain(exc)
    where = f" ({endpoint})" if endpoint else ""
    for link in chain:
        cause = cause_of(link)
        if cause:
            return f"{cause}{where}: {type(link).__name__}: {str(link)[:200]}"
    # litellm's own exceptions carry a status even when no server sent one; httpx's is real.
    http_status_error = loaded_class("httpx", "HTTPStatusError")
    status = next((link.response.status_code for link in chain if isinstance(link, http_status_error)), None)
    if status is not None:
        return f"HTTP {status}{where}: {str(exc)[:300]}"
    return f"no usable answer{where}: {str(exc)[:300]}"
