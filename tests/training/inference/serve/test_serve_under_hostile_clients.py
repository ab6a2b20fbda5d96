"""`mobileforge serve` survives hostile clients: every malformed request is a 4xx naming its
problem over the wire (never a 500, never a reset), and 100 concurrent requests, one of them a
40 MB text message, are all answered while the server's memory stays within the bound it states."""

from __future__ import annotations

import base64
import io
import json
import socket
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import psutil
import pytest
from PIL import Image

from tests.training.inference.serve.conftest import MAX_BODY_MB, Served

PATH = "/v1/chat/completions"


def _exchange(served: Served, request: bytes, timeout: float = 120) -> tuple[int, str]:
    """Send raw bytes; the status and body of the one response (reading its Content-Length)."""
    with socket.create_connection(("127.0.0.1", served.port), timeout=timeout) as connection:
        try:
            connection.sendall(request)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server answered (e.g. 413) and closed before the whole body was sent
        data = b""
        while b"\r\n\r\n" not in data or len(data.split(b"\r\n\r\n", 1)[1]) < _length(data, default=1 << 30):
            chunk = connection.recv(65536)
            if not chunk:
                break
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 "), f"no HTTP answer: {data[:200]!r}"
    return int(head.split()[1]), body.decode(errors="replace")


def _length(data: bytes, default: int) -> int:
    """The response's Content-Length; `default` when it has none (it is then read to the close)."""
    for line in data.split(b"\r\n\r\n", 1)[0].split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return int(value)
    return default


def _post(body: bytes, headers: str | None = None) -> bytes:
    headers = f"Content-Length: {len(body)}\r\n" if headers is None else headers
    return f"POST {PATH} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n{headers}\r\n".encode() + body


def _chat(content, **fields) -> bytes:
    return json.dumps({"messages": [{"role": "user", "content": content}], "max_tokens": 8, **fields}).encode()


def _bomb() -> bytes:
    buffer = io.BytesIO()
    Image.new("L", (20000, 20000)).save(buffer, "PNG")
    url = "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode()
    return _chat([{"type": "image_url", "image_url": {"url": url}}])


CHUNK = 1 << 20
HOSTILE = {
    "Content-Length -1": (lambda: _post(_chat("hi"), "Content-Length: -1\r\n"), 400, "Invalid HTTP request"),
    "Content-Length of 31 digits": (lambda: _post(b"{}", f"Content-Length: {10 ** 30}\r\n"), 400, "Invalid HTTP"),
    "Content-Length over the limit": (lambda: _post(b"{}", f"Content-Length: {(MAX_BODY_MB + 1) << 20}\r\n"), 413,
                                      "over this server's limit"),
    "no Content-Length": (lambda: _post(_chat("hi"), ""), 400, "body is empty"),
    "a Content-Length shorter than the body": (lambda: _post(_chat("hi"), "Content-Length: 5\r\n"), 400,
                                               "body is not JSON"),
    "a chunked body over the limit": (
        lambda: _post((b"%x\r\n" % CHUNK + b"a" * CHUNK + b"\r\n") * (MAX_BODY_MB + 2) + b"0\r\n\r\n",
                      "Transfer-Encoding: chunked\r\n"), 413, "body: over this server's limit"),
    "a 5,000-digit number": (lambda: _post(_chat("hi").replace(b'"max_tokens": 8', b'"max_tokens": ' + b"9" * 5000)),
                             400, "number out of range"),
    "a lone surrogate": (lambda: _post(_chat("hi").replace(b'"hi"', b'"\\udc00"')), 400, "surrogate"),
    "image_url as a string": (lambda: _post(_chat([{"type": "image_url", "image_url": "data:image/png;base64,AA"}])),
                              400, "messages.0.content.0.image_url: Input should be an object"),
    "a NaN temperature": (lambda: _post(_chat("hi", temperature=float("nan"))), 400, "temperature"),
    "a decompression bomb": (lambda: _post(_bomb()), 400, "pixels"),
    "max_tokens of a billion": (lambda: _post(_chat("hi", max_tokens=10 ** 9)), 400, "max_tokens"),
    "a GET of the chat route": (lambda: b"GET /v1/chat/completions HTTP/1.1\r\nHost: x\r\n\r\n", 405, "GET"),
    "an unknown route": (lambda: _post(b"{}").replace(PATH.encode(), b"/v1/nothing"), 404, "/v1/nothing"),
}


@pytest.mark.parametrize("case", list(HOSTILE))
def test_a_hostile_request_is_a_4xx_naming_its_problem(served, case):
    build, status, expected = HOSTILE[case]
    got, body = _exchange(served, build())
    assert (got, expected in body) == (status, True), body


def test_the_server_answers_after_the_hostile_requests(served):
    status, body = _exchange(served, _post(_chat("open the clock")))
    assert status == 200 and json.loads(body)["choices"][0]["message"]["role"] == "assistant"


def _answer(served: Served, index: int, big: bool) -> int | str:
    text = "a" * 40_000_000 if big else f"open the clock {index}"
    try:
        status, _ = _exchange(served, _post(_chat(text, temperature=0)), timeout=600)
        return status
    except OSError as error:  # a reset or refused connection: what this test must not see
        return type(error).__name__


def test_100_concurrent_requests_with_a_40_mb_message_are_all_answered_within_the_memory_bound(served):
    process = psutil.Process(served.pid)
    with ThreadPoolExecutor(16) as warm_up:  # one full batch, so torch's buffers are in the baseline
        assert set(warm_up.map(lambda i: _answer(served, i, False), range(16))) == {200}
    baseline = process.memory_info().rss
    peak, done = [baseline], threading.Event()

    def sample() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], process.memory_info().rss)
            time.sleep(0.02)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    with ThreadPoolExecutor(100) as clients:
        answers = list(clients.map(lambda i: _answer(served, i, big=i == 50), range(100)))
    done.set()
    sampler.join()
    print(f"\n100 concurrent: {Counter(answers)}; RSS {baseline / 2**20:.0f} MiB before, peak "
          f"{peak[0] / 2**20:.0f} MiB; stated bound {served.memory_bound_bytes / 2**20:.0f} MiB above it")
    assert answers[50] == 400  # the 40 MB message: its prompt is over the context's characters
    assert Counter(answers[:50] + answers[51:]) == Counter({200: 99})
    assert peak[0] - baseline <= served.memory_bound_bytes
