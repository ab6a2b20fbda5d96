"""MobileWizard's four-part structured reasoning (§3.3) in base pretraining: chat samples of the
pretraining world's episodes in the `mobilewizard` prompt style.

The samples are made by the pipeline that makes the style's remedial data
(`training.trainers.solver_steps.solver_step_samples`): the simulator's solver plays each task,
every step's prompt is the one a structured rollout shows (system prompt, task, memory of the
earlier steps' parts and verified outcomes, the screenshot), and its target is the four parts the
programmatic annotator writes, then the action (`ops.actions.render_structured`). A step the format
cannot say (typing by a field's point) drops its task, as there. `chat_batch` turns them into model
inputs with loss on the response only; `evaluate_structured` scores greedy answers on held-out ones.
"""

from __future__ import annotations

import hashlib
import io
import json
import pickle
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import torch
from PIL import Image

from ops.actions import Action, parse_structured
from ops.environments.simulator import SimEnvironment, template_task_spec
from phonesim.source import source_digest
from phonesim.tasks import instantiate
from training.models.tiny import TinyQwen2VLProcessor

SCREEN_SIZE = (270, 600)  # the tiny processor shrinks every screenshot to a few image tokens anyway


@dataclass(frozen=True)
class ChatSample:
    """A prompt as the policy's style builds it (messages with an image placeholder), its screenshot
    and the response to learn."""

    messages: list[dict]
    image: Image.Image
    response: str
    action: dict  # the canonical action the response ends in


def structured_samples(template_ids: Sequence[str], seeds: int, cache: Path | None = None) -> list[ChatSample]:
    """The structured-style samples of `seeds` solver episodes (seeds 0..n-1) of each template."""
    from training.trainers.solver_steps import solver_step_samples  # TRL-free, but heavy: only when asked

    key = hashlib.sha256(repr((sorted(template_ids), seeds, source_digest())).encode()).hexdigest()[:16]
    path = cache / f"structured_{key}.pkl" if cache is not None else None
    if path is not None and path.is_file():
        rows = pickle.loads(path.read_bytes())
    else:
        tasks = [template_task_spec(instantiate(tid, seed)) for tid in sorted(template_ids) for seed in range(seeds)]
        frame = solver_step_samples(tasks, "mobilewizard", lambda: SimEnvironment(size=SCREEN_SIZE)).rows
        rows = frame.select("prompt", "image", "target_response", "target_action").to_dicts()
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.with_suffix(".tmp").write_bytes(pickle.dumps(rows))
            path.with_suffix(".tmp").replace(path)
    return [ChatSample(json.loads(r["prompt"]), Image.open(io.BytesIO(r["image"])).convert("RGB"),
                       r["target_response"], json.loads(r["target_action"])) for r in rows]


def sample_text(sample: ChatSample) -> str:
    """Every text of a sample (its messages' text parts and the response), for the tokenizer's corpus."""
    parts = [m["content"] if isinstance(m["content"], str) else "\n".join(
        c.get("text", "") for c in m["content"] if isinstance(c, dict)) for m in sample.messages]
    return "\n".join([*parts, sample.response])


def chat_texts(processor: TinyQwen2VLProcessor, samples: Sequence[ChatSample]) -> list[str]:
    """Each sample's chat-formatted prompt (generation prompt included)."""
    return [processor.apply_chat_template(s.messages, add_generation_prompt=True, tokenize=False) for s in samples]


def chat_batch(processor: TinyQwen2VLProcessor, samples: Sequence[ChatSample]) -> dict[str, torch.Tensor]:
    """Left-padded inputs of prompt + response + eos, with `labels` on the response tokens only."""
    eos = processor.tokenizer.eos_token
    texts = [p + s.response + eos for p, s in zip(chat_texts(processor, samples), samples)]
    inputs = processor(text=texts, images=[s.image for s in samples], return_tensors="pt", padding=True)
    ids = inputs["input_ids"]
    labels = torch.full_like(ids, -100)
    lengths = [len(x) for x in processor.tokenizer([s.response + eos for s in samples])["input_ids"]]
    for row, n in enumerate(lengths):  # left padding: the response is the row's tail
        labels[row, ids.shape[1] - n:] = ids[row, ids.shape[1] - n:]
    inputs["labels"] = labels
    return inputs


def evaluate_structured(model, processor: TinyQwen2VLProcessor, samples: Sequence[ChatSample],
                        batch_size: int = 8, max_new_tokens: int = 320) -> dict[str, float]:
    """Greedy answers: the share in the strict four-part format, and of those with the right action type."""
    model.eval()
    valid, right_type = [], []
    tokenizer = processor.tokenizer
    with torch.no_grad():
        for start in range(0, len(samples), batch_size):
            chunk = samples[start:start + batch_size]
            inputs = processor(text=chat_texts(processor, chunk), images=[s.image for s in chunk],
                               return_tensors="pt", padding=True)
            out = model.generate(**inputs, max_new_tokens=max_new_tokens, do_sample=False,
                                 pad_token_id=tokenizer.pad_token_id)
            for s, text in zip(chunk, tokenizer.batch_decode(out[:, inputs["input_ids"].shape[1]:],
                                                             skip_special_tokens=True)):
                parsed = parse_structured(text)
                ok = isinstance(parsed.action, Action) and parsed.reasoning is not None
                valid.append(ok)
                right_type.append(ok and parsed.action.type.value == s.action["type"])
    n = max(1, len(valid))
    return {"n": len(valid), "format_valid": sum(valid) / n, "type_match": sum(right_type) / n}
