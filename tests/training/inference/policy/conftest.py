"""Fixtures for the policy backend tests: network guard and a tiny checkpoint."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.network import loopback_only


@pytest.fixture(autouse=True)
def no_external_network() -> Iterator[None]:
    with loopback_only() as attempts:
        yield
    assert attempts == [], f"external network access attempted: {attempts}"


@pytest.fixture(scope="session")
def tiny_checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A randomly initialised tiny Qwen2-VL checkpoint, built offline once per session."""
    from training.models.tiny import build_tiny_model

    return build_tiny_model(tmp_path_factory.mktemp("tiny") / "ckpt", seed=0)
