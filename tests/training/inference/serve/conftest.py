"""One `mobileforge serve` of the bundled base for the tests of this folder, started as a user
starts it (a subprocess), with a smaller memory budget than the default so its bound is tight."""

from __future__ import annotations

import re
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest

from training.base.bundled import BUNDLED_DIR
from training.methods.launched import free_port

REPO = Path(__file__).resolve().parents[4]
MAX_BODY_MB = 48


@dataclass(frozen=True)
class Served:
    base_url: str
    port: int
    pid: int
    memory_bound_bytes: int  # what the server states it holds for requests at most



@pytest.fixture(scope="session")
def served() -> Served:
    port = free_port()
    process = subprocess.Popen([sys.executable, "-m", "mobileforge.cli.main", "serve", str(BUNDLED_DIR),
                                "--port", str(port), "--model-name", "tiny-base", "--max-body-mb", str(MAX_BODY_MB),
                                "--queue-mb", "64"],
                               cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    base = f"http://127.0.0.1:{port}/v1"
    banner = ""
    deadline = time.monotonic() + 300
    while "serving tiny-base" not in banner:
        line = process.stdout.readline()
        if not line or time.monotonic() > deadline:
            process.kill()
            pytest.fail(f"serve did not start: {banner}{process.stdout.read()}")
        banner += line
    urllib.request.urlopen(f"{base}/models", timeout=30).close()
    bound = re.search(r"memory for requests at most (\d+) MiB", banner)
    assert bound, banner
    yield Served(base, port, process.pid, int(bound.group(1)) * 1024 * 1024)
    process.terminate()
    process.wait(timeout=60)
