"""Small step-sample tables for the trainer tests (tiny screens keep the image tokens few)."""

from __future__ import annotations

import io
import json

import polars as pl
from PIL import Image

# Three stacked rows on the 0–1000 grid; a click on element i is scored by box i.
ELEMENT_BOXES = [[0, 0, 1000, 330], [0, 330, 1000, 660], [0, 660, 1000, 1000]]
LABELS = ("Wi-Fi", "Bluetooth", "Display")


def png(color: tuple[int, int, int], size: tuple[int, int] = (56, 112)) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", size, color).save(buf, "PNG")
    return buf.getvalue()


def prompt_json(text: str, *, system: str | None = None) -> str:
    messages = [{"role": "system", "content": system}] if system else []
    messages.append({"role": "user", "content": [{"type": "image"}, {"type": "text", "text": text}]})
    return json.dumps(messages)


def click_json(element: int) -> str:
    return json.dumps({"type": "click", "args": {"element": element}}, separators=(",", ":"))


def step_row(i: int, target: int) -> dict:
    return {
        "prompt": prompt_json(f"Tap {LABELS[target]}", system="Answer with one action as JSON."),
        "image": png((40 * i % 256, 90, 160)),
        "target_action": click_json(target),
        "target_response": click_json(target),
        "target_box": None,
        "elements": json.dumps(ELEMENT_BOXES),
        "task_id": f"task-{target}",
        "attempt": 1,
        "step": i,
        "has_hint": i % 2 == 1,
    }


def step_frame(n: int, targets: tuple[int, ...] = (0, 1, 2)) -> pl.DataFrame:
    """`n` click samples cycling through `targets`, with responses (usable for GRPO and SFT)."""
    return pl.DataFrame([step_row(i, targets[i % len(targets)]) for i in range(n)])
