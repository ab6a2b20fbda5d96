"""Typed settings common to every trainer, without torch: a method's settings class derives from
`TrainSettings`, so the graph (asset configs, the method registry) loads them without importing the
trainers."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar, Literal, Self

from pydantic import BaseModel, ConfigDict, Field

from ops.config_bounds import MAX_COUNT, MAX_PARALLEL, MAX_SEED

Preset = Literal["cpu_tiny", "paper"]
TENSORBOARD_DIR = "tensorboard"  # inside the saved checkpoint directory, so it is stored with the weights

# Attention and MLP projections of every Qwen2 / Qwen2.5 / Qwen3(-VL) decoder layer (and the tiny model's).
DEFAULT_TARGETS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")


class LoraSettings(BaseModel):
    """Low-rank adaptation of the language model (Hu et al., LoRA): W + (alpha / r)·B·A on each
    targeted linear layer, B starting at zero; everything else is frozen."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    r: int = Field(16, gt=0, description="Rank of the update B·A.")
    alpha: float = Field(32.0, gt=0, description="Scale numerator: the update is multiplied by alpha / r.")
    dropout: float = Field(0.05, ge=0, lt=1, description="Dropout on the adapter's input while training.")
    target_modules: tuple[str, ...] = Field(
        DEFAULT_TARGETS,
        min_length=1,
        description="Names (last part of the module path) of the language model's linear layers to adapt; "
        "the default is every attention and MLP projection of a Qwen2/3(-VL) decoder layer.",
    )


