"""A chat-completions body is checked whole, field by field, before any image is decoded: each
client mistake is a `BadRequest` (4xx) naming its field, and the checks cost time linear in the
body (no parse of a body with too many values, no pixel of an image over the pixel limit)."""

from __future__ import annotations

import asyncio
import base64
import io
import json
import time

import pytest
from PIL import Image

from training.inference.byte_budget import ByteBudget
from training.inference.chat_request import BadRequest, ServeLimits, decode_images, parse_chat_request

LIMITS = ServeLimits().for_model(4096)


def _png(width: int, height: int) -> bytes:
    buffer = io.BytesIO()
    Image.new("L", (width, height)).save(buffer, "PNG")
    return buffer.getvalue()


def _image(data: bytes) -> dict:
    return {"type": "image_url", "image_url": {"url": "data:image/png;base64," + base64.b64encode(data).decode()}}


def _body(content, **fields) -> bytes:
    return json.dumps({"messages": [{"role": "user", "content": content}], **fields}).encode()


def _refusal(body: bytes, limits: ServeLimits = LIMITS) -> BadRequest:
    with pytest.raises(BadRequest) as caught:
        parse_chat_request(body, limits)
    return caught.value


@pytest.mark.parametrize(("body", "expected"), [
    (b"", "body is empty"),
    (b'{"messages": [{"role": "user", "content": "hi"}], "max_tokens": ' + b"9" * 5000 + b"}",
     "body is not JSON: number out of range"),
    (b'{"messages": [{"role": "user", "content": "\\udc00"}]}', "body is not JSON: lone leading surrogate"),
    (b'{"messages": [{"role": "user", "content": "\xff"}]}', "body is not JSON: invalid unicode code point"),
    (b'{"messages": [{"role": "user", "content": "hi"}], "temperature": NaN}', "temperature: Input should be a finite"),
    (_body("hi", temperature=float("inf")), "temperature: Input should be a finite"),
    (_body("hi", temperature=-1), "temperature: Input should be greater than or equal to 0"),
    (_body("hi", top_p=0), "top_p: Input should be greater than 0"),
    (_body("hi", max_tokens=10 ** 9), "max_tokens: 1000000000 is over this server's limit of 4096"),
    (_body("hi", max_tokens="many"), "max_tokens: Input should be a valid integer"),
    (_body("hi", n=3), "n: Input should be less than or equal to 1"),
    (_body("hi", stream=True), "stream: Input should be False"),
    (_body([{"type": "image_url", "image_url": "data:image/png;base64,AAAA"}]),
     "messages.0.content.0.image_url: Input should be an object"),
    (_body([{"type": "video"}]), "messages.0.content.0: a content part must be"),
    (_body(3), "messages.0.content: content must be a string or a list of parts"),
    (json.dumps({"messages": [{"role": "robot", "content": "hi"}]}).encode(), "messages.0.role: Input should be"),
    (json.dumps({"messages": []}).encode(), "messages: List should have at least 1 item"),
    (json.dumps({"messages": [{"role": "user", "content": "x"}] * 300}).encode(), "messages: 300 messages"),
    (_body([{"type": "image_url", "image_url": {"url": "http://example.com/a.png"}}]),
     "messages.0.content.0.image_url.url: must be a data:image/...;base64, URL"),
    (_body([{"type": "image_url", "image_url": {"url": "data:image/png;base64,%%%%"}}]), "not valid base64"),
    (_body([_image(b"not an image")]), "messages.0.content.0.image_url.url: not an image of a format served"),
])
def test_each_client_mistake_is_a_400_naming_its_field(body, expected):
    refusal = _refusal(body)
    assert refusal.status == 400 and expected in str(refusal), str(refusal)
    assert len(str(refusal)) < 600  # a bounded excerpt of the input, not the input


def test_the_image_count_is_checked_before_any_image_is_opened():
    refusal = _refusal(_body([_image(b"junk")] + [_image(_png(8, 8))] * 8))
    assert "9 images, over this server's limit of 8" in str(refusal)


