"""Supervised fine-tuning on step samples: (prompt messages, screenshot) → target response,
with the loss on the response tokens only.

Shared by RFT (UI-Voyager §3.2: SFT on the steps of verified-successful attempts; samples from
`training.trainers.step_datasets.rft_samples`) and GRSD (UI-Voyager §3.3.2, eq. 6–7: the failed attempt's
prompt at a fork point with the successful attempt's response; `grsd_samples`). The round
loop of RFT (fresh tasks, the previous round's policy generating) belongs to the caller.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from datasets import Dataset
from pydantic import Field
from trl import SFTConfig, SFTTrainer

from training.trainers.runs import (
    PreparedRun,
    TrainProgress,
    TrainReport,
    TrainSettings,
    drop_overlong,
    load_processor,
    require_local_checkpoint,
    resolve_dataset,
    train_and_save,
)

CURVE_KEYS: dict[str, str] = {
    "loss": "loss",
    "token_accuracy": "mean_token_accuracy",
    "grad_norm": "grad_norm",
    "learning_rate": "learning_rate",
}
METHODS = ("sft", "rft", "grsd")


class SFTTrainConfig(TrainSettings):
    """SFT settings. Defaults are GPU values for full fine-tuning of an 8B VLM (UI-Voyager does not
    report its SFT hyperparameters; these are common full-parameter values); `cpu_tiny()` is
    the embedded CPU preset for the tiny model."""

    learning_rate: float = Field(1e-5, gt=0, description="AdamW learning rate.")
    lr_scheduler_type: str = Field("cosine", description="transformers scheduler name.")
    warmup_steps: float = Field(
        0.03, ge=0, description="Warm-up steps, or a fraction of all steps when below 1."
    )
    num_train_epochs: float = Field(
        2.0, gt=0, description="Passes over the samples (ignored when max_steps is set)."
    )
    per_device_train_batch_size: int = Field(2, gt=0, description="Samples per device per micro-step.")
    gradient_accumulation_steps: int = Field(8, gt=0, description="Micro-steps per optimizer step.")
    bf16: bool = Field(True, description="bf16 mixed precision (GPU).")
    model_dtype: Literal["float32", "bfloat16", "float16", "auto"] = Field(
        "bfloat16", description="dtype the weights are loaded in."
    )
    gradient_checkpointing: bool = Field(
        True, description="Recompute activations in backward to save memory."
    )
    max_length: int | None = Field(
        4096,
        gt=0,
        description="Samples whose prompt + response (text + image tokens) is longer are dropped "
        "before training (never truncated: that would cut image tokens or the target); None keeps all.",
    )

    @classmethod
    def cpu_tiny(cls, **overrides: Any) -> SFTTrainConfig:
        """Embedded preset: the tiny model on CPU, ~9 optimizer steps/s on one core.

        Three passes over the samples: a fixed 40 steps (the earlier preset) saw the 407 step
        samples of a run 0.4 times, and the policy it gave opened the right app first on 0.22
        of the train-split task sentences; 300 steps (3 passes) on the same data gave 0.40, and
        0.19 on held-out sentences (base 0.03).
        """
        values: dict[str, Any] = dict(
            learning_rate=1e-3,
            lr_scheduler_type="constant",
            warmup_steps=0,
            num_train_epochs=3.0,
            max_steps=None,
            per_device_train_batch_size=4,
            gradient_accumulation_steps=1,
            bf16=False,
            model_dtype="float32",
            gradient_checkpointing=False,
            torch_threads=1,
            max_length=1024,
        )
        return cls(**{**values, **overrides})

    def sft_kwargs(self, out_dir: Path) -> dict[str, Any]:
        """Keyword arguments of the TRL SFTConfig for a run writing to `out_dir`."""
        return dict(
            **self.trainer_kwargs(out_dir),
            max_length=None,  # overlong samples are dropped beforehand (see max_length)
            completion_only_loss=True,  # UI-Voyager eq. 7: loss over the response tokens only
        )

    def sft_args(self, out_dir: Path) -> SFTConfig:
        """The TRL SFTConfig (its checks run here: bf16 needs a GPU)."""
        return SFTConfig(**self.sft_kwargs(out_dir))


def prepare_sft(
    base_checkpoint: str | Path, dataset: Dataset | str | Path, out_dir: str | Path, config: SFTTrainConfig
) -> PreparedRun:
    """Load the processor, drop overlong samples and build the SFTTrainer (no training)."""
    base = require_local_checkpoint(base_checkpoint)
    lora = config.peft_config(base)  # checked before any data or weights are loaded
    data, data_path = resolve_dataset(dataset)
    missing = sum(c is None for c in data["completion"])
    if missing:
        raise ValueError(
            f"{missing} of {len(data)} step samples have no target_response; SFT needs one for every sample"
        )
    processor = load_processor(base, image_max_pixels=config.image_max_pixels)
    train = data.select_columns([c for c in ("prompt", "completion", "image") if c in data.column_names])
    train, n_long = drop_overlong(train, processor, config.max_length, with_completion=True)
    if len(train) == 0:
        raise ValueError(f"every sample is longer than max_length={config.max_length}")
    trainer = SFTTrainer(
        model=str(base),
        args=config.sft_args(Path(out_dir)),
        train_dataset=train,
        processing_class=processor,
        peft_config=lora,
    )
    return PreparedRun(trainer, base, data, data_path, len(train), {"too_long": n_long}, CURVE_KEYS)


def train_sft(
    base_checkpoint: str | Path,
    dataset: Dataset | str | Path,
    out_dir: str | Path,
    config: SFTTrainConfig,
    *,
    method: str = "sft",
    progress: Callable[[TrainProgress], None] | None = None,
) -> TrainReport:
    """SFT from `base_checkpoint` on step samples with responses (a dataset or its saved path);
    saves model, processor and `manifest.json` (recording `method`: sft / rft / grsd) to `out_dir`."""
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    out = Path(out_dir)
    return train_and_save(
        prepare_sft(base_checkpoint, dataset, out, config), method=method, out_dir=out, config=config,
        progress=progress,
    )
