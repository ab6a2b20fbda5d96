"""Fixtures of the viewer tests: a small store (tests/mobileforge/viewer/small_store.py), the viewer served by
uvicorn on a free port, and Debian's chromium for the browser test (scripts/setup.sh installs it)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from mobileforge.viewer.server import serving_in_background
from resources.storage import StorageLocation
from tests.mobileforge.viewer.small_store import build_small_store

CHROMIUM = "/usr/bin/chromium"


@pytest.fixture(scope="session")
def small_store(tmp_path_factory) -> tuple[StorageLocation, dict]:
    location = StorageLocation(root=str(tmp_path_factory.mktemp("viewer-store")))
    return location, build_small_store(location)


@pytest.fixture(scope="session")
def chromium() -> str:
    """The path of Debian's chromium (scripts/setup.sh installs it)."""
    if not os.path.exists(CHROMIUM):
        pytest.fail(f"{CHROMIUM} is missing: run scripts/setup.sh as root, or apt-get install chromium")
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
