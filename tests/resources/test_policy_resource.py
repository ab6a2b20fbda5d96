"""PolicyResource: typed config that fails at load naming the field, and builds either twin."""

from __future__ import annotations

import urllib.request

import dagster as dg
import pytest
from pydantic import ValidationError

from training.methods.checkpoint import Checkpoint
from ops.agent.policy import EndpointPolicy
from resources.policy import PolicyResource
from training.inference.local_policy import LocalPolicy
from tests.support.fixtures import no_external_network, tiny_checkpoint  # noqa: F401  (fixtures)
from tests.support.observations import make_observation
from tests.support.openai_server import OpenAICompatibleServer, fixed


@pytest.mark.parametrize(
    ("config", "field"),
    [
        ({"kind": "endpoint"}, "model: required"),
        ({"kind": "local", "api_base": "http://127.0.0.1:1/v1"}, "api_base: not used"),
        ({"kind": "remote"}, "kind"),
        ({"temperature": -0.5}, "temperature"),
        ({"max_new_tokens": 0}, "max_new_tokens"),
        ({"prompt_style": "chatml"}, "prompt_style"),
        ({"torch_threads": 0}, "torch_threads"),
        ({"kind": "endpoint", "model": "openai/m", "api_key_env": "sk-123 456"}, "api_key_env"),
    ],
)
def test_bad_config_fails_at_load_naming_the_field(config, field):
    with pytest.raises(ValidationError, match=field):
        PolicyResource(**config)


@pytest.fixture
def artifact_store(tmp_path):
    from resources.storage import ArtifactStore, StorageLocation

    return ArtifactStore(location=StorageLocation(root=str(tmp_path / "storage")))


@pytest.fixture
def stored_base(tiny_checkpoint, artifact_store) -> Checkpoint:
    uri = artifact_store.put_dir(tiny_checkpoint, "base_policy/test")
    return Checkpoint(version="tiny-base", uri=uri, prompt_style="elements", method="base")


def test_local_kind_builds_the_transformers_policy(stored_base, artifact_store):
    resource = PolicyResource(kind="local", max_new_tokens=4, version="tiny-base")

    with resource.acting_policy(stored_base, artifact_store) as policy:
        assert isinstance(policy, LocalPolicy)
    assert (policy.version, policy.output_format, policy.generation.max_new_tokens) == ("tiny-base", "label_echo", 4)
    assert policy.generation.temperature == 0.0
    with resource.acting_policy(stored_base, artifact_store, temperature=0.8) as sampled:
        assert sampled.generation.temperature == 0.8
    assert policy.generation.constrain_echo and policy.generation.constrain_typing  # on by default
    free = PolicyResource(kind="local", constrain_echo=False, constrain_typing=False)
    with free.acting_policy(stored_base, artifact_store) as free_policy:
        pass
    assert not free_policy.generation.constrain_echo and not free_policy.generation.constrain_typing
    # staged attempts resume by version: each decoding gets its own
    typing_only = PolicyResource(kind="local", constrain_echo=False)
    tags = [resource.decoding_tag(0.0), resource.decoding_tag(1.0), typing_only.decoding_tag(0.0),
            free.decoding_tag(0.0), free.decoding_tag(0.0, seed=3), free.decoding_tag(0.7, seed=3)]
    assert tags == ["+echo+typing", "@T1.0+echo+typing", "+typing", "", "", "@T0.7~seed3"]
    with typing_only.acting_policy(stored_base, artifact_store, temperature=1.0) as typing_policy:
        assert typing_policy.version == "tiny-base@T1.0+typing"
    # samples drawn with another seed are other attempts (benchmark_results.seed, a forked re-benchmark)
    with typing_only.acting_policy(stored_base, artifact_store, temperature=0.7, seed=7) as seeded:
        assert seeded.version == "tiny-base@T0.7~seed7+typing" and seeded.generation.seed == 7


def test_a_local_policy_generates_with_the_configured_threads(stored_base, artifact_store, monkeypatch):
    import torch

    import training.inference.local_policy as local_policy

    seen = []
    real = local_policy.generate_texts
    monkeypatch.setattr(local_policy, "generate_texts",
                        lambda *args, **kwargs: seen.append(torch.get_num_threads()) or real(*args, **kwargs))
    before = torch.get_num_threads()
    for threads, expected in ((1, 1), (None, before)):  # None: the process's count stays
        with PolicyResource(kind="local", max_new_tokens=2, torch_threads=threads).acting_policy(
                stored_base, artifact_store) as policy:
            policy.act(make_observation(), "Open Display")
        assert seen[-1] == expected and torch.get_num_threads() == before


