"""The reasoning reward's sentence embedder: the packaged all-MiniLM-L6-v2 loads from the installed
wheel with no network, and scores paraphrases above unrelated text."""

from __future__ import annotations

import json

import pytest

from ops.actions import Action, ReasoningParts, render_structured
from ops.judging.reasoning_reward import cosine, reasoning_reward
from tests.support.network import loopback_only
from training.models.sentence_embedder import check_mean_pooling, packaged_minilm

def test_packaged_minilm_loads_offline_and_ranks_paraphrases_first(monkeypatch):
    # About 3 s in a test process that has imported transformers (measured on 2 shared cores).
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with loopback_only() as attempts:
        embed = packaged_minilm(cache_size=4)
        first = embed(["Open the Settings app.", "Launch Settings.", "Type hello into the search box."])
    assert attempts == []
    assert len(first) == 3 and {len(v) for v in first} == {384}
    assert cosine(first[0], first[1]) > cosine(first[0], first[2]) + 0.2
    assert embed(["Launch Settings."]) == [first[1]]  # cached, and the same vector

    parts = ReasoningParts("The last tap opened Settings.", "Settings shows Display and Sound.",
                           "Open display settings.", "Tap Display.")
    paraphrase = ReasoningParts("Settings opened after my tap.", "Display and Sound are listed.",
                                "Go into the display settings.", "Click Display.")
    unrelated = ReasoningParts("It is raining.", "A cat sleeps.", "Bake bread.", "Sing loudly.")
    click = Action(type="click", point=(500, 300))
    same = reasoning_reward(render_structured(click, parts), parts, embed)
    close = reasoning_reward(render_structured(click, paraphrase), parts, embed)
    far = reasoning_reward(render_structured(click, unrelated), parts, embed)
    assert same == pytest.approx(1.0, abs=1e-5) and same > close > far + 0.2


def test_only_mean_pooled_sentence_transformers_directories_load(tmp_path):
    with pytest.raises(ValueError, match="no modules.json"):
        check_mean_pooling(tmp_path)
    (tmp_path / "modules.json").write_text(json.dumps([{"path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}]))
    (tmp_path / "1_Pooling").mkdir()
    (tmp_path / "1_Pooling" / "config.json").write_text(json.dumps({"pooling_mode_cls_token": True,
                                                                     "pooling_mode_mean_tokens": False}))
    with pytest.raises(ValueError, match="only mean pooling"):
        check_mean_pooling(tmp_path)
