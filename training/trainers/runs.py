"""What every trainer run shares: optimisation settings, loading the processor of a local
checkpoint, training, saving the checkpoint with its manifest, and the run's report."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from datasets import Dataset
from transformers import AutoProcessor, PrinterCallback, ProcessorMixin, Trainer, TrainerCallback
from transformers.integrations import TensorBoardCallback
from trl.data_utils import prepare_multimodal_messages


from training.models.weight_files import verify_weights
from training.threads import torch_threads
from training.trainers.logprob_tiles import tiles_fitting
from training.trainers.lora import ADAPTER_DIR, merge_adapter, parameter_counts
from training.trainers.settings import TENSORBOARD_DIR, TrainSettings
from training.trainers.step_datasets import dataset_fingerprint, load_step_dataset
from training.trainers.manifest import Manifest, write_manifest

PROGRESS_REPORTS = 10  # progress lines per training run when no interval is given


@dataclass
class TrainReport:
    """Outcome of one training run; `curves` maps a metric name to [[step, value], ...]."""

    method: str
    checkpoint: Path
    manifest_path: Path | None
    steps: int
    runtime_s: float
    metrics: dict[str, Any]
    curves: dict[str, list[list[float]]]
    samples: int
    dropped: dict[str, int] = field(default_factory=dict)
    tensorboard_dir: Path | None = None  # TensorBoard event files of the run, inside `checkpoint`
    details: dict[str, Any] = field(default_factory=dict)  # the run's own record (e.g. history_alignment)

    @property
    def seconds_per_step(self) -> float:
        return self.runtime_s / self.steps if self.steps else float("nan")


@contextmanager
def deterministic_algorithms(settings: TrainSettings) -> Iterator[None]:
    """Run the block with torch's deterministic-algorithms switch from the settings, then restore it."""
    before, warn_only = torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled()
    torch.use_deterministic_algorithms(settings.deterministic_algorithms, warn_only=True)
    try:
        yield
    finally:
        torch.use_deterministic_algorithms(before, warn_only=warn_only)


def require_local_checkpoint(path: str | Path) -> Path:
    """The base checkpoint as a local directory, its weights checked against its manifest's digests
    (`verify_weights`); nothing is ever downloaded."""
    path = Path(path)
    if not (path / "config.json").is_file():
        raise FileNotFoundError(
            f"base checkpoint {path} is not a local model directory (config.json missing)"
        )
    verify_weights(path)
    return path


def load_processor(path: str | Path, *, image_max_pixels: int | None = None) -> ProcessorMixin:
    """The checkpoint's processor, tokenizer padding on the left (Qwen2-VL's rope index needs it),
    optionally with a new image pixel budget.

    The embedded tiny model saves a `TinyQwen2VLProcessor` that AutoProcessor cannot build
    (its stock video processor needs torchvision), so it is loaded by its own class.
    """
    path = require_local_checkpoint(path)
    config_file = path / "processor_config.json"
    processor_class = (
        json.loads(config_file.read_text()).get("processor_class") if config_file.is_file() else None
    )
    if processor_class == "TinyQwen2VLProcessor":
        from training.models.tiny import TinyQwen2VLProcessor

        processor = TinyQwen2VLProcessor.from_pretrained(path)
    else:
        processor = AutoProcessor.from_pretrained(path)
    processor.tokenizer.padding_side = "left"
    if image_max_pixels is not None:
        size = getattr(processor.image_processor, "size", None)
        if size is None or getattr(size, "longest_edge", None) is None:
            raise ValueError(
                f"image_max_pixels: the image processor of {path} has no pixel budget (size.longest_edge)"
            )
        if image_max_pixels < size.shortest_edge:
            raise ValueError(
                f"image_max_pixels={image_max_pixels} is below the processor's minimum {size.shortest_edge}"
            )
        processor.image_processor.size = {
            "shortest_edge": size.shortest_edge,
            "longest_edge": image_max_pixels,
        }
    return processor


def resolve_dataset(dataset: Dataset | str | Path) -> tuple[Dataset, str | None]:
    """A step dataset and the path it was loaded from (None for an in-memory one)."""
    if isinstance(dataset, Dataset):
        return dataset, None
    return load_step_dataset(dataset), str(dataset)


def token_count(processor: ProcessorMixin, example: dict[str, Any], *, with_completion: bool) -> int:
    """Tokens (text + image) of a step sample's prompt, plus its completion if asked."""
    turns = example["prompt"] + (example["completion"] if with_completion else [])
    images = [example["image"]] if "image" in example else []  # text-only datasets have no image column
    messages = prepare_multimodal_messages(turns, images=images) if images else turns
    text = processor.apply_chat_template(messages, tokenize=False, add_generation_prompt=not with_completion)
    return len(processor(text=[text], images=images or None)["input_ids"][0])


