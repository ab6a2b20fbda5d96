"""HiFPO step-level GRPO: real TRL steps on a warm-started tiny model, reward components
logged, checkpoint + manifest, config validation, the launch CLI and the accelerate configs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest
import torch
import yaml
from accelerate.commands.config.config_args import ClusterConfig
from click.testing import CliRunner
from pydantic import ValidationError
from safetensors.torch import load_file
from trl.data_utils import prepare_multimodal_messages

from ops.judging.action_reward import COMPONENTS
from ops.judging.reward_columns import ANNOTATION_COLUMNS
from tests.support.embedders import HashingEmbedder
from tests.training.samples import LABELS, step_frame
from training.trainers.step_datasets import build_step_dataset, dataset_fingerprint, save_step_dataset
from training.methods.hifpo.trainer import prepare_hifpo, train_hifpo
from training.methods.hifpo.config import HiFPOConfig
from training.methods.launch import build_config, read_config_file
from training.methods.launch import main as launch
from training.trainers.manifest import read_manifest
from training.trainers.runs import drop_overlong, load_processor, token_count
from training.models.tiny import load_tiny

ACCELERATE_DIR = Path(__file__).resolve().parents[4] / "training" / "trainers" / "accelerate"


@pytest.fixture(scope="module")
def hifpo_run(warm_base, step_dataset, tmp_path_factory):
    out = tmp_path_factory.mktemp("hifpo_out") / "ckpt"
    # No weight decay: any weight change must come from the GRPO gradient.
    config = HiFPOConfig.cpu_tiny(max_steps=3, learning_rate=1e-3, weight_decay=0.0, action_format="canonical")
    return train_hifpo(warm_base, step_dataset, out, config)


def test_grpo_steps_change_the_weights(hifpo_run, warm_base):
    assert hifpo_run.steps == 3
    before = load_file(warm_base / "model.safetensors")
    after = load_file(hifpo_run.checkpoint / "model.safetensors")
    assert before.keys() == after.keys()
    assert any(not before[k].equal(after[k]) for k in before)


def test_reward_components_are_logged_separately(hifpo_run):
    curves = hifpo_run.curves
    for component in COMPONENTS:
        assert curves[component], f"no {component} reward logged"
    overall, types, args = (dict(map(tuple, curves[c])) for c in ("overall", "type", "arg"))
    for step, value in overall.items():
        # eq. 22 holds for batch means too: R = 0.2 r_type + 0.8 r_arg
        assert value == pytest.approx(0.2 * types[step] + 0.8 * args[step], abs=1e-5)
    assert dict(map(tuple, curves["reward"])) == pytest.approx(overall)  # GRPO optimised the overall reward
    assert max(v for _, v in curves["type"]) > 0  # the warm start makes the reward informative
    assert all(0 <= v <= 1 for _, v in curves["zero_variance_groups"]) and len(curves["zero_variance_groups"]) == 3


def test_checkpoint_reloads_generates_and_has_manifest(hifpo_run, warm_base, step_dataset):
    model, processor = load_tiny(hifpo_run.checkpoint)
    example = step_dataset[0]
    messages = prepare_multimodal_messages(example["prompt"], images=[example["image"]])
    text = processor.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    inputs = processor(text=[text], images=[example["image"]], return_tensors="pt")
    with torch.no_grad():
        out = model.generate(**inputs, max_new_tokens=8, do_sample=False)
    assert out.shape[1] > inputs["input_ids"].shape[1]

    manifest = read_manifest(hifpo_run.checkpoint)
    assert manifest.method == "hifpo"
    assert manifest.base_checkpoint == str(warm_base)
    assert manifest.dataset["fingerprint"] == dataset_fingerprint(step_dataset)
    assert manifest.dataset["rows"] == len(step_dataset)
    assert manifest.config["num_generations"] == 4 and manifest.config["beta"] == 0.01
    assert manifest.metrics["global_step"] == 3
    assert set(COMPONENTS) <= set(manifest.curves)
    assert manifest.versions["trl"] and manifest.created_at


def test_gpu_defaults_follow_table_13(tmp_path):
    kwargs = HiFPOConfig().grpo_kwargs(tmp_path)
    assert kwargs["num_generations"] == 5
    assert (kwargs["temperature"], kwargs["top_p"]) == (1.0, 1.0)
    assert kwargs["beta"] == 0.01 and kwargs["use_bias_correction_kl"] is False  # plain k3 KL
    assert (kwargs["learning_rate"], kwargs["weight_decay"], kwargs["max_grad_norm"]) == (1e-6, 0.01, 1.0)
    assert kwargs["num_train_epochs"] == 4 and kwargs["max_completion_length"] == 2048
    assert kwargs["reward_weights"] == [1.0, 0.0, 0.0, 0.0]  # only R is optimised
    # 8 GPUs: 128 prompts x 5 per optimizer step, 512 prompts x 5 per rollout
    per_step = kwargs["per_device_train_batch_size"] * 8 * kwargs["gradient_accumulation_steps"]
    per_rollout = kwargs["per_device_train_batch_size"] * 8 * kwargs["steps_per_generation"]
    assert (per_step, per_rollout) == (128 * 5, 512 * 5)
    assert HiFPOConfig().reward_config().lambda_type == 0.2 and HiFPOConfig().max_prompt_length == 2048


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"num_generations": 3}, "num_generations"),  # 16 completions per round is not a multiple of 3
        ({"top_p": 1.5}, "top_p"),
        ({"beta": -0.1}, "beta"),
        ({"vllm_mode": "remote"}, "vllm_mode"),
        ({"use_vllm": True, "vllm_mode": "server"}, "vllm_server_base_url"),
        ({"reward_options": {"point_radius": -1}}, "reward_options"),
        ({"generations": 5}, "generations"),
        ({"use_vllm": True, "image_max_pixels": 200_000}, "image_max_pixels"),
    ],
)
def test_bad_config_names_the_field(overrides, field):
    with pytest.raises(ValidationError, match=field):
        HiFPOConfig.cpu_tiny(**overrides)


def test_preset_reward_options_are_merged_with_an_override():
    config = HiFPOConfig.cpu_tiny(reward_options={"point_radius": 0.05})
    assert config.reward_options == {"click_threshold": 0.01, "point_radius": 0.05}
    assert HiFPOConfig.cpu_tiny(reward_options={"click_threshold": 0.5}).reward_config().click_threshold == 0.5
    with pytest.raises(ValidationError, match="reward_options"):
        HiFPOConfig.cpu_tiny(reward_options=["click_threshold"])


def test_overlong_prompts_are_dropped_not_truncated(warm_base, tmp_path):
    frame = step_frame(3).to_dicts()
    frame[1]["prompt"] = frame[1]["prompt"].replace("Tap", "Tap " + "Wi-Fi " * 300)
    dataset = build_step_dataset(pl.DataFrame(frame)).remove_columns("completion")
    kept, dropped = drop_overlong(dataset, load_processor(warm_base), 200)
    assert (len(kept), dropped) == (2, 1)
    assert "Wi-Fi Wi-Fi" not in json.dumps([k["prompt"] for k in kept])
    with pytest.raises(ValueError, match="max_prompt_length=5"):
        prepare_hifpo(warm_base, dataset, tmp_path / "x", HiFPOConfig.cpu_tiny(max_prompt_length=5))


def test_image_budget_sets_the_image_tokens(warm_base):
    example = build_step_dataset(step_frame(1)).remove_columns("completion")[0]
    example["image"] = example["image"].resize((270, 600))
    default = token_count(load_processor(warm_base), example, with_completion=False)
    smaller = token_count(
        load_processor(warm_base, image_max_pixels=28 * 28 * 16), example, with_completion=False
    )
    assert default - smaller > 30  # 55 image tokens at the tiny model's budget, at most 16 after
    with pytest.raises(ValueError, match="below the processor's minimum"):
        load_processor(warm_base, image_max_pixels=100)


def test_launch_dry_run_builds_the_trainer(warm_base, step_dataset, tmp_path):
    save_step_dataset(step_dataset, tmp_path / "ds")
    config = tmp_path / "hifpo.yaml"
    config.write_text(yaml.safe_dump({"preset": "cpu_tiny", "num_generations": 2, "max_steps": 7}))
    args = [
        "hifpo",
        "--config",
        str(config),
        "--set",
        "steps_per_generation=4",
        "--base",
        str(warm_base),
        "--dataset",
        str(tmp_path / "ds"),
        "--out",
        str(tmp_path / "out"),
        "--dry-run",
    ]
    result = CliRunner().invoke(launch, args)
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout[result.stdout.index("{") :])
    assert summary["trainer"] == "GRPOTrainer" and summary["train_rows"] == len(step_dataset)
    assert summary["generation_batch_size"] == 64  # 16 per device x 4 micro-steps per rollout
    assert summary["config"]["max_steps"] == 7
    assert not (tmp_path / "out" / "model.safetensors").exists()

    bad = CliRunner().invoke(launch, args + ["--set", "temprature=0.7"])
    assert bad.exit_code == 2 and "temprature" in bad.output


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the CPU substitution of GPU-only settings")
def test_launch_dry_run_of_the_gpu_run_config(warm_base, step_dataset, tmp_path):
    save_step_dataset(step_dataset, tmp_path / "ds")
    args = [
        "hifpo",
        "--config",
        str(ACCELERATE_DIR / "runs" / "hifpo_8gpu.yaml"),
        "--set",
        "action_format=canonical",
        "--base",
        str(warm_base),
        "--dataset",
        str(tmp_path / "ds"),
        "--out",
        str(tmp_path / "out"),
        "--dry-run",
    ]
    result = CliRunner().invoke(launch, args)
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout[result.stdout.index("{") :])
    assert summary["cpu_substitutes"] == {"bf16": False, "model_dtype": "float32", "use_vllm": False}
    assert summary["generation_batch_size"] == 4 * 80  # one process: per-device batch x steps per generation


@pytest.mark.parametrize(("name", "processes"), [("single_gpu.yaml", 1), ("fsdp.yaml", 8), ("zero3.yaml", 8)])
def test_accelerate_configs_load(name, processes):
    config = ClusterConfig.from_yaml_file(ACCELERATE_DIR / name)
    assert (config.mixed_precision, config.num_processes) == ("bf16", processes)
    if name == "fsdp.yaml":  # table 13: full shard, offloaded, a plain HF checkpoint on save
        assert config.fsdp_config["fsdp_reshard_after_forward"] and config.fsdp_config["fsdp_offload_params"]
        assert config.fsdp_config["fsdp_state_dict_type"] == "FULL_STATE_DICT"
    if name == "zero3.yaml":
        assert (
            config.deepspeed_config["zero_stage"] == 3 and config.deepspeed_config["zero3_save_16bit_model"]
        )


@pytest.mark.parametrize(
    ("name", "kind"),
    [("hifpo_8gpu.yaml", "hifpo"), ("hifpo_vllm_server.yaml", "hifpo"), ("sft_8gpu.yaml", "sft")],
)
def test_gpu_run_configs_validate(name, kind):
    config = build_config(kind, read_config_file(ACCELERATE_DIR / "runs" / name))
    if kind == "hifpo":
        assert config.use_vllm and config.action_format == "qwen3vl" and config.num_generations == 5


@pytest.mark.parametrize("method", ["hifpo", "sft"])
def test_the_launch_entry_point_trains_under_accelerate_launch(warm_base, step_dataset, tmp_path, method):
    """The GPU path's entry point, run for real by `accelerate launch` on CPU (one process), so it
    cannot rot unseen: a checkpoint with its manifest comes out."""
    save_step_dataset(step_dataset, tmp_path / "ds")
    overrides = ["preset=cpu_tiny", "max_steps=1"] + (["num_generations=2"] if method == "hifpo" else [])
    command = [str(Path(sys.executable).with_name("accelerate")), "launch", "--cpu", "--num_processes=1",
               "--num_machines=1", "--mixed_precision=no", "--dynamo_backend=no",
               "-m", "training.methods.launch", method, "--base", str(warm_base), "--dataset", str(tmp_path / "ds"),
               "--out", str(tmp_path / "out")] + [a for o in overrides for a in ("--set", o)]
    result = subprocess.run(command, cwd=Path(__file__).resolve().parents[4], capture_output=True, text=True,
                            timeout=600, env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert result.returncode == 0, result.stderr[-3000:]
    assert (tmp_path / "out" / "model.safetensors").is_file()
    assert read_manifest(tmp_path / "out").base_checkpoint == str(warm_base)


def _annotated_frame(n: int, annotated: int) -> pl.DataFrame:
    """`step_frame(n)` with the four reasoning targets on its first `annotated` rows."""
    rows = step_frame(n).to_dicts()
    for i, row in enumerate(rows):
        texts = (f"Step {i} worked.", f"{LABELS[i % 3]} is on screen.", f"Open {LABELS[i % 3]}.",
                 f"Click {LABELS[i % 3]}.") if i < annotated else (None,) * 4
        row.update(dict(zip(ANNOTATION_COLUMNS, texts, strict=True)))
    return pl.DataFrame(rows)


def test_structured_reasoning_rewards_are_logged_apart_and_unannotated_samples_dropped(warm_base, tmp_path):
    embed = HashingEmbedder()
    config = HiFPOConfig.cpu_tiny(max_steps=1, action_format="mobilewizard",
                                  reward_options={"structure_weight": 0.2, "reasoning_weight": 0.3})
    assert config.grpo_kwargs(tmp_path)["reward_weights"] == [1.0, 0.0, 0.0, 0.0, 0.0, 0.0]
    report = train_hifpo(warm_base, build_step_dataset(_annotated_frame(6, 4)), tmp_path / "wizard", config,
                         embed=embed)
    for component in ("structure", "reasoning", *COMPONENTS):
        assert report.curves[component], f"no {component} reward logged"
    assert report.dropped == {"no_reasoning_annotation": 2, "prompt_too_long": 0} and report.samples == 4
    assert read_manifest(report.checkpoint).dataset["dropped"] == report.dropped
    overall, structure, reasoning = (dict(map(tuple, report.curves[c])) for c in ("overall", "structure", "reasoning"))
    types, args = (dict(map(tuple, report.curves[c])) for c in ("type", "arg"))
    for step, value in overall.items():  # MobileWizard eq. 3 on batch means
        assert value == pytest.approx(0.2 * types[step] + 0.8 * args[step] + 0.2 * structure[step]
                                      + 0.3 * reasoning[step], abs=1e-5)


def test_the_reasoning_reward_loads_the_configured_embedder_only_when_on(warm_base, tmp_path, monkeypatch):
    import training.methods.hifpo.trainer as hifpo

    asked = []
    monkeypatch.setattr(hifpo, "load_embedder", lambda model_dir: asked.append(model_dir) or HashingEmbedder())
    dataset = build_step_dataset(_annotated_frame(4, 4))
    prepare_hifpo(warm_base, dataset, tmp_path / "a", HiFPOConfig.cpu_tiny(
        action_format="mobilewizard", reward_options={"structure_weight": 0.5}))
    assert asked == []
    run = prepare_hifpo(warm_base, dataset, tmp_path / "b", HiFPOConfig.cpu_tiny(
        action_format="mobilewizard", embedder="/models/e5", reward_options={"reasoning_weight": 0.5}))
    assert asked == ["/models/e5"] and run.dropped["no_reasoning_annotation"] == 0
    with pytest.raises(ValueError, match="no step sample has the four reasoning annotations"):
        prepare_hifpo(warm_base, build_step_dataset(_annotated_frame(3, 0)), tmp_path / "c", HiFPOConfig.cpu_tiny(
            action_format="mobilewizard", reward_options={"reasoning_weight": 0.5}))
    with pytest.raises(ValueError, match="'mobilewizard' format's four-part reasoning"):
        prepare_hifpo(warm_base, dataset, tmp_path / "d", HiFPOConfig.cpu_tiny(reward_options={"structure_weight": 0.5}))
