"""Fixtures for the LLM client tests: a local OpenAI-compatible server (`serve`, tests/support/fixtures.py),
clients bound to it, and the network guard."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from ops.agent.llm import LLMClient, LLMConfig
from tests.support.fixtures import no_external_network, serve  # noqa: F401  (fixtures)
from tests.support.openai_server import OpenAICompatibleServer


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
