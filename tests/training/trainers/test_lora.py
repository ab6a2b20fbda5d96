"""LoRA on the trainers: real TRL steps with adapters, the checkpoint saved as a plain full model
that differs from the base only in the targeted layers, a small trainable fraction, and clear
errors for target modules the language model does not have."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
import transformers
from accelerate import init_empty_weights
from peft.tuners.tuners_utils import check_target_module_exists
from pydantic import ValidationError
from safetensors.torch import load_file

from tests.training.samples import LABELS, click_json, png, prompt_json, step_frame
from training.inference.local_policy import LocalPolicy
from training.models.tiny import load_tiny
from training.methods.adagrpo.trainer import StepRow, TrajectoryGRPOLoss
from training.methods.adagrpo.config import AdaGRPOConfig
from training.methods.hifpo.trainer import prepare_hifpo, train_hifpo
from training.methods.hifpo.config import HiFPOConfig
from training.trainers.lora import lora_config
from training.trainers.settings import DEFAULT_TARGETS, LoraSettings
from training.trainers.manifest import read_manifest
from training.trainers.sft import prepare_sft, train_sft
from training.trainers.sft_config import SFTTrainConfig
from training.trainers.step_datasets import build_step_dataset

HIFPO_LORA = LoraSettings(r=2, alpha=4, dropout=0.0, target_modules=("q_proj", "v_proj"))
SFT_LORA = LoraSettings(r=2, alpha=4)  # the default targets: every projection of the decoder layers


@pytest.fixture(scope="module")
def hifpo_lora(warm_base, step_dataset, tmp_path_factory):
    config = HiFPOConfig.cpu_tiny(max_steps=2, learning_rate=1e-2, weight_decay=0.0, action_format="canonical",
                                  lora=HIFPO_LORA)
    return train_hifpo(warm_base, step_dataset, tmp_path_factory.mktemp("hifpo_lora") / "ckpt", config)


@pytest.fixture(scope="module")
def sft_lora(warm_base, tmp_path_factory):
    samples = build_step_dataset(step_frame(8), require_response=True)
    config = SFTTrainConfig.cpu_tiny(max_steps=2, weight_decay=0.0, lora=SFT_LORA)
    return train_sft(warm_base, samples, tmp_path_factory.mktemp("sft_lora") / "ckpt", config, method="rft")


RUNS = [("hifpo_lora", HIFPO_LORA), ("sft_lora", SFT_LORA)]


def _adapted_size(model, settings: LoraSettings) -> int:
    """Parameters of the adapters: r x (in + out) per targeted linear layer of the decoder."""
    layers = [m for name, m in model.model.language_model.named_modules()
              if name.rsplit(".", 1)[-1] in settings.target_modules]
    return sum(settings.r * (m.in_features + m.out_features) for m in layers)


def assert_base_changed_in_targeted_layers_only(base: Path, checkpoint: Path, settings: LoraSettings) -> None:
    files = {p.relative_to(checkpoint).as_posix() for p in checkpoint.rglob("*")}
    assert not [f for f in files if "adapter" in f], files  # a full model: nothing for peft to load
    before = load_file(base / "model.safetensors")
    after = load_file(checkpoint / "model.safetensors")
    assert before.keys() == after.keys()
    targeted = {k for k in before if "visual" not in k and k.endswith(".weight")
                and k.rsplit(".", 2)[-2] in settings.target_modules}
    assert len(targeted) == 2 * len(settings.target_modules)  # two decoder layers
    changed = {k for k in before if not before[k].equal(after[k])}
    assert changed == targeted


@pytest.mark.parametrize(("run", "settings"), RUNS)
def test_checkpoint_is_the_base_changed_in_the_targeted_layers_only(request, warm_base, run, settings):
    report = request.getfixturevalue(run)
    assert report.steps == 2
    assert_base_changed_in_targeted_layers_only(warm_base, report.checkpoint, settings)


def test_adagrpo_updates_adapters_against_the_base_and_saves_a_full_model(warm_base, tmp_path):
    settings = LoraSettings(r=2, target_modules=("q_proj", "o_proj", "down_proj"))
    config = AdaGRPOConfig.cpu_tiny(lora=settings)  # beta > 0: the reference is the model with its adapter off
    loss = TrajectoryGRPOLoss(warm_base, tmp_path / "out", config, updates=2)
    rows = [StepRow(prompt_json(f"Tap {label}"), click_json(i), png((60 * i, 90, 160))) for i, label in enumerate(LABELS)]
    first = loss.update(rows, [1.0, -0.5, -0.5], random.Random(0))
    second = loss.update(rows, [1.0, -0.5, -0.5], random.Random(0))
    assert loss.steps == 2
    assert first["kl"] == 0.0 < second["kl"]  # the reference stays the base while the adapters move away
    assert_base_changed_in_targeted_layers_only(warm_base, loss.save(tmp_path / "epoch1"), settings)


@pytest.mark.parametrize(("run", "settings"), RUNS)
def test_few_parameters_train_and_the_manifest_says_lora(request, warm_base, run, settings):
    report = request.getfixturevalue(run)
    base, _ = load_tiny(warm_base)
    full = sum(p.numel() for p in base.parameters())
    trainable = report.metrics["trainable_parameters"]
    assert trainable == _adapted_size(base, settings)
    assert report.metrics["parameters"] == full + trainable
    assert trainable < 0.03 * full
    manifest = read_manifest(report.checkpoint)
    assert manifest.config["lora"] == settings.model_dump(mode="json")
    assert manifest.metrics["trainable_parameters"] == trainable


def test_served_path_loads_and_runs_the_merged_checkpoint(hifpo_lora, step_dataset):
    policy = LocalPolicy(hifpo_lora.checkpoint)
    example = step_dataset[0]
    [text] = policy.generate([example["prompt"]], [example["image"]])
    assert isinstance(text, str)


@pytest.mark.parametrize("prepare", [prepare_hifpo, prepare_sft])
@pytest.mark.parametrize("missing", ["qkv_proj", "qkv"])  # a typo; a vision-tower layer, not the language model's
def test_unknown_target_module_is_named(warm_base, step_dataset, tmp_path, prepare, missing):
    config_class = HiFPOConfig if prepare is prepare_hifpo else SFTTrainConfig
    config = config_class.cpu_tiny(lora={"target_modules": ["q_proj", missing]})
    with pytest.raises(ValueError, match=rf"lora.target_modules: \['{missing}'\] name no linear layer"):
        prepare(warm_base, step_dataset, tmp_path / "out", config)


@pytest.mark.parametrize(("overrides", "field"), [
    ({"lora": {"r": 0}}, "lora.r"),
    ({"lora": {"target_modules": []}}, "lora.target_modules"),
    ({"lora": {"rank": 8}}, "lora.rank"),
    ({"lora": {"dropout": 1.0}}, "lora.dropout"),
])
def test_bad_lora_settings_name_the_field(overrides, field):
    with pytest.raises(ValidationError, match=field):
        HiFPOConfig.cpu_tiny(**overrides)


def test_lora_is_off_by_default_and_takes_defaults_from_an_empty_mapping():
    assert HiFPOConfig().lora is None and SFTTrainConfig.cpu_tiny().lora is None
    assert SFTTrainConfig(lora={}).lora == LoraSettings()


@pytest.mark.parametrize(("config_class", "architecture", "vision_shares_names"), [
    ("Qwen2_5_VLConfig", "Qwen2_5_VLForConditionalGeneration", True),  # its vision MLP has gate/up/down_proj
    ("Qwen3VLConfig", "Qwen3VLForConditionalGeneration", False),
])
def test_default_targets_cover_the_decoder_of_qwen_vl_models_and_no_vision_layer(tmp_path, config_class,
                                                                                 architecture, vision_shares_names):
    config = getattr(transformers, config_class)()
    config.architectures = [architecture]
    config.save_pretrained(tmp_path)
    peft_config = lora_config(LoraSettings(), tmp_path)
    with init_empty_weights():
        model = getattr(transformers, architecture)(config)
    matched = [name for name, _ in model.named_modules() if check_target_module_exists(peft_config, name)]
    layers = config.text_config.num_hidden_layers
    assert len(matched) == layers * len(DEFAULT_TARGETS)
    assert all(name.startswith("model.language_model.layers.") for name in matched)
    vision = {name.rsplit(".", 1)[-1] for name, _ in model.named_modules() if name.startswith("model.visual.")}
    assert bool(vision & set(DEFAULT_TARGETS)) == vision_shares_names
