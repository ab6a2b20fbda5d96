"""One-off pretraining of the embedded base policy on generic grounding data.

Builds a tiny Qwen2-VL checkpoint (`training.models.tiny`), trains it with supervised
next-token loss on (screenshot, element list, instruction) -> canonical action samples from a
pluggable `SampleFn`, evaluates it on held-out samples and saves the checkpoint for reuse.
The prompt/answer format is the label-echo format (`ops.actions.formats.label_echo`), and the
prompt is built by `ops.agent.policy_prompt.build_policy_prompt("elements", ...)`, the same function
rollouts use, so training and rollout prompts match byte for byte.

Plain PyTorch loop rather than TRL's SFTTrainer: the hard skill (picking the element named by
the instruction) needs thousands of steps, so throughput decides (measured 1.9x TRL's); the loop renders the chat template once, tokenizes text-only
batches directly and keeps screenshots to a pre-processed pool that every n-th step uses
(see benchmarks/base_policy_learnability.py for the measured steps/s of both).
"""

from __future__ import annotations

import json
import math
import os
import random
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import torch
from pydantic import BaseModel, Field, model_validator

from ops.actions import Action, ActionType
from training.base.grounding_data import GroundingSample, SampleFn
from ops.actions.formats import label_echo
from ops.agent.policy_prompt import build_policy_prompt
from training.base.induction_format import add_index_tokens
from training.base.sample_text import answer_text, prompt_text, tokenizer_corpus
from training.base.structured_pool import ChatSample, chat_batch, evaluate_structured, sample_text
from training.models.tiny import TinyQwen2VLProcessor, build_tiny_model, check_sizes, load_tiny


PROGRESS_EVERY = 100  # optimizer steps between progress reports
RESUME_FILE = "resume.pt"  # optimizer, sample-stream and loss state of an unfinished run
# config fields that may change between a run and its resumption (they do not change what is learned)
RESUMABLE_CHANGES = frozenset({"max_seconds", "threads", "checkpoint_every", "eval_batch_size"})


class BasePretrainConfig(BaseModel, frozen=True):
    """Everything that defines a base-policy pretraining run (defaults: the embedded recipe)."""

    text_hidden: int = Field(64, gt=0, description="Hidden size of the language model.")
    layers: int = Field(2, gt=0, description="Transformer layers of the language model.")
    heads: int = Field(4, gt=0, description="Attention heads of the language model.")
    vision_depth: int = Field(1, gt=0, description="Vision transformer blocks.")
    vision_embed: int = Field(32, gt=0, description="Vision transformer width.")
    vocab_size: int = Field(1024, ge=300, description="BPE vocabulary size (incl. specials).")
    tokenizer_corpus_samples: int = Field(
        2000, ge=0, description="Samples whose prompt/answer text trains the tokenizer, so labels and "
        "JSON keys become few tokens.")
    max_pixels: int = Field(28 * 28 * 16, ge=28 * 28 * 4,
                            description="Image budget in pixels; 28*28 pixels = one image token.")
    image_pool: int = Field(
        0, ge=0, description="0: text-only, as the embedded element-list policy runs (measured: a text-only "
        "model loses accuracy when a screenshot is added). >0: rendered samples (screenshot in the prompt) made once "
        "and cycled through; rendering and image preprocessing cost ~10x a text-only sample.")
    image_every: int = Field(4, ge=1, description="Every n-th step trains on an image batch from the pool "
                             "(the others put no image in the prompt).")
    batch_size: int = Field(16, gt=0, description="Samples per optimizer step.")
    learning_rate: float = Field(6e-3, gt=0, description="Peak AdamW learning rate (cosine decay to 10%).")
    warmup_steps: int = Field(50, ge=0, description="Linear warm-up steps.")
    weight_decay: float = Field(0.01, ge=0, description="AdamW weight decay.")
    max_steps: int = Field(100_000, gt=0, description="Upper bound on optimizer steps.")
    max_seconds: float = Field(330.0, gt=0, description="Wall-clock budget for the training loop.")
    prompt_loss: bool = Field(
        True, description="Also train next-token prediction on the prompt text (not image tokens); "
        "it gives the copy/lookup skill many more targets per sample.")
    eval_samples: int = Field(300, ge=0, description="Held-out samples for the report (with screenshots).")
    eval_batch_size: int = Field(50, gt=0, description="Generation batch size during evaluation.")
    max_new_tokens: int = Field(32, gt=0, description="Generation budget per answer.")
    seed: int = Field(0, description="Seed for model init and training samples.")
    eval_seed: int = Field(1_000_003, description="Seed for held-out samples (disjoint stream).")
    threads: int = Field(
        1, gt=0, description="torch CPU threads. 1 on a shared machine: measured 10.3 steps/s with 1 "
        "thread vs 0.5 with 2 at load average 6 (threads spin-wait on busy cores).")
    structured_every: int = Field(
        0, ge=0, description="0: off. n: every n-th step trains on a batch of structured-reasoning chat samples "
        "(MobileWizard's four parts, `training.base.structured_pool`) instead, when the run is given some.")
    structured_batch: int = Field(4, gt=0, description="Samples per structured-reasoning step (their prompts "
                                  "are several times longer than the element-list ones).")
    copy_share: float = Field(
        0.0, ge=0, le=1, description="World recipe only: share of samples that are verbatim copies "
        "(`training.base.copy_samples`: clicks on launchers of invented apps drawn per sample, episode clicks "
        "on rows the instruction or a hint names). 0: none (the sim recipe, and the world recipe of R1/R2).")
    checkpoint_every: int = Field(
        250, gt=0, description="Optimizer steps between saves of the weights and the resume state; a run "
        "started again on the same directory with the same config continues from the last save.")

    @model_validator(mode="after")
    def _model_sizes_fit(self) -> "BasePretrainConfig":
        check_sizes(self.text_hidden, self.heads, self.vision_embed)
        return self


