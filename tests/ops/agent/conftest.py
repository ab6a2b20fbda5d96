"""Fixtures for the LLM client tests: a local OpenAI-compatible server and clients bound to it."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from ops.agent.llm import LLMClient, LLMConfig
from tests.support.network import loopback_only
from tests.support.openai_server import Behaviour, OpenAICompatibleServer


@pytest.fixture(autouse=True)
def no_external_network() -> Iterator[None]:
    with loopback_only() as attempts:
        yield
    assert attempts == [], f"external network access attempted: {attempts}"


@pytest.fixture
def serve() -> Iterator[Callable[[Behaviour], OpenAICompatibleServer]]:
    servers: list[OpenAICompatibleServer] = []

    def start(behaviour: Behaviour) -> OpenAICompatibleServer:
        server = OpenAICompatibleServer(behaviour).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


@pytest.fixture
def connect() -> Callable[..., LLMClient]:
    """`connect(server, **config)`: a client for `server` with fast backoff for tests."""

    def make(server: OpenAICompatibleServer, **overrides: object) -> LLMClient:
        settings: dict[str, object] = {
            "model": "openai/scripted-model",
            "api_base": server.base_url,
            "timeout_s": 5.0,
            "max_retries": 2,
            "backoff_initial_s": 0.01,
            "backoff_max_s": 0.05,
        }
        settings.update(overrides)
        return LLMClient(LLMConfig(**settings))  # type: ignore[arg-type]

    return make
