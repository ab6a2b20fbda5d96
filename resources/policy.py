"""The policy as a Dagster resource: typed config choosing the local transformers twin or the
OpenAI-compatible endpoint twin; both come back as an `ops.agent.episode.Policy`."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import dagster as dg
from pydantic import Field, model_validator

from ops.config_bounds import MAX_ATTEMPTS, MAX_PARALLEL, MAX_SECONDS, MAX_SEED, MAX_TEMPERATURE, MAX_TOKENS, MAX_WORKERS
from training.methods.checkpoint import Checkpoint
from ops.agent.llm import LLMConfig
from ops.agent.policy import EndpointPolicy, PromptedPolicy
from ops.agent.policy_prompt import PromptStyle
from resources.storage import ArtifactStore
from resources.vllm_engine import PLACEHOLDERS, VLLM_SERVE, is_adapter, load_lora_adapter, served_checkpoint

if TYPE_CHECKING:
    from training.inference.local_policy import GenerationSettings

_ENDPOINT_ONLY = ("model", "api_base", "api_key_env")
Engine = Literal["project", "vllm"]


class PolicyResource(dg.ConfigurableResource):
    """Which policy acts in rollouts and benchmarks, and how it decodes."""

    kind: Literal["local", "endpoint"] = Field(
        default="local",
        description="'local': a checkpoint directory run in-process; 'endpoint': an OpenAI-compatible server.",
    )
    prompt_style: Literal["qwen3vl", "guiowl", "elements", "mobilewizard"] = Field(
        default="elements",
        description="Step prompt: 'qwen3vl' (MobileForge prompt 6), 'guiowl' (prompt 7), 'elements' "
        "(compact element-list prompt of the embedded tiny model), or 'mobilewizard' (MobileWizard §3.3: "
        "four-part structured reasoning with memory carried between steps; the `wizard` experiment).",
    )
    version: str | None = Field(
        default=None, description="Name recorded with every attempt; default derived from the model."
    )
    temperature: float = Field(default=0.0, ge=0, le=MAX_TEMPERATURE, description="Sampling temperature; 0 is greedy.")
    top_p: float = Field(default=1.0, gt=0, le=1, description="Nucleus sampling mass (local, when sampling).")
    max_new_tokens: int = Field(default=128, ge=1, le=MAX_TOKENS, description="Maximum tokens generated per step.")
    checkpoint: str | None = Field(default=None, description=(
        "The policy's weights: a transformers model directory, or the id of a model already in the local Hugging "
        "Face cache (nothing is downloaded). kind=local: the base that is rolled out, trained and benchmarked; "
        "kind=endpoint: the weights the server serves, which the trainers start from (their results are then "
        "served by the project for the benchmark). None: the bundled tiny base (kind=local); with kind=endpoint, "
        "the served model is rolled out and benchmarked but cannot be trained."))
    # local
    device: str = Field(default="cpu", description="kind=local: torch device, e.g. 'cpu' or 'cuda:0'.")
    batch_size: int = Field(default=16, ge=1, le=MAX_PARALLEL, description=(
        "kind=local: prompts per generate call (chunks of similar length; 16 was fastest for the "
        "embedded tiny model on CPU)."))
    seed: int | None = Field(default=None, ge=0, le=MAX_SEED, description="kind=local: torch seed set at load, for reproducible sampling.")
    torch_threads: int | None = Field(default=1, ge=1, le=MAX_WORKERS, description=(
        "CPU threads torch uses while a model run by the project generates (kind=local, and checkpoints the project "
        "serves for kind=endpoint); None: torch's default, every core. 1 by default: on 2 cores the tiny model "
        "generated 12% faster with 2 threads when alone, and 9x slower beside another busy process (busy threads "
        "spin-wait for each other), which is how RFT's rounds run beside HiFPO and how evaluations share a machine."))
    constrain_echo: bool = Field(default=True, description=(
        "kind=local, prompt_style=elements: an echoed row must be one of the screen's rows "
        "(training.inference.echo_constraint); endpoints and other styles decode freely."))
    constrain_typing: bool = Field(default=True, description=(
        "kind=local, prompt_style=elements: a type action types what a hint says to type, else a quoted "
        "string (else a run of words) of the instruction; an answer is what a hint says to answer, when "
        "one does (training.inference.typing_constraint); endpoints and other styles decode freely."))
    # endpoint
    model: str | None = Field(
        default=None, description="kind=endpoint: litellm model name, e.g. 'openai/Qwen3-VL-8B-Instruct'."
    )
    api_base: str | None = Field(default=None, description="kind=endpoint: server base URL, e.g. http://host:8000/v1.")
    api_key_env: str | None = Field(
        default=None, description="kind=endpoint: environment variable holding the API key (never the key itself).",
        pattern=r"^[A-Za-z_][A-Za-z0-9_]*$",
    )
    max_concurrency: int = Field(default=16, ge=1, le=MAX_PARALLEL, description="kind=endpoint: requests in flight at once.")
    timeout_s: float = Field(default=120.0, gt=0, le=MAX_SECONDS, description="kind=endpoint: timeout of one request, seconds.")
    max_retries: int = Field(
        default=3, ge=0, le=MAX_ATTEMPTS, description="kind=endpoint: retries on transport errors, 5xx, 429, timeouts."
    )
    engine: Engine = Field(default="project", description=(
        "kind=endpoint: what serves the trained checkpoints (the base is always the configured server). "
        "'project': the project's own transformers server (training.inference.server), the CPU default; "
        "'vllm': a LoRA adapter checkpoint is loaded into the base's vLLM server at run time, a full one gets a "
        "vLLM server of its own from vllm_command (resources.vllm_engine)."))
    vllm_command: list[str] = Field(default_factory=lambda: list(VLLM_SERVE), description=(
        "engine=vllm: the command serving a full trained checkpoint, with {weights}, {name} and {port} filled "
        "in; add e.g. --tensor-parallel-size N for a model over N GPUs."))
    vllm_startup_s: float = Field(default=900.0, gt=0, description=(
        "engine=vllm: seconds a checkpoint's vLLM server may take to list its model before the step fails."))

    @model_validator(mode="after")
    def _fields_fit_kind(self) -> PolicyResource:
        if self.kind == "endpoint" and not self.model:
            raise ValueError("model: required when kind is 'endpoint'")
        if self.engine == "vllm" and self.kind != "endpoint":
            raise ValueError("engine: 'vllm' serves trained checkpoints beside a served base; set kind: endpoint")
        if self.engine == "vllm" and not all(p in " ".join(self.vllm_command) for p in PLACEHOLDERS):
            raise ValueError(f"vllm_command: must contain {', '.join(PLACEHOLDERS)}")
        if self.kind == "local":
            for name in _ENDPOINT_ONLY:
                if getattr(self, name) is not None:
                    raise ValueError(f"{name}: not used when kind is 'local'; remove it or set kind: endpoint")
        return self

    def configured_weights(self) -> Path | None:
        """The configured checkpoint as a local model directory; None when none is configured."""
        if self.checkpoint is None:
            return None
        path = Path(self.checkpoint).expanduser()
        if not path.exists() and not self.checkpoint.startswith((".", "/", "~")) and self.checkpoint.count("/") == 1:
            from huggingface_hub import snapshot_download
            from huggingface_hub.errors import LocalEntryNotFoundError

            try:  # a model id: only the local cache is looked at
                path = Path(snapshot_download(self.checkpoint, local_files_only=True))
            except LocalEntryNotFoundError:
                raise ValueError(f"checkpoint: {self.checkpoint!r} is neither a directory nor a model in the local "
                                 "Hugging Face cache (nothing is downloaded at run time)") from None
        if not (path / "config.json").is_file():
            raise ValueError(f"checkpoint: no transformers model at {path} (config.json missing)")
        return path.resolve()

    @contextmanager
    def acting_policy(self, checkpoint: Checkpoint, artifact_store: ArtifactStore, *,
                      temperature: float | None = None, seed: int | None = None,
                      version: str | None = None, conditions: str = "") -> Iterator[PromptedPolicy]:
        """The one place a `Checkpoint` becomes a policy that acts (rollouts, RFT rounds, benchmark).

        kind=local: the checkpoint's weights run in-process on `device`, with this resource's
        decoding settings and constraints. kind=endpoint: the base checkpoint is the configured
        server's model; any other checkpoint (trained from it) is served by the project
        (`training.inference.server`, transformers on `device`) or, with engine='vllm', by vLLM
        (`resources.vllm_engine`: an adapter loaded into the base's server, a full checkpoint on a
        server of its own) for as long as the context lasts, so every policy of a run is asked the
        same way. `temperature` overrides the configured one,
        `seed` the configured torch seed; `version` (default: the configured one, else the
        checkpoint's version plus its decoding tag) names the attempts it makes, so attempts
        decoded one way never resume another's; `conditions` (e.g. a digest of the rollout
        settings) is appended to it for the same reason.
        """
        temperature = self.temperature if temperature is None else temperature
        seed = self.seed if seed is None else seed
        if PromptStyle(self.prompt_style) != checkpoint.prompt_style:
            raise ValueError(f"prompt_style: {self.prompt_style!r} configured, but checkpoint {checkpoint.version} "
                             f"reads {checkpoint.prompt_style.value!r} prompts; configure that style")
        version = (version or self.version or checkpoint.version + self.decoding_tag(temperature, seed)) + conditions
        if self.kind == "endpoint" and checkpoint.method == "base":
            yield EndpointPolicy(self._llm_config(self.model or "", self.api_base, temperature, self.api_key_env),
                                 self.prompt_style, version=version)
            return
        if checkpoint.uri is None:
            raise ValueError(f"checkpoint {checkpoint.version}: no weights to load (policy.checkpoint is not set)")
        weights = artifact_store.local_path(checkpoint.uri)
        if self.kind == "endpoint" and self.engine == "vllm":
            name = checkpoint.version.replace(":", "-")
            if is_adapter(weights):
                load_lora_adapter(self.api_base or "", name, weights,
                                  os.environ.get(self.api_key_env) if self.api_key_env else None)
                yield EndpointPolicy(self._llm_config(f"openai/{name}", self.api_base, temperature, self.api_key_env),
                                     self.prompt_style, version=version)
                return
            with served_checkpoint(self.vllm_command, weights, name, self.vllm_startup_s) as base_url:
                yield EndpointPolicy(self._llm_config(f"openai/{name}", base_url, temperature, None),
                                     self.prompt_style, version=version)
            return
        if self.kind == "endpoint":
            from training.inference.server import ChatServer  # torch only when used

            name = checkpoint.version.replace(":", "-")
            with ChatServer(weights, model_name=name, device=self.device, batch_size=self.batch_size,
                            max_new_tokens=self.max_new_tokens, threads=self.torch_threads) as server:
                yield EndpointPolicy(self._llm_config(f"openai/{name}", server.base_url, temperature, None),
                                     self.prompt_style, version=version)
            return
        from training.inference.local_policy import LocalPolicy  # torch only when used

        yield LocalPolicy(weights, checkpoint.prompt_style,
                          generation=self.generation(temperature, seed),
                          device=self.device, batch_size=self.batch_size, version=version,
                          threads=self.torch_threads)

    def _llm_config(self, model: str, api_base: str | None, temperature: float,
                    api_key_env: str | None) -> LLMConfig:
        return LLMConfig(model=model, api_base=api_base, api_key_env=api_key_env,
                         max_concurrency=self.max_concurrency, timeout_s=self.timeout_s,
                         max_retries=self.max_retries, temperature=temperature, max_tokens=self.max_new_tokens)

    def generation(self, temperature: float, seed: int | None) -> GenerationSettings:
        """Decoding settings of a local policy built from this resource (rollouts, RFT rounds,
        benchmark): its token budget, nucleus mass and constraints, with this temperature."""
        from training.inference.local_policy import GenerationSettings

        return GenerationSettings(max_new_tokens=self.max_new_tokens, temperature=temperature, top_p=self.top_p,
                                  seed=seed, constrain_echo=self.constrain_echo,
                                  constrain_typing=self.constrain_typing)

    def decoding_tag(self, temperature: float, seed: int | None = None) -> str:
        """Suffix of a policy version naming how it decodes: staged attempts resume by version,
        so attempts decoded one way must never resume another's — nor samples drawn with one seed
        another seed's (greedy decoding does not depend on the seed)."""
        local = self.kind == "local"  # served models decode unconstrained
        sampled = bool(temperature)
        return ((f"@T{temperature}" if sampled else "") + (f"~seed{seed}" if sampled and seed is not None else "")
                + ("+echo" if local and self.constrain_echo else "") + ("+typing" if local and self.constrain_typing else ""))
