"""Chat messages in the OpenAI format, with images as inline base64 PNG data URLs.

Prompt builders that know their images (critic, curriculum) embed them directly as
`image_url` parts. Policy prompts are pure text templates: they carry an image placeholder
`{"type": "image"}` (the form Hugging Face chat templates and TRL datasets use), which an
endpoint backend fills with the screenshot via `fill_image_placeholders`.
"""

from __future__ import annotations

import base64
import copy
import json
from collections.abc import Sequence
from typing import Any

Message = dict[str, Any]

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
IMAGE_PLACEHOLDER: dict[str, str] = {"type": "image"}


def png_data_url(png: bytes) -> str:
    """`data:image/png;base64,...` for PNG bytes; rejects anything that is not a PNG."""
    if not isinstance(png, (bytes, bytearray)) or not bytes(png[:8]) == PNG_SIGNATURE:
        raise ValueError("image must be PNG bytes (missing PNG signature)")
    return "data:image/png;base64," + base64.b64encode(bytes(png)).decode("ascii")


def text_part(text: str) -> dict[str, str]:
    return {"type": "text", "text": text}


def image_part(png: bytes) -> dict[str, Any]:
    return {"type": "image_url", "image_url": {"url": png_data_url(png)}}


def system(text: str) -> Message:
    return {"role": "system", "content": text}


def user(text: str, images: Sequence[bytes] = ()) -> Message:
    """A user message with `text` followed by PNG `images`."""
    if not images:
        return {"role": "user", "content": text}
    return {"role": "user", "content": [text_part(text)] + [image_part(png) for png in images]}


def count_image_placeholders(messages: Sequence[Message]) -> int:
    return sum(
        1
        for m in messages
        if isinstance(m.get("content"), list)
        for part in m["content"]
        if part.get("type") == "image"
    )


def fill_image_placeholders(messages: Sequence[Message], images: Sequence[bytes]) -> list[Message]:
    """Copy of `messages` with each `{"type": "image"}` part replaced, in order, by an
    `image_url` part for the matching PNG; the counts must agree."""
    expected = count_image_placeholders(messages)
    if expected != len(images):
        raise ValueError(f"prompt has {expected} image placeholder(s) but {len(images)} image(s) were given")
    filled = copy.deepcopy(list(messages))
    remaining = iter(images)
    for message in filled:
        content = message.get("content")
        if isinstance(content, list):
            message["content"] = [
                image_part(next(remaining)) if part.get("type") == "image" else part for part in content
            ]
    return filled


def messages_to_json(messages: Sequence[Message]) -> str:
    """Stable JSON text of a prompt (how prompts are stored beside each step)."""
    return json.dumps(list(messages), ensure_ascii=False, sort_keys=True)


def redact_images(messages: Sequence[Message]) -> list[Message]:
    """Copy of `messages` with inline image data replaced by a placeholder, for logs and storage."""
    redacted = copy.deepcopy(list(messages))
    for message in redacted:
        content = message.get("content")
        if isinstance(content, list):
            message["content"] = [
                dict(IMAGE_PLACEHOLDER) if part.get("type") == "image_url" else part for part in content
            ]
    return redacted
