"""litellm must not reach the network when imported or called through `ops.agent.llm`."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.network import ExternalNetworkAccess, loopback_only

ROOT = Path(__file__).resolve().parents[3]

SCRIPT = """
from tests.support.network import loopback_only
from tests.support.openai_server import OpenAICompatibleServer, fixed
with loopback_only() as attempts:
    from ops.agent.llm import LLMClient, LLMConfig
    with OpenAICompatibleServer(fixed("{}")) as server:
        LLMClient(LLMConfig(model="openai/m", api_base=server.base_url)).complete([{"role": "user", "content": "hi"}])
print(attempts)
"""


def test_litellm_import_and_call_stay_on_loopback():
    # A fresh interpreter, so litellm's import-time behaviour is what gets checked; without
    # ops.agent.llm's LITELLM_LOCAL_MODEL_COST_MAP it would try raw.githubusercontent.com here.
    env = {k: v for k, v in os.environ.items() if k != "LITELLM_LOCAL_MODEL_COST_MAP"}
    env["PYTHONPATH"] = str(ROOT)
    result = subprocess.run([sys.executable, "-c", SCRIPT], cwd=ROOT, env=env, capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip().splitlines()[-1] == "[]"


def test_guard_blocks_and_records_external_hosts():
    with loopback_only() as attempts:
        with pytest.raises(ExternalNetworkAccess):
            socket.getaddrinfo("example.com", 443)
        with pytest.raises(ExternalNetworkAccess):
            socket.create_connection(("192.0.2.1", 80), timeout=0.1)
    assert attempts == ["example.com", "192.0.2.1"]
