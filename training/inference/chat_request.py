"""A chat-completions request body checked before any expensive work (`mobileforge serve`).

Every limit is one field of `ServeLimits`, and every refusal is a `BadRequest` with the HTTP
status and a message naming the field (`messages.0.content.1.image_url.url: ...`). The order is
what keeps one request's cost bounded: the body's size and its number of JSON values (a byte
count, before parsing), then its shape and every scalar (pydantic, from the JSON bytes), then the
prompt's characters and image count, then each image's header (its pixel count, before any
pixel is decoded); decoding and tokenizing come last (`training.inference.server`).
"""

from __future__ import annotations

import base64
import binascii
import io
from dataclasses import dataclass, replace
from typing import Annotated, Any, Literal

from PIL import Image
from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag, ValidationError

from ops.agent.messages import IMAGE_PLACEHOLDER

MiB = 1024 * 1024
IMAGE_FORMATS = ("PNG", "JPEG", "WEBP", "GIF", "BMP")
DATA_URL_PREFIX = "data:image/"
# Containers (dicts, lists) of a parsed body, in bytes each: what a body of many tiny values costs
# once parsed (an empty dict alone is 64 bytes), counted against the reading budget.
BYTES_PER_JSON_VALUE = 128
PARSE_FACTOR = 3  # a body in memory while read, its parsed strings, and slack for the parser's copies


class BadRequest(ValueError):
    """A request refused with `status` (4xx) and this message."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class ServeLimits:
    """What one request may ask of the server, and the memory the server holds for requests at
    most (`memory_bound_bytes`): bodies being read and parsed (the reading budget), images being
    decoded (`intake_workers` requests at a time, `max_request_pixels` each) and checked requests
    waiting for or in generation (`queue_budget_bytes`)."""

    context_tokens: int | None = None  # prompt tokens + max_tokens; None: the model's own (`for_model`)
    max_body_bytes: int = 64 * MiB
    max_json_values: int = 100_000  # dicts, lists and scalars of a body
    max_messages: int = 256
    max_parts_per_message: int = 64
    max_images: int = 8
    max_request_pixels: int = 1 << 24  # all images of a request together (16.8 MP: eight 1080x1920 screens)
    max_new_tokens: int = 4096  # a request's max_tokens
    chars_per_token: int = 16  # prompt characters allowed per context token, checked before tokenizing
    body_seconds: float = 60.0  # to receive a body, so a stalled client holds its reservation no longer
    reading_budget_bytes: int | None = None  # None: one largest body with its parse (`reading_cost`)
    queue_budget_bytes: int = 256 * MiB
    intake_workers: int = 2  # requests parsed and decoded at once (CPU-bound: one per core)
    max_connections: int = 1024  # open connections; beyond, new ones are answered 503
    backlog: int = 2048  # connections the kernel queues before the server accepts them

    def __post_init__(self) -> None:
        if self.context_tokens is None:
            return
        if self.reading_cost(self.max_body_bytes) > self.reading_budget:
            raise ValueError(f"reading_budget_bytes: {self.reading_budget} cannot hold one body of max_body_bytes "
                             f"{self.max_body_bytes} ({self.reading_cost(self.max_body_bytes)} bytes with its parse)")
        if self.queued_cost_bound() > self.queue_budget_bytes:
            raise ValueError(f"queue_budget_bytes: {self.queue_budget_bytes} cannot hold one request of the "
                             f"largest size ({self.queued_cost_bound()} bytes)")

    def for_model(self, context_tokens: int) -> ServeLimits:
        """These limits for a model of `context_tokens` (a configured context stays when smaller)."""
        return replace(self, context_tokens=min(context_tokens, self.context_tokens or context_tokens))

    @property
    def context(self) -> int:
        if self.context_tokens is None:
            raise ValueError("ServeLimits.context_tokens: unknown until the model is loaded (for_model)")
        return self.context_tokens

    @property
    def max_prompt_chars(self) -> int:
        return self.context * self.chars_per_token

    @property
    def max_counted_bytes(self) -> int:
        """Commas and opening brackets a body may hold: its JSON values plus its text's own."""
        return self.max_json_values + self.max_prompt_chars

    @property
    def reading_budget(self) -> int:
        return self.reading_budget_bytes or self.reading_cost(self.max_body_bytes)

    def reading_cost(self, body_bytes: int) -> int:
        """Reading-budget bytes a body of `body_bytes` reserves while it is read and parsed."""
        return PARSE_FACTOR * body_bytes + BYTES_PER_JSON_VALUE * self.max_counted_bytes

    def queued_cost_bound(self) -> int:
        """Queue-budget bytes of the largest request: its RGB pixels and its prompt's characters."""
        return 3 * self.max_request_pixels + 4 * self.max_prompt_chars

    def decoding_bytes(self) -> int:
        """Memory of one request being decoded: its RGB pixels plus one image in its stored mode."""
        return 7 * self.max_request_pixels

    def memory_bound_bytes(self) -> int:
        """Memory the server holds for requests at most, above its idle size and a batch's
        generation (which depends on the model)."""
        return self.reading_budget + self.intake_workers * self.decoding_bytes() + self.queue_budget_bytes