@dataclass(frozen=True)
class SkillScore:
    """Held-out greedy answers of one skill (generator `kind`)."""

    n: int
    format_valid: float  # fraction of answers that parse to a canonical action
    exact: float  # fraction equal to the target action
    type_match: float  # fraction with the right action type


@dataclass(frozen=True)
class BasePretrainReport:
    """What a pretraining run produced, saw and scored (held-out prompts carry the screenshot)."""

    checkpoint: str
    steps: int
    samples_seen: int
    image_steps: int  # steps whose prompts carried the screenshot
    wall_seconds: float
    train_seconds: float
    first_loss: float
    final_loss: float
    click_accuracy: float  # held-out clicks on exactly the right element
    click_chance: float  # mean 1/#clickable elements over the same samples
    eval_clicks: int  # held-out click samples behind the two figures above
    format_valid_rate: float
    per_skill: dict[str, SkillScore]
    data_seen: dict[str, int]  # training samples per skill
    sample_fn: str
    config: dict = field(default_factory=dict)
    cpu_seconds: float = 0.0  # process CPU time of the training loop, over every resumed part
    structured: dict = field(default_factory=dict)  # held-out structured-reasoning answers (`evaluate_structured`)

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=2)


class PolicyTextEncoder:
    """Chat-formatted policy prompts without re-running the Jinja template per sample.

    The template is rendered once around a sentinel; prompts are then prefix + text + suffix,
    byte-identical to `processor.apply_chat_template` (checked in the tests).
    """

    _SENTINEL = "\x00PROMPT\x00"

    def __init__(self, processor: TinyQwen2VLProcessor):
        self.processor = processor
        self.tokenizer = processor.tokenizer
        self._frame = {}
        for with_image in (False, True):
            messages = build_policy_prompt("elements", self._SENTINEL, [], [], [], with_image=with_image)
            messages[0]["content"][-1]["text"] = self._SENTINEL
            chat = processor.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
            self._frame[with_image] = tuple(chat.split(self._SENTINEL))

    def prompt(self, sample: GroundingSample, with_image: bool) -> str:
        prefix, suffix = self._frame[with_image]
        return prefix + prompt_text(sample) + suffix

    def answer(self, sample: GroundingSample) -> str:
        return answer_text(sample) + self.tokenizer.eos_token

    def batch(self, samples: list[GroundingSample], *, with_images: bool, answers: bool) -> dict[str, torch.Tensor]:
        """Left-padded model inputs; with `answers`, also `labels` (answer tokens only)."""
        prompts = [self.prompt(s, with_images) for s in samples]
        texts = [p + self.answer(s) for p, s in zip(prompts, samples)] if answers else prompts
        if with_images:
            if any(s.image is None for s in samples):
                raise ValueError("image batch contains a sample without a screenshot")
            inputs = self.processor(text=texts, images=[s.image for s in samples], return_tensors="pt", padding=True)
        else:
            inputs = self.tokenizer(texts, return_tensors="pt", padding=True)
            # Text-only Qwen2-VL positions are plain 0..n-1 on all three rope axes.
            positions = (inputs["attention_mask"].cumsum(-1) - 1).clamp(min=0)
            inputs["position_ids"] = positions.unsqueeze(0).expand(3, -1, -1)
        if answers:
            ids = inputs["input_ids"]
            labels = torch.full_like(ids, -100)
            width = ids.shape[1]
            answer_lens = [len(x) for x in self.tokenizer([self.answer(s) for s in samples])["input_ids"]]
            for row, n in enumerate(answer_lens):  # left padding: the answer is the row's tail
                labels[row, width - n:] = ids[row, width - n:]
            inputs["labels"] = labels
        return inputs


