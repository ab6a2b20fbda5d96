"""HiFPO's reward signal measured outside training (training.methods.hifpo.signal)."""

from __future__ import annotations

import polars as pl
import pytest

from training.models.tiny import build_tiny_model
from training.methods.hifpo.config import HiFPOConfig
from training.methods.hifpo.signal import group_table, kl_table, measure_signal, reward_table

CONFIG = HiFPOConfig.cpu_tiny(action_format="canonical", max_completion_length=24)


def test_a_checkpoint_against_itself_samples_alike_and_has_no_kl(warm_base, step_dataset):
    samples = measure_signal([("first", warm_base), ("again", warm_base)], step_dataset, CONFIG, seed=3)
    first, again = (samples.filter(pl.col("checkpoint") == name) for name in ("first", "again"))
    assert first.height == again.height == len(step_dataset) * CONFIG.num_generations
    # the same prompts and sampling seed: the same responses, so the same rewards and advantages
    assert first.drop("checkpoint", "kl_sum").equals(again.drop("checkpoint", "kl_sum"))
    kl = kl_table(samples)
    assert kl["checkpoint"].unique().to_list() == ["again"]
    assert kl["kl_per_token"].abs().max() < 1e-6
    # a group with all rewards alike is exactly one whose GRPO advantages are all 0
    groups = group_table(first, 1.0).filter(pl.col("target_type") == "all")
    no_advantage = first.group_by("prompt").agg((pl.col("advantage").abs() < 1e-6).all())["advantage"].mean()
    assert groups["zero_variance"].item() == pytest.approx(no_advantage)


def test_a_policy_that_never_answers_gives_only_zero_variance_groups(tmp_path, step_dataset):
    untrained = build_tiny_model(tmp_path / "tiny")  # random weights: no response parses as an action
    samples = measure_signal([("untrained", untrained)], step_dataset, CONFIG)
    groups = group_table(samples, 1.0).filter(pl.col("target_type") == "all").row(0, named=True)
    assert groups["groups"] == len(step_dataset)
    assert groups["zero_variance"] == groups["all_zero"] == 1.0
    rewards = reward_table(samples).filter(pl.col("target_type") == "click").row(0, named=True)
    assert rewards["overall"] == rewards["format"] == 0.0
    assert kl_table(samples) is None
