"""Fixtures used by test folders far apart in tests/ (the LLM and policy backends' tests, the
resources' tests): a conftest.py or a test module imports the ones it needs from here."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.support.network import loopback_only
from tests.support.openai_server import Behaviour, OpenAICompatibleServer


@pytest.fixture(autouse=True)
def no_external_network() -> Iterator[None]:
    """Fails the test if anything tried to reach a host other than the loopback (autouse where imported)."""
    with loopback_only() as attempts:
        yield
    assert attempts == [], f"external network access attempted: {attempts}"


@pytest.fixture
def serve() -> Iterator[Callable[[Behaviour], OpenAICompatibleServer]]:
    """`serve(behaviour)`: a local OpenAI-compatible server running `behaviour`, stopped after the test."""
    servers: list[OpenAICompatibleServer] = []

    def start(behaviour: Behaviour) -> OpenAICompatibleServer:
        server = OpenAICompatibleServer(behaviour).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


@pytest.fixture(scope="session")
def tiny_checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A randomly initialised tiny Qwen2-VL checkpoint, built offline once per session."""
    from training.models.tiny import build_tiny_model

    return build_tiny_model(tmp_path_factory.mktemp("tiny") / "ckpt", seed=0)