def _with_prompt_loss(inputs: dict[str, torch.Tensor], image_token_id: int) -> None:
    """Extend the targets to every real prompt token except image placeholders."""
    ids = inputs["input_ids"]
    keep = (inputs["attention_mask"] == 1) & (ids != image_token_id)
    inputs["labels"][keep] = ids[keep]


def evaluate_policy(model, encoder: PolicyTextEncoder, samples: list[GroundingSample], *, with_images: bool,
                    batch_size: int = 50, max_new_tokens: int = 32,
                    constraints: Callable[[list[GroundingSample], int], list] | None = None) -> dict:
    """Greedy answers on `samples`: per-skill format validity / exact match, click accuracy vs chance,
    and the decoded answers themselves (`answers`, in the order of `samples`). `constraints(chunk,
    prompt_length)`: logits processors for a generation batch (free decoding without)."""
    model.eval()
    rows: dict[str, list[tuple[bool, bool, bool]]] = {}
    clicks_right, chance, answers = [], [], []
    with torch.no_grad():
        for start in range(0, len(samples), batch_size):
            chunk = samples[start:start + batch_size]
            inputs = encoder.batch(chunk, with_images=with_images, answers=False)
            inputs.pop("position_ids", None)  # generate() derives positions itself
            processors = constraints(chunk, inputs["input_ids"].shape[1]) if constraints is not None else None
            out = model.generate(**inputs, max_new_tokens=max_new_tokens, do_sample=False, logits_processor=processors)
            texts = encoder.tokenizer.batch_decode(out[:, inputs["input_ids"].shape[1]:], skip_special_tokens=True)
            answers += texts
            for s, text in zip(chunk, texts):
                parsed = label_echo.parse_output(text, [e.label for e in s.elements])
                valid = isinstance(parsed, Action)
                rows.setdefault(s.kind, []).append(
                    (valid, valid and parsed == s.target, valid and parsed.type == s.target.type))
                if s.target.type == ActionType.CLICK:
                    clicks_right.append(valid and parsed.element == s.target.element)
                    chance.append(1.0 / s.n_clickable)
    per_skill = {k: SkillScore(len(v), _mean([r[0] for r in v]), _mean([r[1] for r in v]), _mean([r[2] for r in v]))
                 for k, v in sorted(rows.items())}
    all_rows = [r for v in rows.values() for r in v]
    return {
        "click_accuracy": _mean(clicks_right), "click_chance": _mean(chance), "clicks": len(clicks_right),
        "format_valid_rate": _mean([r[0] for r in all_rows]), "per_skill": per_skill, "answers": answers,
    }


def _mean(xs) -> float:
    xs = list(xs)
    return float(sum(xs)) / len(xs) if xs else 0.0


def _lr_at(config: BasePretrainConfig, step: int, progress: float) -> float:
    """Linear warm-up, then cosine decay to 10% of the peak over the step/time budget."""
    warm = min(1.0, (step + 1) / max(1, config.warmup_steps))
    return config.learning_rate * warm * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * min(1.0, progress))))


