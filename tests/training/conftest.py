"""Fixtures shared by the trainer tests: a warm-started tiny base and a small step dataset."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.training.samples import step_frame
from training.models.tiny import build_tiny_model
from training.trainers.sft import train_sft
from training.trainers.sft_config import SFTTrainConfig
from training.trainers.step_datasets import build_step_dataset


@pytest.fixture(scope="session")
def warm_base(tmp_path_factory) -> Path:
    """The tiny model after a short SFT on the answer format: a random model never emits a
    parseable action, so every GRPO group would score 0 and carry no gradient."""
    root = tmp_path_factory.mktemp("hifpo")
    tiny = build_tiny_model(root / "tiny")
    samples = build_step_dataset(step_frame(8), require_response=True)
    train_sft(tiny, samples, root / "warm", SFTTrainConfig.cpu_tiny(max_steps=20, learning_rate=1e-2))
    return root / "warm"


@pytest.fixture(scope="session")
def step_dataset():
    return build_step_dataset(step_frame(6))