# --- the body's shape (OpenAI chat-completions, the fields this server reads) ---------------------

class ImageURL(BaseModel):
    url: str
    detail: str | None = None


class _TextPart(BaseModel):
    type: Literal["text"]
    text: str


class _ImagePart(BaseModel):
    type: Literal["image_url"]
    image_url: ImageURL


# Union members are tagged "kind:..." so an error's location can leave them out (`_location`).
def _part_kind(value: Any) -> str | None:
    kind = value.get("type") if isinstance(value, dict) else getattr(value, "type", None)
    return f"part:{kind}" if kind in ("text", "image_url") else None


def _content_kind(value: Any) -> str | None:
    return "content:text" if isinstance(value, str) else "content:parts" if isinstance(value, list) else None


_Part = Annotated[Annotated[_TextPart, Tag("part:text")] | Annotated[_ImagePart, Tag("part:image_url")],
                  Discriminator(_part_kind, custom_error_type="content_part",
                                custom_error_message="a content part must be {'type': 'text', 'text': ...} or "
                                                     "{'type': 'image_url', 'image_url': {'url': ...}}")]


class _Message(BaseModel):
    model_config = ConfigDict(extra="ignore")

    role: Literal["system", "user", "assistant"]
    content: Annotated[Annotated[str, Tag("content:text")] | Annotated[list[_Part], Tag("content:parts")],
                       Discriminator(_content_kind, custom_error_type="content",
                                     custom_error_message="content must be a string or a list of parts")]


class _ChatRequest(BaseModel):
    model_config = ConfigDict(extra="ignore")  # other OpenAI fields (model, seed, stop, ...) are not read

    messages: list[_Message] = Field(min_length=1)
    max_tokens: int | None = Field(None, ge=1)
    max_completion_tokens: int | None = Field(None, ge=1)
    temperature: float | None = Field(None, ge=0, le=2, allow_inf_nan=False)
    top_p: float | None = Field(None, gt=0, le=1, allow_inf_nan=False)
    n: int | None = Field(None, ge=1, le=1, description="one completion per request")
    stream: Literal[False] | None = Field(None, description="streaming is not served")


@dataclass(frozen=True)
class ImageSource:
    """An image of a request, opened (its header read) but not decoded; `where` names its field."""

    where: str
    image: Image.Image


@dataclass(frozen=True)
class ChatRequest:
    """A checked request: messages with image placeholders, its images in order, and its decoding
    settings (None: the server's default)."""

    messages: list[dict[str, Any]]
    images: list[ImageSource]
    max_tokens: int | None
    temperature: float | None
    top_p: float | None
    prompt_chars: int