@dataclass
class _Progress:
    """What a run has done so far; saved with the weights every `checkpoint_every` steps."""

    step: int = 0
    image_steps: int = 0
    structured_steps: int = 0
    train_seconds: float = 0.0
    cpu_seconds: float = 0.0
    losses: list[float] = field(default_factory=list)
    seen: Counter = field(default_factory=Counter)


def _save_resume(out: Path, model, optimizer, rng: random.Random, progress: _Progress,
                 config: BasePretrainConfig) -> None:
    """Weights, then the resume state, each written whole before it replaces the last (a run killed
    mid-save resumes from the previous pair: the state names the step its weights belong to)."""
    model.save_pretrained(out)
    tmp = out / (RESUME_FILE + ".tmp")
    torch.save({"config": config.model_dump(), "optimizer": optimizer.state_dict(), "rng": rng.getstate(),
                "torch_rng": torch.get_rng_state(), "progress": {**vars(progress), "seen": dict(progress.seen)}}, tmp)
    os.replace(tmp, out / RESUME_FILE)


def _load_resume(out: Path, config: BasePretrainConfig) -> dict | None:
    path = out / RESUME_FILE
    if not path.is_file():
        return None
    state = torch.load(path, weights_only=False)
    # a setting added after the run was saved: the run used its default
    saved = {k: state["config"].get(k, info.default) for k, info in BasePretrainConfig.model_fields.items()}
    changed = {k for k, v in config.model_dump().items() if saved[k] != v} - RESUMABLE_CHANGES
    if changed:
        raise ValueError(f"{out} holds an unfinished run with another config ({sorted(changed)} differ); "
                         "resume it with the same settings or pretrain into another directory")
    return state