class TrainSettings(BaseModel):
    """Optimisation and runtime settings common to the GRPO and SFT trainers."""

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

    # The embedded CPU preset (`cpu_tiny`): the tiny model on one shared core, full precision, no
    # activation recomputation. A method's settings class adds its own values to these.
    CPU_TINY: ClassVar[dict[str, Any]] = dict(bf16=False, model_dtype="float32", gradient_checkpointing=False,
                                              torch_threads=1, gradient_accumulation_steps=1)

    learning_rate: float = Field(1e-6, gt=0, description="AdamW learning rate.")
    weight_decay: float = Field(0.01, ge=0, description="AdamW weight decay.")
    max_grad_norm: float = Field(1.0, gt=0, description="Gradient clipping norm.")
    lr_scheduler_type: str = Field(
        "constant", description="transformers scheduler name (constant, cosine, linear, ...)."
    )
    warmup_steps: float = Field(
        0, ge=0, description="Linear warm-up: a number of steps, or a fraction of all steps when below 1."
    )
    num_train_epochs: float = Field(
        4.0, gt=0, le=MAX_COUNT, description="Passes over the dataset (ignored when max_steps is set)."
    )
    max_steps: int | None = Field(
        None, gt=0, le=MAX_COUNT, description="Stop after this many optimizer steps; None trains for num_train_epochs."
    )
    per_device_train_batch_size: int = Field(
        4, gt=0, le=MAX_PARALLEL, description="Sequences (GRPO: completions) per device per micro-step."
    )
    gradient_accumulation_steps: int = Field(
        1, gt=0, le=MAX_PARALLEL, description="Micro-steps accumulated into one optimizer step."
    )
    seed: int = Field(0, ge=0, le=MAX_SEED, description="Seed for data order, sampling and initialisation.")
    bf16: bool = Field(False, description="bf16 mixed precision (GPU).")
    model_dtype: Literal["float32", "bfloat16", "float16", "auto"] = Field(
        "float32", description="dtype the weights are loaded in."
    )
    attn_implementation: str | None = Field(
        None,
        description="Attention kernel, e.g. 'flash_attention_2' or 'sdpa'; None lets transformers choose.",
    )
    image_max_pixels: int | None = Field(
        None,
        gt=0,
        description="Pixel budget per screenshot for the processor (Qwen-VL `max_pixels`, i.e. "
        "the image processor's size.longest_edge); None keeps the checkpoint's. Must match what the policy "
        "saw at rollout time. Saved with the trained checkpoint's processor.",
    )
    gradient_checkpointing: bool = Field(
        False, description="Recompute activations in backward to save memory (GPU)."
    )
    logging_steps: int = Field(
        1, gt=0, description="Log metrics (loss, rewards) every this many optimizer steps."
    )
    save_steps: int | None = Field(
        None,
        gt=0,
        description="Also save intermediate checkpoints under out_dir every this many steps; "
        "None saves only the final one.",
    )
    torch_threads: int | None = Field(
        None,
        gt=0,
        description="CPU threads torch may use in this process (torch.set_num_threads, process-wide); "
        "None keeps torch's default. On a shared 2-core machine 1 thread ran the tiny model's steps "
        "10-20x faster than 2 (busy threads spin-wait for each other).",
    )
    deterministic_algorithms: bool = Field(
        True,
        description="Train with torch.use_deterministic_algorithms (warn_only: an op without a deterministic "
        "kernel warns instead of failing); restored afterwards. On CPU the tiny model's runs were bitwise "
        "repeatable either way; on GPU it also needs CUBLAS_WORKSPACE_CONFIG=:4096:8 set before the process "
        "starts, and vLLM generation stays nondeterministic (README, Reproducibility).",
    )
    report_to: list[str] = Field(
        default_factory=lambda: ["tensorboard"],
        description="Experiment trackers of TRL's `report_to` (tensorboard, mlflow, wandb, ...). TensorBoard "
        f"event files are written offline into the checkpoint's `{TENSORBOARD_DIR}/` directory.",
    )
    lora: LoraSettings | None = Field(
        None,
        description="Train LoRA adapters on the language model instead of every weight (large models), e.g. "
        "{r: 16, alpha: 32, dropout: 0.05, target_modules: [q_proj, v_proj]}; {} takes the defaults. The "
        "saved checkpoint is the base with the adapters merged in. None: full fine-tuning.",
    )

    def trainer_kwargs(self, out_dir: Path) -> dict[str, Any]:
        """Keyword arguments shared by `trl.GRPOConfig` and `trl.SFTConfig`."""
        model_init: dict[str, Any] = {"dtype": self.model_dtype}
        if self.attn_implementation:
            model_init["attn_implementation"] = self.attn_implementation
        import torch  # only when a run is prepared: the settings load without it

        return {
            "output_dir": str(out_dir),
            "learning_rate": self.learning_rate,
            "weight_decay": self.weight_decay,
            "max_grad_norm": self.max_grad_norm,
            "lr_scheduler_type": self.lr_scheduler_type,
            "warmup_steps": self.warmup_steps,
            "num_train_epochs": self.num_train_epochs,
            "max_steps": self.max_steps or -1,
            "per_device_train_batch_size": self.per_device_train_batch_size,
            "gradient_accumulation_steps": self.gradient_accumulation_steps,
            "seed": self.seed,
            "bf16": self.bf16,
            "activation_checkpointing": self.gradient_checkpointing,
            "logging_steps": self.logging_steps,
            "save_strategy": "steps" if self.save_steps else "no",
            "save_steps": self.save_steps or 500,
            "report_to": self.report_to,
            "model_init_kwargs": model_init,
            "disable_tqdm": True,
            "dataloader_pin_memory": torch.cuda.is_available(),
            # without a GPU, processes started by `accelerate launch` then join one CPU (gloo) process group
            "use_cpu": not torch.cuda.is_available(),
        }

    @classmethod
    def cpu_tiny(cls, **overrides: Any) -> Self:
        """The embedded CPU preset (`CPU_TINY`) under `overrides`; an override of a mapping field (e.g.
        HiFPO's reward_options) keeps the preset's other keys."""
        merged = dict(cls.CPU_TINY)
        for name, value in overrides.items():
            preset = merged.get(name)
            merged[name] = {**preset, **value} if isinstance(preset, dict) and isinstance(value, dict) else value
        return cls(**merged)

    @classmethod
    def preset(cls, name: Preset, overrides: dict[str, Any]) -> Self:
        """Settings of preset `name` under `overrides`: 'cpu_tiny' (the embedded CPU preset) or 'paper'
        (the class's own defaults: the papers' full-size GPU settings)."""
        return cls.cpu_tiny(**overrides) if name == "cpu_tiny" else cls(**overrides)
