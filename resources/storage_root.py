"""Where the storage root is, from the environment alone (no Dagster, no pyarrow), so the CLI can
look at an experiment's lock before it imports the graph."""

from __future__ import annotations

import os
from pathlib import Path

STORAGE_ROOT_ENV = "MOBILEFORGE_STORAGE_ROOT"


def default_storage_root() -> str:
    """`$MOBILEFORGE_HOME/storage`, else `<repo>/.mobileforge/storage`."""
    home = os.environ.get("MOBILEFORGE_HOME")
    base = Path(home) if home else Path(__file__).resolve().parents[1] / ".mobileforge"
    return str(base / "storage")


def configured_storage_root() -> str:
    """The root every profile's `StorageLocation` uses: `$MOBILEFORGE_STORAGE_ROOT`, else the default."""
    return os.environ.get(STORAGE_ROOT_ENV) or default_storage_root()
