"""The manifest stored as `manifest.json` inside every trained checkpoint directory.

It says what the checkpoint is: the method, the base checkpoint it started from, the exact
training data (content fingerprint), the full config, the final metrics and reward curves,
when it was made and with which library versions, and the sha256 of each config and weight file,
which `training.models.weight_files.verify_weights` checks wherever a checkpoint directory is
loaded by path.
"""

from __future__ import annotations

import json
import platform
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

from training.models.weight_files import MANIFEST_FILE, weight_digests

MANIFEST_VERSION = 1
_LIBRARIES = ("torch", "transformers", "trl", "datasets", "accelerate")


def library_versions() -> dict[str, str]:
    """Versions of Python and the training libraries in this environment."""
    versions = {"python": platform.python_version()}
    for name in _LIBRARIES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "not installed"
    return versions


@dataclass(frozen=True)
class Manifest:
    method: str  # the training method that wrote it (a name of training.methods.registry, or "sft")
    base_checkpoint: str
    dataset: dict[str, Any]  # {"fingerprint", "rows", "path" (when loaded from disk), ...}
    config: dict[str, Any]
    metrics: dict[str, Any]
    curves: dict[str, list[list[float]]]  # name -> [[step, value], ...]
    details: dict[str, Any] = field(default_factory=dict)  # a method's own record (HiFPO: history_alignment)
    weights: dict[str, str] = field(default_factory=dict)  # sha256 by config/weight file; write_manifest fills it
    created_at: str = field(default_factory=lambda: datetime.now(UTC).isoformat(timespec="seconds"))
    versions: dict[str, str] = field(default_factory=library_versions)
    manifest_version: int = MANIFEST_VERSION


def write_manifest(checkpoint_dir: str | Path, manifest: Manifest) -> Path:
    """Write `manifest.json` into `checkpoint_dir`, with the digests of its config and weight files as
    they are now (write it after the weights); returns its path."""
    manifest = replace(manifest, weights=weight_digests(checkpoint_dir))
    path = Path(checkpoint_dir) / MANIFEST_FILE
    path.write_text(json.dumps(asdict(manifest), indent=2, sort_keys=True, default=str))
    return path


def read_manifest(checkpoint_dir: str | Path) -> Manifest:
    """Read the manifest of a trained checkpoint; a clear error when there is none."""
    path = Path(checkpoint_dir) / MANIFEST_FILE
    if not path.is_file():
        raise FileNotFoundError(f"{checkpoint_dir} has no {MANIFEST_FILE}: not a trained checkpoint")
    data = json.loads(path.read_text())
    if data.get("manifest_version") != MANIFEST_VERSION:
        raise ValueError(
            f"{path}: manifest version {data.get('manifest_version')}, expected {MANIFEST_VERSION}"
        )
    return Manifest(**data)