def pretrain_base_policy(out_dir: str | Path, config: BasePretrainConfig, sample_fn: SampleFn,
                         on_progress: Callable[[int, float, float], None] | None = None,
                         eval_sample_fn: SampleFn | None = None, structured: Sequence[ChatSample] = (),
                         structured_eval: Sequence[ChatSample] = ()) -> BasePretrainReport:
    """Build, train, evaluate and save the base policy; the report is also written as pretrain_report.json.

    Resumable: every `config.checkpoint_every` steps the weights and the resume state (optimizer,
    sample stream, losses) are saved into `out_dir`; called again on a directory holding an
    unfinished run of the same config, it continues from there (the wall-clock budget counts the
    training time of every part). `eval_sample_fn` draws the held-out report's samples (default:
    `sample_fn` at `eval_seed`). With `config.structured_every`, every n-th step trains on a batch of
    `structured` chat samples (cycled), scored after training on `structured_eval`. Sets torch's process-wide thread count to `config.threads`.
    `on_progress(step, mean loss, seconds)` is called every `PROGRESS_EVERY` steps.
    """
    wall_start = time.time()
    torch.set_num_threads(config.threads)
    out = Path(out_dir)
    resumed = _load_resume(out, config)
    if resumed is None:
        build_tiny_model(
            out, text_hidden=config.text_hidden, layers=config.layers, heads=config.heads,
            vision_depth=config.vision_depth, vision_embed=config.vision_embed, vocab_size=config.vocab_size,
            max_pixels=config.max_pixels, seed=config.seed,
            # structured responses teach the tokenizer the part tags and the annotator's phrasing
            corpus=tokenizer_corpus(sample_fn, config.tokenizer_corpus_samples, config.seed + 1,
                                     [sample_text(s) for s in structured[:200]]),
        )
        model, processor = load_tiny(out)
        add_index_tokens(processor.tokenizer, model)  # " #i" row indices become single tokens
        processor.save_pretrained(out)
    else:
        model, processor = load_tiny(out)
    encoder = PolicyTextEncoder(processor)
    image_token_id = model.config.image_token_id
    rng = random.Random(config.seed)
    pool = [sample_fn(rng, True) for _ in range(config.image_pool)]
    optimizer = torch.optim.AdamW(model.parameters(), lr=config.learning_rate, weight_decay=config.weight_decay)
    progress = _Progress()
    if resumed is not None:
        optimizer.load_state_dict(resumed["optimizer"])
        rng.setstate(resumed["rng"])
        torch.set_rng_state(resumed["torch_rng"])
        saved = resumed["progress"]
        progress = _Progress(saved["step"], saved["image_steps"], saved["structured_steps"], saved["train_seconds"],
                             saved["cpu_seconds"], saved["losses"], Counter(saved["seen"]))
    pool_batches: dict[object, dict[str, torch.Tensor]] = {}
    losses, seen = progress.losses, progress.seen
    model.train()
    train_start = time.time() - progress.train_seconds
    cpu_start = time.process_time() - progress.cpu_seconds
    step = progress.step
    while step < config.max_steps and time.time() - train_start < config.max_seconds:
        fraction = max(step / config.max_steps, (time.time() - train_start) / config.max_seconds)
        for group in optimizer.param_groups:
            group["lr"] = _lr_at(config, step, fraction)
        with_images = bool(pool) and step % config.image_every == config.image_every - 1
        every = config.structured_every
        if structured and every and step % every == every - 1:
            first = (progress.structured_steps * config.structured_batch) % len(structured)
            samples = [structured[(first + i) % len(structured)] for i in range(config.structured_batch)]
            if ("structured", first) not in pool_batches:
                pool_batches[("structured", first)] = chat_batch(processor, samples)
            batch = pool_batches[("structured", first)]
            progress.structured_steps += 1
        elif with_images:
            first = (progress.image_steps * config.batch_size) % len(pool)
            samples = [pool[(first + i) % len(pool)] for i in range(config.batch_size)]
            if first not in pool_batches:  # image preprocessing is paid once per pool batch
                pool_batches[first] = encoder.batch(samples, with_images=True, answers=True)
                if config.prompt_loss:
                    _with_prompt_loss(pool_batches[first], image_token_id)
            batch = pool_batches[first]
            progress.image_steps += 1
        else:
            samples = [sample_fn(rng, False) for _ in range(config.batch_size)]
            batch = encoder.batch(samples, with_images=False, answers=True)
            if config.prompt_loss:
                _with_prompt_loss(batch, image_token_id)
        seen.update(getattr(s, "kind", "structured") for s in samples)
        loss = model(**batch).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        losses.append(loss.item())
        step += 1
        if on_progress is not None and step % PROGRESS_EVERY == 0:
            on_progress(step, _mean(losses[-PROGRESS_EVERY:]), time.time() - train_start)
        if step % config.checkpoint_every == 0:
            progress.step, progress.train_seconds = step, time.time() - train_start
            progress.cpu_seconds = time.process_time() - cpu_start
            _save_resume(out, model, optimizer, rng, progress, config)
    train_seconds = time.time() - train_start
    cpu_seconds = time.process_time() - cpu_start
    image_steps = progress.image_steps
    model.save_pretrained(out)

    eval_rng = random.Random(config.eval_seed)
    held_out = [(eval_sample_fn or sample_fn)(eval_rng, bool(config.image_pool)) for _ in range(config.eval_samples)]
    scores = evaluate_policy(model, encoder, held_out, with_images=bool(config.image_pool),
                             batch_size=config.eval_batch_size, max_new_tokens=config.max_new_tokens)
    structured_scores = (evaluate_structured(model, processor, structured_eval, config.structured_batch)
                         if structured_eval else {})
    window = max(1, min(50, len(losses) // 5))
    report = BasePretrainReport(
        checkpoint=str(out), steps=step, samples_seen=step * config.batch_size, image_steps=image_steps,
        wall_seconds=time.time() - wall_start, train_seconds=train_seconds,
        first_loss=_mean(losses[:window]), final_loss=_mean(losses[-window:]),
        click_accuracy=scores["click_accuracy"], click_chance=scores["click_chance"], eval_clicks=scores["clicks"],
        format_valid_rate=scores["format_valid_rate"], per_skill=scores["per_skill"],
        data_seen=dict(sorted(seen.items())), sample_fn=getattr(sample_fn, "__qualname__", repr(sample_fn)),
        config=config.model_dump(), cpu_seconds=cpu_seconds, structured=structured_scores,
    )
    (out / "pretrain_report.json").write_text(report.to_json())
    (out / RESUME_FILE).unlink(missing_ok=True)  # finished: nothing left to resume
    return report
