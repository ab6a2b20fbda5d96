"""LLMResource: typed config for the critic / curriculum model."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from ops.judging.critic.prompts import StepDescription
from resources.llm import LLMResource
from tests.support.fixtures import no_external_network, serve  # noqa: F401  (fixtures)
from tests.support.openai_server import fixed


@pytest.mark.parametrize(
    ("config", "field"),
    [({"model": ""}, "model"), ({"model": "openai/m", "max_concurrency": 0}, "max_concurrency"),
     ({"model": "openai/m", "api_key_env": "not a name"}, "api_key_env"), ({}, "model")],
)
def test_bad_config_fails_at_load_naming_the_field(config, field):
    with pytest.raises(ValidationError, match=field):
        LLMResource(**config)


def test_client_reads_the_key_from_the_named_variable(serve, monkeypatch):
    server = serve(fixed('{"action_description": "a", "ui_description": "b"}'))
    resource = LLMResource(model="openai/judge", api_base=server.base_url, api_key_env="MF_JUDGE_KEY")

    monkeypatch.delenv("MF_JUDGE_KEY", raising=False)
    with pytest.raises(ValueError, match="api_key_env: environment variable MF_JUDGE_KEY is not set"):
        resource.get_client()

    monkeypatch.setenv("MF_JUDGE_KEY", "secret-1")
    result = resource.get_client().json([{"role": "user", "content": "describe"}], StepDescription)

    assert result.value.ui_description == "b"
    assert server.requests[0].headers["authorization"] == "Bearer secret-1"
