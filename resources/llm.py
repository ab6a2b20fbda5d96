"""The critic / curriculum VLM as a Dagster resource: typed endpoint config that builds an
`ops.agent.llm.LLMClient` (litellm; keys only from the named environment variable)."""

from __future__ import annotations

import dagster as dg
from pydantic import Field

from ops.agent.llm import LLMClient, LLMConfig
from ops.config_bounds import MAX_ATTEMPTS, MAX_PARALLEL, MAX_SECONDS, MAX_TEMPERATURE, MAX_TOKENS


class LLMResource(dg.ConfigurableResource):
    """A hosted or OpenAI-compatible VLM (Gemini, GPT, Qwen3-VL on vLLM) reached through litellm."""

    model: str = Field(
        description="litellm model name: 'openai/<served name>' for an OpenAI-compatible server at "
        "api_base, or a hosted model such as 'gemini/gemini-2.5-pro'.",
        min_length=1,
    )
    api_base: str | None = Field(
        default=None, description="Base URL of an OpenAI-compatible server, e.g. http://host:8000/v1."
    )
    api_key_env: str | None = Field(
        default=None,
        description="Name of the environment variable holding the API key (never the key itself). "
        "Unset: keyless for api_base servers, else the provider's usual variable.",
        pattern=r"^[A-Za-z_][A-Za-z0-9_]*$",
    )
    max_concurrency: int = Field(default=8, ge=1, le=MAX_PARALLEL, description="Requests in flight at once.")
    timeout_s: float = Field(default=120.0, gt=0, le=MAX_SECONDS, description="Timeout of one HTTP request, seconds.")
    max_retries: int = Field(default=3, ge=0, le=MAX_ATTEMPTS, description="Retries on transport errors, 5xx, 429 and timeouts.")
    backoff_initial_s: float = Field(
        default=1.0, ge=0, le=MAX_SECONDS, description="First retry delay; doubles per retry (with jitter)."
    )
    backoff_max_s: float = Field(default=30.0, ge=0, le=MAX_SECONDS, description="Cap of the retry delay.")
    temperature: float = Field(default=0.0, ge=0, le=MAX_TEMPERATURE, description="Sampling temperature of the judge.")
    max_tokens: int = Field(default=2048, ge=1, le=MAX_TOKENS, description="Maximum tokens of one answer.")
    json_mode: bool = Field(default=False, description="Ask the server for response_format=json_object (if supported).")

    def llm_config(self) -> LLMConfig:
        return LLMConfig(
            model=self.model,
            api_base=self.api_base,
            api_key_env=self.api_key_env,
            max_concurrency=self.max_concurrency,
            timeout_s=self.timeout_s,
            max_retries=self.max_retries,
            backoff_initial_s=self.backoff_initial_s,
            backoff_max_s=self.backoff_max_s,
            temperature=self.temperature,
            max_tokens=self.max_tokens,
            json_mode=self.json_mode,
        )

    def get_client(self) -> LLMClient:
        """A client for this endpoint; fails naming `api_key_env` if that variable is unset."""
        return LLMClient(self.llm_config())
