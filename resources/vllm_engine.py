"""vLLM as the acting engine of trained checkpoints (PolicyResource engine='vllm', kind='endpoint').

A checkpoint that is a LoRA adapter (a PEFT directory: `adapter_config.json`) is loaded at run time
into the vLLM server that serves the base (`POST /v1/load_lora_adapter`; the server runs with
`--enable-lora` and VLLM_ALLOW_RUNTIME_LORA_UPDATING=True and reads the adapter's path on a shared
volume), then asked by its adapter name. A full checkpoint gets a vLLM server of its own for as long
as it acts: the command rendered from `vllm_command` (`vllm serve {weights} --served-model-name
{name} --port {port} ...`), started, waited for (`GET /v1/models` lists it) and stopped. vLLM is an
optional dependency (the `gpu` extra): nothing here imports it.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from training.methods.launched import free_port

VLLM_SERVE = ("vllm", "serve", "{weights}", "--served-model-name", "{name}", "--host", "127.0.0.1",
              "--port", "{port}", "--dtype", "auto", "--max-model-len", "16384")
PLACEHOLDERS = ("{weights}", "{name}", "{port}")


def is_adapter(weights: Path) -> bool:
    """Whether a checkpoint directory is a LoRA adapter (loaded onto the base) rather than a full model."""
    return (weights / "adapter_config.json").is_file()


def render_command(template: Sequence[str], weights: Path, name: str, port: int) -> list[str]:
    """`template` with {weights}, {name} and {port} filled in."""
    values = {"{weights}": str(weights), "{name}": name, "{port}": str(port)}
    rendered = []
    for part in template:
        for placeholder, value in values.items():
            part = part.replace(placeholder, value)
        rendered.append(part)
    return rendered


def load_lora_adapter(api_base: str, name: str, path: Path, api_key: str | None = None,
                      timeout_s: float = 120.0) -> None:
    """Load the adapter at `path` into the vLLM server at `api_base` (…/v1) under `name`; a clear
    error when the server refuses (no --enable-lora, runtime updates off, a path it cannot read)."""
    import httpx  # only where a policy acts through vLLM: the graph loads without it

    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    response = httpx.post(f"{api_base.rstrip('/')}/load_lora_adapter", json={"lora_name": name, "lora_path": str(path)},
                          headers=headers, timeout=timeout_s)
    if response.status_code != 200 and "already" not in response.text:
        raise RuntimeError(f"vLLM at {api_base} did not load LoRA adapter {name} from {path} "
                           f"({response.status_code}: {response.text[:300]}); it needs --enable-lora and "
                           "VLLM_ALLOW_RUNTIME_LORA_UPDATING=True, and the adapter on a path it can read")


@contextmanager
def served_checkpoint(template: Sequence[str], weights: Path, name: str, startup_timeout_s: float) -> Iterator[str]:
    """A server for the full checkpoint at `weights` started from `template` (see `render_command`) for the
    block's duration; its base URL (…/v1). A server that exits or does not list `name` in time raises,
    with the last lines it printed."""
    import httpx

    port = free_port()
    command = render_command(template, weights, name, port)
    log = Path(os.environ.get("TMPDIR", "/tmp")) / f"mobileforge-vllm-{port}.log"
    with log.open("w") as output:
        process = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT)
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + startup_timeout_s
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"{' '.join(command)} exited with {process.returncode}:\n{log.read_text()[-2000:]}")
            try:
                listed = httpx.get(f"{base_url}/models", timeout=2.0).json().get("data", [])
                if any(model.get("id") == name for model in listed):
                    break
            except (httpx.HTTPError, ValueError):
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"{' '.join(command)} did not serve {name} within {startup_timeout_s:.0f} s:\n"
                                   f"{log.read_text()[-2000:]}")
            time.sleep(0.5)
        yield base_url
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.unlink(missing_ok=True)