def drop_overlong(
    dataset: Dataset, processor: ProcessorMixin, max_tokens: int | None, *, with_completion: bool = False
) -> tuple[Dataset, int]:
    """`dataset` without samples longer than `max_tokens`, and how many were dropped.

    Samples are dropped rather than truncated: cutting into the image tokens would break the
    sample, and a truncated prompt is not the prompt the policy saw.
    """
    if max_tokens is None:
        return dataset, 0
    keep = [
        i
        for i, example in enumerate(dataset)
        if token_count(processor, example, with_completion=with_completion) <= max_tokens
    ]
    return (dataset if len(keep) == len(dataset) else dataset.select(keep)), len(dataset) - len(keep)


@dataclass
class TrainOutcome:
    """What training produced: the final metrics, the log history and optimizer steps (counted over
    the whole run), and any curves and record of the run's own (`TrainReport.details`)."""

    metrics: dict[str, Any]
    log_history: list[dict[str, Any]]
    global_step: int
    curves: dict[str, list[list[float]]] = field(default_factory=dict)
    details: dict[str, Any] = field(default_factory=dict)


def single_run(trainer: Trainer) -> TrainOutcome:
    """One `trainer.train()` over its dataset."""
    output = trainer.train()
    return TrainOutcome(output.metrics, trainer.state.log_history, trainer.state.global_step)


def train_again(trainer: Trainer, budget: dict[str, Any]) -> TrainOutcome:
    """One more `trainer.train()` over its current `train_dataset` (swapped in by the caller) with the
    training arguments in `budget` (max_steps, num_train_epochs). The weights, optimizer state and KL
    reference carry over; TRL's step counter and log restart (`chained` counts them over the whole run)."""
    for name, value in budget.items():
        setattr(trainer.args, name, value)
    trainer._buffered_inputs = None  # TRL's generation buffer holds the previous run's prompts
    return single_run(trainer)


def chained(before: TrainOutcome, after: TrainOutcome) -> TrainOutcome:
    """`after` trained on from `before`: optimizer steps and log history counted over both, runtimes
    added, `after`'s final metrics, the curves and records of both."""
    shifted = [{**entry, "step": entry["step"] + before.global_step} for entry in after.log_history if "step" in entry]
    runtime = before.metrics.get("train_runtime", 0.0) + after.metrics.get("train_runtime", 0.0)
    return TrainOutcome({**after.metrics, "train_runtime": runtime}, before.log_history + shifted,
                        before.global_step + after.global_step, before.curves | after.curves,
                        before.details | after.details)


@dataclass
class PreparedRun:
    """A trainer built and ready to train (what `launch --dry-run` stops at)."""

    trainer: Trainer
    base_checkpoint: Path
    dataset: Dataset  # the step dataset as given (its fingerprint goes into the manifest)
    dataset_path: str | None
    train_rows: int
    dropped: dict[str, int]
    curve_keys: dict[str, str]  # curve name -> key in the trainer's log history
    # how to train: one `trainer.train()` when None (HiFPO's history alignment trains in rounds)
    train: Callable[[Trainer], TrainOutcome] | None = None


def curves_from_history(
    log_history: list[dict[str, Any]], names: dict[str, str]
) -> dict[str, list[list[float]]]:
    """Per-step curves from a trainer's log history; `names` maps curve name -> log key."""
    curves: dict[str, list[list[float]]] = {name: [] for name in names}
    for entry in log_history:
        for name, key in names.items():
            if key in entry and "step" in entry:
                curves[name].append([entry["step"], float(entry[key])])
    return curves


@dataclass(frozen=True)
class TrainProgress:
    """Where a training run is: optimizer step of total, latest loss and reward, seconds so far."""

    step: int
    total: int
    loss: float | None
    reward: float | None
    elapsed_s: float

    def __str__(self) -> str:
        parts = [f"step {self.step}/{self.total}"]
        if self.loss is not None:
            parts.append(f"loss {self.loss:.3g}")
        if self.reward is not None:
            parts.append(f"reward {self.reward:.3g}")
        if 0 < self.step < self.total:
            parts.append(f"ETA {self.elapsed_s / self.step * (self.total - self.step):.0f}s")
        return ", ".join(parts)


