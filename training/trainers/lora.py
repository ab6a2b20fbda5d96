"""LoRA for large policies: low-rank adapters on the language model's linear layers, trained by
TRL through `peft`, and merged back into the base when the checkpoint is saved, so every
checkpoint leaving a trainer is a plain full model (served, digested and reloaded as any other).

The adapters go on the language model only: the vision tower stays frozen, and its layers are
never matched by name (Qwen2.5-VL's vision MLP also has `gate_proj` / `up_proj` / `down_proj`).
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import torch
import transformers
from accelerate import init_empty_weights
from peft import LoraConfig, PeftModel
from transformers import AutoConfig, PreTrainedModel
from trl.trainer.utils import create_model_from_path

from training.trainers.settings import LoraSettings

ADAPTER_DIR = "lora_adapter"  # inside the output directory while the adapter is merged, removed afterwards


def peft_lora_config(settings: LoraSettings, language_model: str) -> LoraConfig:
    """The peft LoraConfig matching `target_modules` under the module path `language_model` only."""
    names = "|".join(re.escape(n) for n in settings.target_modules)
    return LoraConfig(
        r=settings.r,
        lora_alpha=settings.alpha,
        lora_dropout=settings.dropout,
        target_modules=rf"{re.escape(language_model)}\.(?:.*\.)?(?:{names})",  # peft full-matches a str
    )


def _empty_model(base_dir: Path) -> PreTrainedModel:
    """The checkpoint's architecture with weights on the meta device (nothing loaded, any size)."""
    config = AutoConfig.from_pretrained(base_dir)
    architecture = getattr(transformers, (config.architectures or [""])[0], None)
    if architecture is None:
        raise ValueError(f"lora: {base_dir}/config.json names no transformers architecture ({config.architectures})")
    with init_empty_weights():
        return architecture(config)


def language_model_path(model: PreTrainedModel) -> str:
    """Module path of the model's language model (its decoder), e.g. 'model.language_model'."""
    decoder = model.get_decoder()
    for name, module in model.named_modules():
        if module is decoder and name:
            return name
    raise ValueError(f"lora: cannot find the language model inside {type(model).__name__}")


def peft_config(settings: LoraSettings | None, base_dir: str | Path) -> LoraConfig | None:
    """The peft LoRA config of `settings` for the checkpoint in `base_dir` (None: full fine-tuning);
    an unknown target module fails here, naming it."""
    return lora_config(settings, base_dir) if settings is not None else None


def lora_config(settings: LoraSettings, base_dir: str | Path) -> LoraConfig:
    """The peft config for the checkpoint in `base_dir`; a ValueError naming every target module the
    language model has no linear layer for (and the names it has), before any weight is loaded."""
    model = _empty_model(Path(base_dir))
    path = language_model_path(model)
    linear = {n.rsplit(".", 1)[-1] for n, m in model.get_submodule(path).named_modules() if isinstance(m, torch.nn.Linear)}
    missing = [n for n in settings.target_modules if n not in linear]
    if missing:
        raise ValueError(
            f"lora.target_modules: {missing} name no linear layer of the language model of {base_dir} "
            f"({type(model).__name__}); its linear layers are {sorted(linear)}"
        )
    return peft_lora_config(settings, path)


def merge_adapter(base_dir: str | Path, adapter_dir: Path, out_dir: Path, model_dtype: str) -> Path:
    """Load the base from disk (on CPU), merge the adapter saved in `adapter_dir` into it, save the
    full model to `out_dir` and delete `adapter_dir`; returns `out_dir`.

    Loading the base afresh rather than merging the training model in place works the same when
    the training model is sharded across processes (FSDP, ZeRO-3), whose saved adapter is whole.
    """
    base = create_model_from_path(str(base_dir), dtype=model_dtype, device_map="cpu")
    merged = PeftModel.from_pretrained(base, str(adapter_dir)).merge_and_unload()
    merged.save_pretrained(str(out_dir))
    shutil.rmtree(adapter_dir)
    return out_dir


def parameter_counts(model: torch.nn.Module) -> dict[str, int]:
    """All parameters of the (unsharded) training model and those the optimizer updates."""
    return {
        "parameters": sum(p.numel() for p in model.parameters()),
        "trainable_parameters": sum(p.numel() for p in model.parameters() if p.requires_grad),
    }
