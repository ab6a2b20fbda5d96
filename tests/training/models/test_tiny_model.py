"""The tiny Qwen2-VL builder: save/reload, generate with an image, one real TRL GRPO and SFT step."""

from __future__ import annotations

import json

import pytest
import torch
from datasets import Dataset
from PIL import Image
from transformers import AutoModelForImageTextToText
from trl import GRPOConfig, GRPOTrainer, SFTConfig, SFTTrainer

from training.models.tiny import IM_END, IMAGE_PAD, build_tiny_model, load_tiny


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory):
    return build_tiny_model(tmp_path_factory.mktemp("tiny"), corpus=["Airplane mode Hotspot"])


def _prompt(text: str) -> list[dict]:
    return [{"role": "user", "content": [{"type": "image"}, {"type": "text", "text": text}]}]


def _screens(n: int) -> list[Image.Image]:
    return [Image.new("RGB", (270, 600), (40 * i, 255 - 40 * i, 128)) for i in range(n)]


def test_checkpoint_reloads_with_consistent_special_ids(tiny_dir):
    model, processor = load_tiny(tiny_dir)
    tok = processor.tokenizer
    assert tok.padding_side == "left"
    assert model.config.image_token_id == tok.convert_tokens_to_ids(IMAGE_PAD)
    assert model.config.text_config.eos_token_id == tok.convert_tokens_to_ids(IM_END)
    assert model.config.text_config.pad_token_id == tok.pad_token_id
    assert model.config.text_config.vocab_size == len(tok)
    # extra corpus text is learned by the tokenizer
    assert len(tok.tokenize("Hotspot")) < len("Hotspot")
    # init scaled to the width (Qwen2's 0.02 stalls attention learning at width 64)
    q_std = model.model.language_model.layers[0].self_attn.q_proj.weight.std().item()
    assert 0.8 * 64**-0.5 < q_std < 1.2 * 64**-0.5
    auto = AutoModelForImageTextToText.from_pretrained(tiny_dir)
    assert type(auto).__name__ == "Qwen2VLForConditionalGeneration"


def test_generate_with_image_and_chat_prompt(tiny_dir):
    model, processor = load_tiny(tiny_dir)
    text = processor.apply_chat_template(_prompt("Tap Wi-Fi"), add_generation_prompt=True, tokenize=False)
    assert text.endswith("<|im_start|>assistant\n")
    inputs = processor(text=[text, text], images=_screens(2), return_tensors="pt", padding=True)
    n_image_tokens = int((inputs["input_ids"][0] == model.config.image_token_id).sum())
    grid = inputs["image_grid_thw"][0]
    assert n_image_tokens == int(grid.prod()) // 4
    out = model.generate(**inputs, max_new_tokens=8, do_sample=False)
    prompt_len = inputs["input_ids"].shape[1]
    assert out.shape[0] == 2 and prompt_len < out.shape[1] <= prompt_len + 8
    assert all(isinstance(t, str) for t in processor.batch_decode(out[:, prompt_len:]))


def test_one_grpo_step_and_one_sft_step(tiny_dir, tmp_path):
    _, processor = load_tiny(tiny_dir)
    prompts = [_prompt(f"Tap item {i}") for i in range(4)]
    grpo_data = Dataset.from_dict({"prompt": prompts, "image": _screens(4), "target": ["1", "2", "3", "4"]})

    def reward(completions, target, **_):
        return [float(t in c[0]["content"]) + 0.01 * len(c[0]["content"]) for c, t in zip(completions, target)]

    grpo_args = GRPOConfig(
        output_dir=str(tmp_path / "grpo"), per_device_train_batch_size=4, num_generations=2,
        max_completion_length=8, max_steps=1, beta=0.04, report_to=[], save_strategy="no", use_cpu=True,
    )
    grpo = GRPOTrainer(model=str(tiny_dir), reward_funcs=reward, args=grpo_args,
                       train_dataset=grpo_data, processing_class=processor)
    before = {n: p.detach().clone() for n, p in grpo.model.named_parameters()}
    grpo.train()
    assert grpo.state.global_step == 1
    assert any(not torch.equal(before[n], p) for n, p in grpo.model.named_parameters())

    completions = [[{"role": "assistant", "content": [{"type": "text", "text": json.dumps(
        {"type": "click", "args": {"element": i}}, separators=(",", ":"))}]}] for i in range(4)]
    sft_data = Dataset.from_dict({"prompt": prompts, "completion": completions,
                                  "images": [[im] for im in _screens(4)]})
    sft_args = SFTConfig(output_dir=str(tmp_path / "sft"), per_device_train_batch_size=2, max_steps=1,
                         report_to=[], save_strategy="no", use_cpu=True, max_length=None, logging_steps=1)
    model, _ = load_tiny(tiny_dir)
    sft = SFTTrainer(model=model, args=sft_args, train_dataset=sft_data, processing_class=processor)
    sft.train()
    assert sft.state.global_step == 1
    assert sft.state.log_history[0]["loss"] > 0
