"""Base-policy pretraining: prompt format, batching, a seconds-long real run, reload."""

from __future__ import annotations

import json
import random

import pytest
import torch

from ops.actions import Action, ActionType, ParseFailure
from training.base.pretrain import BasePretrainConfig, PolicyTextEncoder, pretrain_base_policy
from training.base.grounding_data import synthetic_sample
from ops.actions.formats import label_echo
from ops.agent.policy_prompt import build_policy_prompt
from training.models.tiny import build_tiny_model, load_tiny


def policy_messages(labels, instruction, with_image=False):
    """The rollout prompt of the embedded policy (the pretraining must match it exactly)."""
    return build_policy_prompt("elements", instruction, [], [], labels, with_image=with_image)


def test_prompt_lists_elements_then_instruction_text_only():
    [message] = policy_messages(["Settings", "Wi-Fi", "Blue\ntooth"], "Tap  Wi-Fi")
    assert message["content"] == [{"type": "text", "text": "- Settings #0\n- Wi-Fi #1\n- Blue tooth #2\nTask: Tap Wi-Fi"}]


def test_answer_format_round_trips_and_bad_output_is_a_failure():
    action = Action(ActionType.CLICK, element=3)
    labels = ["a", "b", "c", "Display"]
    target = label_echo.render_target(action, labels)
    assert target == '- Display #3\n{"type":"click","args":{"element":3}}'
    assert label_echo.parse_output(target, labels) == action
    assert isinstance(label_echo.parse_output('{"type":"click","args":{}}', labels), ParseFailure)
    assert isinstance(label_echo.parse_output("tap 3", labels), ParseFailure)


def test_synthetic_samples_are_consistent():
    rng = random.Random(0)
    for _ in range(200):
        s = synthetic_sample(rng, False)
        assert s.image is None
        if s.kind == "click":
            assert s.elements[s.target.element].clickable
            assert s.elements[s.target.element].label in s.instruction
    s = synthetic_sample(random.Random(1), True)
    assert s.image is not None and s.image.size == (270, 600)
    # rendering does not change the sample stream
    assert synthetic_sample(random.Random(1), False).instruction == s.instruction


@pytest.fixture(scope="module")
def encoder(tmp_path_factory):
    _, processor = load_tiny(build_tiny_model(tmp_path_factory.mktemp("enc")))
    return PolicyTextEncoder(processor)


@pytest.mark.parametrize("with_image", [False, True])
def test_encoder_prompt_matches_chat_template(encoder, with_image):
    s = synthetic_sample(random.Random(3), True)
    labels = [e.label for e in s.elements]
    expected = encoder.processor.apply_chat_template(
        policy_messages(labels, s.instruction, with_image=with_image), add_generation_prompt=True, tokenize=False)
    assert encoder.prompt(s, with_image) == expected


@pytest.mark.parametrize("with_images", [False, True])
def test_encoder_labels_cover_exactly_the_answer(encoder, with_images):
    rng = random.Random(4)
    samples = [synthetic_sample(rng, True) for _ in range(3)]
    batch = encoder.batch(samples, with_images=with_images, answers=True)
    for row, s in enumerate(samples):
        target = batch["labels"][row][batch["labels"][row] != -100]
        labels = [e.label for e in s.elements]
        assert encoder.tokenizer.decode(target) == label_echo.render_target(s.target, labels) + encoder.tokenizer.eos_token
    assert ("pixel_values" in batch) == with_images


def test_short_pretraining_lowers_loss_and_checkpoint_reloads(tmp_path):
    config = BasePretrainConfig(max_steps=40, max_seconds=120, batch_size=8, image_pool=16, image_every=4,
                                eval_samples=12, tokenizer_corpus_samples=100, threads=1, warmup_steps=5)
    report = pretrain_base_policy(tmp_path / "base", config, synthetic_sample)
    assert report.steps == 40 and report.image_steps == 10
    assert report.final_loss < 0.75 * report.first_loss
    assert 0 < report.click_chance < 1 and report.eval_clicks > 0
    assert sum(report.data_seen.values()) == report.samples_seen
    saved = json.loads((tmp_path / "base" / "pretrain_report.json").read_text())
    assert saved["steps"] == 40
    model, processor = load_tiny(tmp_path / "base")
    s = synthetic_sample(random.Random(9), True)
    text = processor.apply_chat_template(policy_messages([e.label for e in s.elements], s.instruction),
                                         add_generation_prompt=True, tokenize=False)
    inputs = processor(text=[text], return_tensors="pt")
    with torch.no_grad():
        out = model.generate(**inputs, max_new_tokens=4, do_sample=False)
    assert out.shape[1] > inputs["input_ids"].shape[1]
