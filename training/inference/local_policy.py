"""Local transformers policy: a vision-language checkpoint directory run in-process with its
own processor and chat template (CPU or GPU, greedy or sampled).

Twin of `ops.agent.policy.EndpointPolicy`; callers hold either through `ops.agent.episode.Policy`.
"""

from __future__ import annotations

import io
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import torch
from PIL import Image
from transformers import AutoModelForImageTextToText, AutoProcessor, ProcessorMixin

from ops.actions.formats.label_echo import render_row
from ops.agent.episode import PolicyOutput, PolicyRequest
from ops.agent.policy import PromptedPolicy
from ops.agent.messages import messages_to_json
from ops.agent.policy_prompt import PromptStyle, element_label
from ops.agent.messages import count_image_placeholders
from training.inference.decoding_constraints import DecodingConstraints
from training.inference.typing_constraint import typable_texts
from training.models.tiny import TinyQwen2VLProcessor
from training.models.weight_files import verify_weights
from training.threads import torch_threads

# Processor classes saved by our own builders, which AutoProcessor cannot resolve by name
# (it would silently fall back to the bare tokenizer).
PROCESSOR_CLASSES: dict[str, type[ProcessorMixin]] = {"TinyQwen2VLProcessor": TinyQwen2VLProcessor}


@dataclass(frozen=True)
class GenerationSettings:
    """Decoding settings; `temperature` 0 means greedy. For an element-list policy,
    `constrain_echo`: an echoed row must be one of the screen's rows (`training.inference.echo_constraint`);
    `constrain_typing`: typed (and hinted answer) text must be a string the hints or the
    instruction offer (`training.inference.typing_constraint`)."""

    max_new_tokens: int = 64
    temperature: float = 0.0
    top_p: float = 1.0
    seed: int | None = None  # seeds torch once at load, so a run's samples are reproducible
    constrain_echo: bool = False
    constrain_typing: bool = False

    def __post_init__(self) -> None:
        if self.max_new_tokens < 1:
            raise ValueError(f"GenerationSettings.max_new_tokens: must be >= 1, got {self.max_new_tokens}")
        if self.temperature < 0:
            raise ValueError(f"GenerationSettings.temperature: must be >= 0, got {self.temperature}")
        if not 0 < self.top_p <= 1:
            raise ValueError(f"GenerationSettings.top_p: must be in (0, 1], got {self.top_p}")


def load_processor(checkpoint: Path) -> ProcessorMixin:
    """The checkpoint's image+text processor, padding on the left for batched generation."""
    config_file = checkpoint / "processor_config.json"
    name = json.loads(config_file.read_text()).get("processor_class") if config_file.is_file() else None
    if name in PROCESSOR_CLASSES:
        processor = PROCESSOR_CLASSES[name].from_pretrained(checkpoint)
    else:
        processor = AutoProcessor.from_pretrained(checkpoint)
    if not hasattr(processor, "image_processor") or not hasattr(processor, "tokenizer"):
        raise ValueError(
            f"{checkpoint}: no image+text processor found (got {type(processor).__name__}); "
            "the checkpoint must hold a processor config with an image processor"
        )
    processor.tokenizer.padding_side = "left"  # every prompt must end where generation starts
    return processor


def _image(png: bytes) -> Image.Image:
    return Image.open(io.BytesIO(png)).convert("RGB")


@torch.inference_mode()
def generate_texts(model: torch.nn.Module, processor: ProcessorMixin, prompts: Sequence[list[dict]],
                   images: Sequence[Image.Image], settings: GenerationSettings,
                   constraints: Callable[[int], list] | None = None) -> list[str]:
    """Decoded continuations of chat `prompts` (one batch, padded on the processor's side) by `model`,
    greedy or sampled as `settings` say; `constraints(prompt_length)` gives logits processors."""
    texts = [processor.apply_chat_template(p, add_generation_prompt=True, tokenize=False) for p in prompts]
    inputs = processor(text=texts, images=list(images) or None, return_tensors="pt", padding=True).to(model.device)
    kwargs: dict = {"max_new_tokens": settings.max_new_tokens, "pad_token_id": processor.tokenizer.pad_token_id}
    if settings.temperature > 0:
        kwargs.update(do_sample=True, temperature=settings.temperature, top_p=settings.top_p)
    else:
        kwargs.update(do_sample=False, temperature=None, top_p=None, top_k=None)
    prompt_length = inputs["input_ids"].shape[1]
    processors = constraints(prompt_length) if constraints is not None else []
    if processors:
        kwargs["logits_processor"] = processors
    output = model.generate(**inputs, **kwargs)
    return processor.batch_decode(output[:, prompt_length:], skip_special_tokens=True)