def test_a_decompression_bomb_is_refused_from_its_header_before_decoding():
    bomb = _png(20000, 20000)  # 400 MP of zeros: a few hundred KB compressed
    start = time.process_time()
    refusal = _refusal(_body([{"type": "text", "text": "look"}, _image(bomb)]))
    assert time.process_time() - start < 1.0  # its pixels were never decoded
    assert refusal.status == 400 and "messages.0.content.1.image_url.url" in str(refusal)
    assert "pixels" in str(refusal)


def test_images_under_the_pixel_limit_decode_and_those_over_it_together_are_refused():
    limits = ServeLimits(max_request_pixels=10_000).for_model(4096)
    request = parse_chat_request(_body([_image(_png(50, 100)), _image(_png(100, 50))]), limits)
    assert [i.size for i in decode_images(request.images)] == [(50, 100), (100, 50)]
    refusal = _refusal(_body([_image(_png(50, 100)), _image(_png(100, 50)), _image(_png(2, 2))]), limits)
    assert "messages.0.content.2.image_url.url: a 2x2 image brings the request to 10004 pixels" in str(refusal)


def test_a_truncated_image_is_refused_when_decoded_naming_it():
    request = parse_chat_request(_body([_image(_png(300, 300)[:80])]), LIMITS)
    with pytest.raises(BadRequest, match="messages.0.content.0.image_url.url: the image does not decode"):
        decode_images(request.images)


def test_a_prompt_longer_than_the_context_allows_is_refused_before_tokenizing():
    refusal = _refusal(_body("a" * (LIMITS.max_prompt_chars + 1)))
    assert "the prompt's text is 65537 characters" in str(refusal) and "context of 4096 tokens" in str(refusal)


def test_a_body_of_many_tiny_values_is_refused_without_parsing_it():
    body = b'{"messages": [' + b",".join([b"{}"] * 2_000_000) + b"]}"
    start = time.process_time()
    refusal = _refusal(body)
    assert time.process_time() - start < 0.5  # counted, not parsed (parsing built 3 GB for 20 M of them)
    assert "JSON values" in str(refusal)


def test_a_good_request_keeps_its_messages_with_image_placeholders_and_settings():
    request = parse_chat_request(_body([{"type": "text", "text": "tap OK"}, _image(_png(28, 28))],
                                       max_tokens=12, temperature=0.5, top_p=0.9, model="m", seed=3), LIMITS)
    assert request.messages == [{"role": "user", "content": [{"type": "text", "text": "tap OK"}, {"type": "image"}]}]
    assert (request.max_tokens, request.temperature, request.top_p, request.prompt_chars) == (12, 0.5, 0.9, 6)
    assert [s.where for s in request.images] == ["messages.0.content.1.image_url.url"]


def test_limits_that_cannot_hold_their_largest_request_are_refused():
    with pytest.raises(ValueError, match="reading_budget_bytes"):
        ServeLimits(context_tokens=4096, reading_budget_bytes=1 << 20)
    with pytest.raises(ValueError, match="queue_budget_bytes"):
        ServeLimits(context_tokens=4096, queue_budget_bytes=1 << 20)
    assert ServeLimits(context_tokens=8192).for_model(4096).context == 4096  # the smaller context wins


def test_the_byte_budget_grants_in_arrival_order_and_never_over_its_capacity():
    async def scenario() -> list[str]:
        budget, order = ByteBudget(100), []
        first = await budget.reserve(60)

        async def take(name: str, nbytes: int) -> None:
            held = await budget.reserve(nbytes)
            order.append(name)
            assert budget.available >= 0
            await asyncio.sleep(0)
            held.release()

        waiters = [asyncio.create_task(take("large", 80)), asyncio.create_task(take("small", 10))]
        await asyncio.sleep(0.01)
        assert order == []  # "small" fits, but waits behind "large", which came first
        first.release()
        first.release()  # idempotent
        await asyncio.gather(*waiters)
        full = await budget.reserve(100)
        gone = asyncio.create_task(budget.reserve(50))  # a client that leaves while waiting
        await asyncio.sleep(0.01)
        gone.cancel()
        await asyncio.gather(gone, return_exceptions=True)
        full.release()
        assert budget.available == 100  # the cancelled waiter took nothing
        with pytest.raises(ValueError):
            await budget.reserve(101)
        return order

    assert asyncio.run(scenario()) == ["large", "small"]
