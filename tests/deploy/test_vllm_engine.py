"""vLLM as the acting engine of trained checkpoints, without vLLM (never installed here): the
commands and requests the project would send it, checked as rendered, and the project's own
OpenAI-compatible server started from the same command template playing vLLM's role."""

import shutil
import sys

import pytest
from pydantic import ValidationError

from ops.agent.policy import EndpointPolicy
from resources.policy import PolicyResource
from resources.storage import ArtifactStore, StorageLocation
from resources.vllm_engine import VLLM_SERVE, render_command
from tests.support.observations import make_observation
from tests.support.openai_server import OpenAICompatibleServer, fixed
from training.base.bundled import BUNDLED_DIR
from training.methods.checkpoint import Checkpoint

BASE = Checkpoint(version="base:x", uri=f"file://{BUNDLED_DIR}", prompt_style="elements", method="base")
# the project's server, started as vLLM would be: the same placeholders, the same OpenAI API
PROJECT_SERVER = [sys.executable, "-m", "mobileforge.cli.main", "serve", "{weights}", "--model-name", "{name}",
                  "--port", "{port}", "--max-new-tokens", "8"]


@pytest.fixture
def artifact_store(tmp_path):
    return ArtifactStore(location=StorageLocation(root=str(tmp_path / "storage")))


def test_the_default_command_is_vllm_serve_of_the_checkpoint_under_its_name(tmp_path):
    command = render_command(VLLM_SERVE, tmp_path / "rft", "rft-abc", 8123)
    assert command[:3] == ["vllm", "serve", str(tmp_path / "rft")]
    assert command[command.index("--served-model-name") + 1] == "rft-abc"
    assert command[command.index("--port") + 1] == "8123"


def test_engine_vllm_needs_a_served_base_and_a_full_template():
    with pytest.raises(ValidationError, match="set kind: endpoint"):
        PolicyResource(engine="vllm")
    with pytest.raises(ValidationError, match="vllm_command: must contain"):
        PolicyResource(kind="endpoint", model="openai/base", engine="vllm", vllm_command=["vllm", "serve"])


def test_an_adapter_checkpoint_is_loaded_into_the_base_server_and_asked_by_its_name(tmp_path, artifact_store):
    adapter = tmp_path / "adapter"
    adapter.mkdir()
    (adapter / "adapter_config.json").write_text('{"peft_type": "LORA", "r": 8}')
    trained = BASE.trained_from("rft", "rft:r2", f"file://{adapter}", steps=4)
    with OpenAICompatibleServer(fixed('{"action": "back"}')) as vllm:
        resource = PolicyResource(kind="endpoint", model="openai/base", api_base=vllm.base_url, engine="vllm",
                                  prompt_style="elements", max_new_tokens=8)
        with resource.acting_policy(trained, artifact_store) as policy:
            assert isinstance(policy, EndpointPolicy)
            policy.act(make_observation(), "Go back")
        load, chat = vllm.requests
        assert load.path == "/v1/load_lora_adapter"
        assert load.body == {"lora_name": "rft-r2", "lora_path": str(adapter)}
        assert chat.path == "/v1/chat/completions" and chat.body["model"] == "rft-r2"


def test_a_full_checkpoint_gets_a_server_from_the_command_template_for_as_long_as_it_acts(artifact_store):
    trained = BASE.trained_from("hifpo", "hifpo:x", BASE.uri, steps=3)
    resource = PolicyResource(kind="endpoint", model="openai/base", api_base="http://127.0.0.1:9/v1", engine="vllm",
                              prompt_style="elements", max_new_tokens=8, vllm_command=PROJECT_SERVER,
                              vllm_startup_s=120)
    with resource.acting_policy(trained, artifact_store) as policy:
        url = policy.client.config.api_base
        assert url != "http://127.0.0.1:9/v1" and policy.client.config.model == "openai/hifpo-x"
        assert policy.act(make_observation(), "Go back").raw_text
    import httpx

    with pytest.raises(httpx.TransportError):  # stopped with the policy
        httpx.get(f"{url}/models", timeout=2)


def test_a_server_that_exits_is_reported_with_its_output(artifact_store, tmp_path):
    trained = BASE.trained_from("hifpo", "hifpo:y", BASE.uri, steps=3)
    broken = [shutil.which("false") or "false", "{weights}", "{name}", "{port}"]
    resource = PolicyResource(kind="endpoint", model="openai/base", engine="vllm", prompt_style="elements",
                              vllm_command=broken)
    with pytest.raises(RuntimeError, match="exited with 1"):
        with resource.acting_policy(trained, artifact_store):
            pass
