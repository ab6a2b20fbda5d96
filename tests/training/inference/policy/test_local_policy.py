"""Local transformers policy on the tiny offline Qwen2-VL checkpoint."""

from __future__ import annotations

import io
import json

import pytest
import torch

from ops.agent.policy_prompt import build_policy_prompt
from PIL import Image

from ops.agent.episode import PolicyRequest
from training.inference.local_policy import GenerationSettings, LocalPolicy
from tests.support.observations import make_observation


@pytest.fixture(scope="module")
def greedy_policy(tiny_checkpoint) -> LocalPolicy:
    return LocalPolicy(tiny_checkpoint, "elements", generation=GenerationSettings(max_new_tokens=8), batch_size=2)


def _requests(n: int) -> list[PolicyRequest]:
    # Different lengths so batching needs padding.
    return [
        PolicyRequest(make_observation(color=(20 * i, 80, 160)), "Open Display " + "now " * i,
                      ["Opened Settings"] * i, [])
        for i in range(n)
    ]


def test_act_returns_text_and_the_stored_prompt(greedy_policy):
    output = greedy_policy.act(make_observation(), "Open Display")

    assert isinstance(output.raw_text, str)
    prompt = json.loads(output.prompt)
    # the element-list style of the embedded policy is text-only: no image placeholder
    assert prompt[-1]["content"] == [{"type": "text", "text": "- Network & internet #0\n- Display #1\nTask: Open Display"}]
    assert output.latency_s > 0
    assert greedy_policy.output_format == "label_echo"
    assert greedy_policy.version.startswith("local:")


def test_act_batch_keeps_order_across_chunks_and_matches_single_calls(greedy_policy):
    requests = _requests(3)  # batch_size 2 → chunks of 2 and 1

    batched = greedy_policy.act_batch(requests)
    single = [greedy_policy.act_batch([r])[0] for r in requests]

    assert [json.loads(o.prompt)[-1]["content"][-1]["text"] for o in batched] == [
        json.loads(o.prompt)[-1]["content"][-1]["text"] for o in single
    ]
    assert [o.raw_text for o in batched] == [o.raw_text for o in single]  # greedy is deterministic


def test_left_padded_batch_scores_like_single_prompts(greedy_policy):
    """Batched prompts of different lengths must give the same next-token logits as alone,
    which only holds with left padding (Qwen2-VL's rope index reads the attention mask)."""
    requests = _requests(2)
    processor, model = greedy_policy.processor, greedy_policy.model
    # with the screenshot, so the rope index over image and text positions is exercised too
    prompts = [build_policy_prompt("elements", r.instruction, [], [], r.observation.elements, with_image=True)
               for r in requests]
    texts = [processor.apply_chat_template(p, add_generation_prompt=True, tokenize=False) for p in prompts]
    images = [Image.open(io.BytesIO(r.observation.screenshot_png)).convert("RGB") for r in requests]

    with torch.inference_mode():
        batch = processor(text=texts, images=images, return_tensors="pt", padding=True)
        batched_logits = model(**batch).logits[:, -1]
        alone = [model(**processor(text=[t], images=[im], return_tensors="pt")).logits[0, -1]
                 for t, im in zip(texts, images)]

    assert batch["attention_mask"][0, 0] == 0  # the shorter prompt is padded on the left
    for row, expected in zip(batched_logits, alone):
        torch.testing.assert_close(row, expected, atol=1e-4, rtol=1e-4)


def test_sampling_with_a_seed_is_reproducible(tiny_checkpoint):
    settings = GenerationSettings(max_new_tokens=12, temperature=1.0, seed=7)
    observation = make_observation()

    first = LocalPolicy(tiny_checkpoint, "qwen3vl", generation=settings).act(observation, "Open Display")
    second = LocalPolicy(tiny_checkpoint, "qwen3vl", generation=settings).act(observation, "Open Display")

    assert first.raw_text == second.raw_text
    assert "mobile_use" in json.loads(first.prompt)[0]["content"]


def test_bad_checkpoint_and_settings_fail_naming_the_field(tmp_path):
    with pytest.raises(FileNotFoundError, match="checkpoint"):
        LocalPolicy(tmp_path / "missing")
    with pytest.raises(ValueError, match="max_new_tokens"):
        GenerationSettings(max_new_tokens=0)
    with pytest.raises(ValueError, match="top_p"):
        GenerationSettings(top_p=0)
