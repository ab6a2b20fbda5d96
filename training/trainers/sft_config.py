"""Settings of supervised fine-tuning on step samples (RFT, GRSD, the SFT ablations), loaded without torch."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import Field

from training.trainers.settings import TrainSettings


class SFTTrainConfig(TrainSettings):
    """SFT settings. Defaults are GPU values for full fine-tuning of an 8B VLM (UI-Voyager does not
    report its SFT hyperparameters; these are common full-parameter values); `cpu_tiny()` is
    the embedded CPU preset for the tiny model."""

    # The embedded CPU preset: the tiny model on CPU, ~9 optimizer steps/s on one core. Three passes
    # over the samples: a fixed 40 steps (the earlier preset) saw the 407 step samples of a run 0.4
    # times, and the policy it gave opened the right app first on 0.22 of the train-split task
    # sentences; 300 steps (3 passes) on the same data gave 0.40, and 0.19 on held-out sentences
    # (base 0.03).
    CPU_TINY: ClassVar[dict[str, Any]] = {
        **TrainSettings.CPU_TINY, "learning_rate": 1e-3, "lr_scheduler_type": "constant", "warmup_steps": 0,
        "num_train_epochs": 3.0, "max_steps": None, "per_device_train_batch_size": 4, "max_length": 1024}


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

    def sft_kwargs(self, out_dir: Path) -> dict[str, Any]:
        """Keyword arguments of the TRL SFTConfig for a run writing to `out_dir`."""
        return dict(
            **self.trainer_kwargs(out_dir),
            max_length=None,  # overlong samples are dropped beforehand (see max_length)
            completion_only_loss=True,  # UI-Voyager eq. 7: loss over the response tokens only
        )