class ProgressCallback(TrainerCallback):
    """Forwards a `TrainProgress` to `progress` every `every` optimizer steps and at the last one
    (None: about PROGRESS_REPORTS times per run)."""

    def __init__(self, progress: Callable[[TrainProgress], None], every: int | None = None):
        self.progress, self.every = progress, every
        self.start = time.perf_counter()

    def on_train_begin(self, args, state, control, **kwargs):
        self.start = time.perf_counter()

    def on_log(self, args, state, control, logs=None, **kwargs):
        logs = logs or {}
        every = self.every or max(1, state.max_steps // PROGRESS_REPORTS)
        if "train_runtime" in logs or (state.global_step % every and state.global_step != state.max_steps):
            return  # the closing summary log repeats the last step
        self.progress(TrainProgress(step=state.global_step, total=state.max_steps, loss=logs.get("loss"),
                                    reward=logs.get("reward"), elapsed_s=time.perf_counter() - self.start))


def _quiet_and_tracked(trainer: Trainer, out_dir: Path) -> Path | None:
    """Drop the trainer's per-step printing and point its TensorBoard writer into `out_dir`.

    With tqdm disabled, transformers prints every log dict to stdout (PrinterCallback); the same
    numbers reach the curves, the progress callback and the trackers, so printing them only
    floods the terminal. Returns the TensorBoard directory, if the run reports to TensorBoard.
    """
    trainer.remove_callback(PrinterCallback)
    writers = [c for c in trainer.callback_handler.callbacks if isinstance(c, TensorBoardCallback)]
    for writer in writers:  # the callback takes its directory from an attribute, else $TENSORBOARD_LOGGING_DIR
        writer.logging_dir = str(out_dir / TENSORBOARD_DIR)
    return out_dir / TENSORBOARD_DIR if writers else None


def save_full_model(save: Callable[[str], None], base_checkpoint: Path, out_dir: Path, config: TrainSettings,
                    *, main_process: bool = True) -> None:
    """Save the trained model to `out_dir` as a full model. `save(directory)` saves the training model
    (with LoRA: its adapter; every process calls it, as sharded runs need); with LoRA the main process
    then merges the adapter into the base."""
    if config.lora is None:
        save(str(out_dir))
        return
    save(str(out_dir / ADAPTER_DIR))
    if main_process:
        merge_adapter(base_checkpoint, out_dir / ADAPTER_DIR, out_dir, config.model_dtype)


def train_and_save(run: PreparedRun, *, method: str, out_dir: Path, config: TrainSettings,
                   progress: Callable[[TrainProgress], None] | None = None) -> TrainReport:
    """Train (`run.train`, else one `trainer.train()`), save model + processor to `out_dir`, write
    `manifest.json`, report; `progress` receives a `TrainProgress` about ten times per `trainer.train()`."""
    trainer, dataset, dropped = run.trainer, run.dataset, run.dropped
    tensorboard_dir = _quiet_and_tracked(trainer, out_dir)
    if progress is not None:
        trainer.add_callback(ProgressCallback(progress))
    counts = parameter_counts(trainer.model)  # before train() shards the model across processes
    start = time.perf_counter()
    with torch_threads(config.torch_threads), deterministic_algorithms(config), tiles_fitting(trainer.model):
        outcome = (run.train or single_run)(trainer)
    runtime = time.perf_counter() - start
    save_full_model(trainer.save_model, run.base_checkpoint, out_dir, config,
                    main_process=trainer.accelerator.is_main_process)
    curves = curves_from_history(outcome.log_history, run.curve_keys) | outcome.curves
    metrics = {k: v for k, v in outcome.metrics.items() if isinstance(v, (int, float))} | counts \
        | {"processes": trainer.accelerator.num_processes}
    manifest_path = None
    if trainer.accelerator.is_main_process:
        trainer.processing_class.save_pretrained(str(out_dir))
        manifest = Manifest(
            method=method,
            base_checkpoint=str(run.base_checkpoint),
            dataset={
                "fingerprint": dataset_fingerprint(dataset),
                "rows": len(dataset),
                "path": run.dataset_path,
                "dropped": dropped,
            },
            config=config.model_dump(mode="json"),
            metrics={**metrics, "global_step": outcome.global_step},
            curves=curves,
            details=outcome.details,
        )
        manifest_path = write_manifest(out_dir, manifest)
    return TrainReport(
        method=method,
        checkpoint=out_dir,
        manifest_path=manifest_path,
        steps=outcome.global_step,
        runtime_s=runtime,
        metrics=metrics,
        curves=curves,
        samples=run.train_rows,
        dropped=dropped,
        tensorboard_dir=tensorboard_dir,
        details=outcome.details,
    )