def _excerpt(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"


def _validation_message(error: ValidationError) -> str:
    problems = []
    for item in error.errors(include_url=False)[:3]:
        if item["type"] == "json_invalid":
            return f"body is not JSON: {item['ctx'].get('error', item['msg'])}"
        where = ".".join(str(p) for p in item["loc"] if not (isinstance(p, str) and ":" in p)) or "body"
        shown = "" if item["type"] in ("missing", "model_type") and not isinstance(item.get("input"), str) \
            else f" (got {_excerpt(item.get('input'))})"
        problems.append(f"{where}: {item['msg']}{shown}")
    more = error.error_count() - len(problems)
    return "; ".join(problems) + (f"; and {more} more" if more > 0 else "")


def _open_image(where: str, url: str, max_pixels: int) -> Image.Image:
    """The image of a data URL with its header read; BadRequest naming `where` otherwise."""
    if not url.startswith(DATA_URL_PREFIX) or ";base64," not in url[:64]:
        raise BadRequest(f"{where}: must be a data:image/...;base64, URL (the server fetches nothing), "
                         f"got {_excerpt(url)}")
    try:
        data = base64.b64decode(url.split(",", 1)[1], validate=True)
    except (binascii.Error, ValueError) as error:
        raise BadRequest(f"{where}: not valid base64 ({error})") from None
    try:
        return Image.open(io.BytesIO(data), formats=IMAGE_FORMATS)
    except Image.DecompressionBombError as error:  # PIL's own limit, far above this server's
        raise BadRequest(f"{where}: {str(error)[:120]}; this server decodes at most {max_pixels} pixels "
                         "per request") from None
    except (OSError, ValueError) as error:
        raise BadRequest(f"{where}: not an image of a format served ({', '.join(IMAGE_FORMATS)}): "
                         f"{str(error)[:120]}") from None


def parse_chat_request(body: bytes | bytearray, limits: ServeLimits) -> ChatRequest:
    """`body` checked against `limits` with no pixel decoded; BadRequest naming what is wrong."""
    if not body:
        raise BadRequest("body is empty: expected a JSON chat-completions request")
    counted = body.count(b",") + body.count(b"[") + body.count(b"{")
    if counted > limits.max_counted_bytes:  # a bound on the values parsing would create, found without parsing
        raise BadRequest(f"body holds over {limits.max_counted_bytes} JSON values, commas and brackets "
                         f"({counted}); this server reads at most {limits.max_json_values} values plus a "
                         f"prompt of {limits.max_prompt_chars} characters")
    try:
        request = _ChatRequest.model_validate_json(body)
    except ValidationError as error:
        raise BadRequest(_validation_message(error)) from None
    if len(request.messages) > limits.max_messages:
        raise BadRequest(f"messages: {len(request.messages)} messages, over this server's limit of "
                         f"{limits.max_messages}")
    for max_field in ("max_tokens", "max_completion_tokens"):
        value = getattr(request, max_field)
        if value is not None and value > limits.max_new_tokens:
            raise BadRequest(f"{max_field}: {_excerpt(value, 30)} is over this server's limit of "
                             f"{limits.max_new_tokens} new tokens")
    messages, urls, prompt_chars = [], [], 0
    for m, message in enumerate(request.messages):
        if isinstance(message.content, str):
            prompt_chars += len(message.content)
            messages.append({"role": message.role, "content": message.content})
            continue
        if len(message.content) > limits.max_parts_per_message:
            raise BadRequest(f"messages.{m}.content: {len(message.content)} parts, over this server's limit of "
                             f"{limits.max_parts_per_message}")
        parts = []
        for p, part in enumerate(message.content):
            if isinstance(part, _TextPart):
                prompt_chars += len(part.text)
                parts.append({"type": "text", "text": part.text})
            else:
                urls.append((f"messages.{m}.content.{p}.image_url.url", part.image_url.url))
                parts.append(dict(IMAGE_PLACEHOLDER))
        messages.append({"role": message.role, "content": parts})
    if prompt_chars > limits.max_prompt_chars:
        raise BadRequest(f"messages: the prompt's text is {prompt_chars} characters; this server's context of "
                         f"{limits.context} tokens takes at most {limits.max_prompt_chars} "
                         f"({limits.chars_per_token} per token)")
    if len(urls) > limits.max_images:  # counted before any image is opened
        raise BadRequest(f"messages: {len(urls)} images, over this server's limit of {limits.max_images} per request")
    images, pixels = [], 0
    for where, url in urls:
        image = _open_image(where, url, limits.max_request_pixels)
        width, height = image.size
        pixels += width * height
        if pixels > limits.max_request_pixels:
            raise BadRequest(f"{where}: a {width}x{height} image brings the request to {pixels} pixels, over this "
                             f"server's limit of {limits.max_request_pixels} per request (checked before decoding)")
        images.append(ImageSource(where, image))
    return ChatRequest(messages, images, request.max_tokens or request.max_completion_tokens, request.temperature,
                       request.top_p, prompt_chars)


def decode_images(sources: list[ImageSource]) -> list[Image.Image]:
    """The request's images decoded to RGB; BadRequest naming the first that does not decode."""
    decoded = []
    for source in sources:
        try:
            decoded.append(source.image.convert("RGB"))
        except (OSError, ValueError, SyntaxError) as error:
            raise BadRequest(f"{source.where}: the image does not decode ({str(error)[:120]})") from None
        finally:
            source.image.close()
    return decoded
