"""Fixtures for the LLM critic tests: a scripted local OpenAI-compatible server and a client on it."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from ops.judging.critic.llm_critic import LLMCritic
from ops.agent.llm import LLMClient, LLMConfig
from tests.ops.judging.scripted import CriticScript
from tests.support.fixtures import no_external_network  # noqa: F401  (autouse fixture)
from tests.support.openai_server import OpenAICompatibleServer


@pytest.fixture
def critic_on() -> Iterator[Callable[..., LLMCritic]]:
    """`critic_on(script, **critic_kwargs)`: an `LLMCritic` whose VLM is a local server running `script`."""
    servers: list[OpenAICompatibleServer] = []

    def make(script: CriticScript, **kwargs: object) -> LLMCritic:
        server = OpenAICompatibleServer(script).start()
        servers.append(server)
        client = LLMClient(LLMConfig(model="openai/scripted-model", api_base=server.base_url, timeout_s=10.0,
                                     max_retries=0, backoff_initial_s=0.01, backoff_max_s=0.05))
        return LLMCritic(client, name=kwargs.pop("name", "llm:test"), **kwargs)  # type: ignore[arg-type]

    yield make
    for server in servers:
        server.stop()
