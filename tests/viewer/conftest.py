"""Fixtures of the viewer tests: a small store (tests/viewer/small_store.py), the viewer served by
uvicorn on a free port, and Debian's chromium for the browser test — installed with apt-get here
when missing (the test machine runs as root; elsewhere install it first: `apt-get install chromium`)."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import uvicorn

from mobileforge.viewer.app import create_app
from mobileforge.viewer.store import ViewerStore
from resources.storage import StorageLocation
from tests.viewer.small_store import build_small_store

CHROMIUM = "/usr/bin/chromium"
APT_TIMEOUT_S = 900


@pytest.fixture(scope="session")
def small_store(tmp_path_factory) -> tuple[StorageLocation, dict]:
    location = StorageLocation(root=str(tmp_path_factory.mktemp("viewer-store")))
    return location, build_small_store(location)


@pytest.fixture(scope="session")
def chromium() -> str:
    """The path of Debian's chromium, installed by apt-get when it is missing."""
    if not os.path.exists(CHROMIUM):
        apt = shutil.which("apt-get")
        if apt is None or os.geteuid() != 0:
            pytest.fail(f"{CHROMIUM} is missing and cannot be installed here (needs apt-get as root): "
                        "install Debian's chromium package")
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        for command in ([apt, "update", "-qq"], [apt, "install", "-y", "-qq", "chromium"]):
            done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=APT_TIMEOUT_S)
            if done.returncode != 0:
                pytest.fail(f"{' '.join(command)} failed ({done.returncode}): {done.stderr[-2000:]}")
    return CHROMIUM


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def serve(location: StorageLocation) -> Iterator[str]:
    """The viewer over `location`, served by uvicorn in a thread until the generator closes; yields its URL."""
    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(create_app(ViewerStore(location)), host="127.0.0.1", port=port,
                                           log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the viewer did not start within 30 s")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


@pytest.fixture(scope="session")
def viewer_url(small_store) -> Iterator[str]:
    yield from serve(small_store[0])


@pytest.fixture(scope="session")
def screens_dir(tmp_path_factory) -> Path:
    """Where the browser test saves its screenshots: $MOBILEFORGE_VIEWER_SCREENS (e.g. docs/screens) or a temp dir."""
    configured = os.environ.get("MOBILEFORGE_VIEWER_SCREENS")
    return Path(configured) if configured else tmp_path_factory.mktemp("viewer-screens")