def test_a_checkpoint_speaking_another_prompt_style_is_refused(stored_base, artifact_store):
    with pytest.raises(ValueError, match="prompt_style: 'qwen3vl' configured, but checkpoint tiny-base reads 'elements'"):
        with PolicyResource(kind="local", prompt_style="qwen3vl").acting_policy(stored_base, artifact_store):
            pass


def test_endpoint_kind_asks_the_server_for_the_base_and_serves_trained_weights_itself(stored_base, artifact_store):
    """A trained checkpoint of a served model is served the same way (over HTTP) for as long as it acts."""
    resource = PolicyResource(kind="endpoint", model="openai/tiny", api_base="http://127.0.0.1:9/v1",
                              max_new_tokens=8)
    with resource.acting_policy(stored_base, artifact_store) as base:
        assert isinstance(base, EndpointPolicy) and base.client.config.api_base == "http://127.0.0.1:9/v1"
    trained = stored_base.trained_from("hifpo", "hifpo:x", stored_base.uri, steps=3)
    with resource.acting_policy(trained, artifact_store) as served:
        assert isinstance(served, EndpointPolicy) and served.client.config.api_base != "http://127.0.0.1:9/v1"
        output = served.act(make_observation(), "Go back")
        assert output.raw_text  # answered by the project's own server for the trained weights
        url = served.client.config.api_base
    with pytest.raises(OSError):  # the server is gone once the policy is done
        urllib.request.urlopen(f"{url}/models", timeout=2)


def test_a_configured_checkpoint_is_resolved_and_missing_ones_are_named(tiny_checkpoint, tmp_path):
    assert PolicyResource(checkpoint=str(tiny_checkpoint)).configured_weights() == tiny_checkpoint.resolve()
    assert PolicyResource().configured_weights() is None
    with pytest.raises(ValueError, match="no transformers model at"):
        PolicyResource(checkpoint=str(tmp_path)).configured_weights()
    with pytest.raises(ValueError, match="neither a directory nor a model in the local Hugging Face cache"):
        PolicyResource(checkpoint="no-such-org/no-such-model").configured_weights()


def test_rollouts_refuse_identical_attempts(tmp_path):
    """Without hints, a greedy policy would repeat attempt 1 K times: a config error, not K copies."""
    import polars as pl

    from assets.rollouts import RolloutAssetConfig, rollouts
    from resources.environment import SimulatorResource
    from resources.llm import LLMResource
    from resources.storage import ArtifactStore, StorageLocation

    location = StorageLocation(root=str(tmp_path))
    context = dg.build_asset_context(partition_key="x")
    with pytest.raises(ValueError, match="use_hints=false with a greedy policy .* rollouts.temperature > 0"):
        rollouts(context, RolloutAssetConfig(use_hints=False), curriculum_tasks=pl.DataFrame(),
                 base_policy=Checkpoint(version="unused", uri="unused", prompt_style="elements", method="base"),
                 simulator=SimulatorResource(), policy=PolicyResource(kind="local"),
                 llm=LLMResource(model="openai/x"), storage=location, artifact_store=ArtifactStore(location=location))


def test_endpoint_kind_acts_inside_a_dagster_asset():
    reply = '{"type": "system_button", "args": {"button": "back"}}'

    base = Checkpoint(version="served", uri="unused", prompt_style="qwen3vl", method="base")

    @dg.asset
    def one_step(policy: PolicyResource) -> str:
        with policy.acting_policy(base, artifact_store=None) as acting:
            return acting.act(make_observation(), "Go back").raw_text

    with OpenAICompatibleServer(fixed(reply)) as server:
        resource = PolicyResource(kind="endpoint", model="openai/tiny", api_base=server.base_url,
                                  prompt_style="qwen3vl")
        result = dg.materialize([one_step], resources={"policy": resource})

    assert result.success
    assert result.output_for_node("one_step") == reply
    assert len(server.requests) == 1


def test_bad_launch_config_fails_naming_the_field():
    @dg.asset
    def kind_of_policy(policy: PolicyResource) -> str:
        return policy.kind

    resources = {"policy": PolicyResource.configure_at_launch()}
    good = dg.materialize([kind_of_policy], resources=resources, run_config={
        "resources": {"policy": {"config": {"kind": "endpoint", "model": "openai/m", "prompt_style": "qwen3vl"}}}})
    assert good.output_for_node("kind_of_policy") == "endpoint"

    with pytest.raises(dg.DagsterInvalidConfigError, match="prompt_style"):
        dg.materialize([kind_of_policy], resources=resources,
                       run_config={"resources": {"policy": {"config": {"prompt_style": "chatml"}}}})
    with pytest.raises(dg.DagsterResourceFunctionError) as info:
        dg.materialize([kind_of_policy], resources=resources,
                       run_config={"resources": {"policy": {"config": {"kind": "endpoint"}}}})
    assert "model: required when kind is 'endpoint'" in str(info.value.__cause__)
