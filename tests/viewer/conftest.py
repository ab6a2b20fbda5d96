"""Fixtures of the viewer tests: a small store (tests/viewer/small_store.py), the viewer served by
uvicorn on a free port, and Debian's chromium for the browser test — installed with apt-get here
when missing (the test machine runs as root; elsewhere install it first: `apt-get install chromium`)."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from mobileforge.viewer.server import serving_in_background
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


@pytest.fixture(scope="session")
def viewer_url(small_store) -> Iterator[str]:
    with serving_in_background(small_store[0]) as url:
        yield url


@pytest.fixture(scope="session")
def screens_dir(tmp_path_factory) -> Path:
    """Where the browser test saves its screenshots: $MOBILEFORGE_VIEWER_SCREENS (e.g. docs/screens) or a temp dir."""
    configured = os.environ.get("MOBILEFORGE_VIEWER_SCREENS")
    return Path(configured) if configured else tmp_path_factory.mktemp("viewer-screens")