class LocalPolicy(PromptedPolicy):
    """A checkpoint directory (config, weights, tokenizer, processor, chat template) run locally."""

    def __init__(
        self,
        checkpoint: str | Path,
        style: PromptStyle | str = PromptStyle.ELEMENTS,
        *,
        generation: GenerationSettings = GenerationSettings(),
        device: str = "cpu",
        batch_size: int = 16,
        version: str | None = None,
        threads: int | None = 1,
    ) -> None:
        path = Path(checkpoint)
        if not (path / "config.json").is_file():
            raise FileNotFoundError(f"checkpoint: no model at {path} (config.json missing)")
        if batch_size < 1:
            raise ValueError(f"batch_size: must be >= 1, got {batch_size}")
        if threads is not None and threads < 1:
            raise ValueError(f"threads: must be >= 1, got {threads}")
        super().__init__(style, version or f"local:{path.resolve()}")
        self.generation = generation
        self.device = torch.device(device)
        self.batch_size = batch_size
        # torch's CPU threads while generating; None keeps the process's count. 1 by default, as
        # PolicyResource.torch_threads: beside another busy process two threads spin-wait for each other
        # (one decoding step's attention: 7.6 ms with 2 threads, 0.02 ms with 1, on a loaded 2-core machine)
        self.threads = threads
        if generation.seed is not None:
            torch.manual_seed(generation.seed)
        verify_weights(path)  # a damaged weight file is refused by name, not loaded as other weights
        self.processor = load_processor(path)
        self.model = AutoModelForImageTextToText.from_pretrained(path).to(self.device).eval()
        self._constraints = DecodingConstraints(self.processor.tokenizer, echo=generation.constrain_echo,
                                                typing=generation.constrain_typing)

    def generate(self, prompts: Sequence[list[dict]], images: Sequence[Image.Image],
                 rows: Sequence[Sequence[str]] | None = None,
                 typable: Sequence[dict[str, frozenset[str]]] | None = None,
                 settings: GenerationSettings | None = None) -> list[str]:
        """Decoded continuations of chat `prompts` (one image placeholder each); with `rows`
        (per prompt), an echoed row is one of that prompt's rows; with `typable` (per prompt, by
        action type), typed or answered text is one of those strings. `settings` overrides this
        policy's decoding settings for the call (its seed is not applied)."""
        def constraints(prompt_length: int) -> list:
            return self._constraints.processors(prompt_length, rows, typable)

        with torch_threads(self.threads):
            return generate_texts(self.model, self.processor, prompts, images, settings or self.generation,
                                  constraints)

    def act_batch(self, requests: Sequence[PolicyRequest]) -> list[PolicyOutput]:
        """Generates in chunks of `batch_size` prompts of similar length (left padding to a
        chunk's longest prompt costs attention quadratic in its length: measured 1.7x faster on
        benchmark prompts than chunks in request order); each output's latency is its chunk's
        wall time."""
        prompts = [self.prompt_for(r) for r in requests]
        stored = [messages_to_json(p) for p in prompts]
        order = sorted(range(len(requests)), key=lambda i: len(stored[i]))
        outputs: list[PolicyOutput | None] = [None] * len(requests)
        for start in range(0, len(order), self.batch_size):
            chunk = order[start:start + self.batch_size]
            # prompts without an image placeholder (the text-only element style) skip decoding
            images = [_image(requests[i].observation.screenshot_png) for i in chunk
                      if count_image_placeholders(prompts[i])]
            elements = self.style == PromptStyle.ELEMENTS
            rows = ([[render_row(k, element_label(e)) for k, e in enumerate(requests[i].observation.elements)]
                     for i in chunk] if self.generation.constrain_echo and elements else None)
            typable = ([typable_texts(requests[i].instruction, [h.hint_summary for h in requests[i].hints])
                        for i in chunk] if self.generation.constrain_typing and elements else None)
            began = time.monotonic()
            texts = self.generate([prompts[i] for i in chunk], images, rows, typable)
            latency = time.monotonic() - began
            for i, text in zip(chunk, texts):
                outputs[i] = PolicyOutput(raw_text=text, prompt=stored[i], latency_s=latency)
        return outputs
