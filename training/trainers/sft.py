"""Supervised fine-tuning on step samples: (prompt messages, screenshot) → target response,
with the loss on the response tokens only.

Shared by RFT (UI-Voyager §3.2: SFT on the steps of verified-successful attempts; samples from
`training.trainers.step_datasets.rft_samples`) and GRSD (UI-Voyager §3.3.2, eq. 6–7: the failed attempt's
prompt at a fork point with the successful attempt's response; `grsd_samples`). The round
loop of RFT (fresh tasks, the previous round's policy generating) belongs to the caller.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from datasets import Dataset
from trl import SFTConfig, SFTTrainer

from training.trainers.sft_config import SFTTrainConfig
from training.trainers.lora import peft_config
from training.trainers.runs import (
    PreparedRun,
    TrainProgress,
    TrainReport,
    drop_overlong,
    load_processor,
    require_local_checkpoint,
    resolve_dataset,
    train_and_save,
)

METHOD_NAME = re.compile(r"[a-z][a-z0-9_]*")
CURVE_KEYS: dict[str, str] = {
    "loss": "loss",
    "token_accuracy": "mean_token_accuracy",
    "grad_norm": "grad_norm",
    "learning_rate": "learning_rate",
}


def prepare_sft(
    base_checkpoint: str | Path, dataset: Dataset | str | Path, out_dir: str | Path, config: SFTTrainConfig
) -> PreparedRun:
    """Load the processor, drop overlong samples and build the SFTTrainer (no training)."""
    base = require_local_checkpoint(base_checkpoint)
    lora = peft_config(config.lora, base)  # checked before any data or weights are loaded
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
        args=SFTConfig(**config.sft_kwargs(Path(out_dir))),  # TRL's checks: bf16 needs a GPU
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
    saves model, processor and `manifest.json` (recording `method`, the training method's name) to `out_dir`."""
    if not METHOD_NAME.fullmatch(method):  # it names the checkpoint's trainer in manifests and paths
        raise ValueError(f"method {method!r}: expected a method name (lowercase letters, digits and _)")
    out = Path(out_dir)
    return train_and_save(
        prepare_sft(base_checkpoint, dataset, out, config), method=method, out_dir=out, config=config,
        progress=progress,
    )
