"""A checkpoint directory's config and weight files, their digests, and the check that they are the
files its trainer wrote (the digests `manifest.json` records; `training.trainers.manifest` writes it).

Loading by path (a checkpoint outside the artifact store, whose marker holds its own digests) goes
through `verify_weights` first, so a flipped byte or a truncated safetensors file is refused naming
the file instead of being loaded as different weights.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pyarrow.fs as pafs

from ops.data.stored_files import DamagedFileError, check_digest, file_sha256

log = logging.getLogger(__name__)

MANIFEST_FILE = "manifest.json"
WEIGHT_SUFFIXES = (".safetensors", ".bin")
# not weights: transformers' Trainer pickles its arguments, temporary output_dir included, beside them
NOT_WEIGHTS = frozenset({"training_args.bin"})


def weight_files(directory: str | Path) -> list[Path]:
    """A model directory's config and weight files (what defines its weights), sorted."""
    root = Path(directory)
    return sorted(p for p in root.rglob("*") if p.is_file() and p.name not in NOT_WEIGHTS
                  and (p.suffix in WEIGHT_SUFFIXES or p.name == "config.json"))


def weight_digests(directory: str | Path) -> dict[str, str]:
    """sha256 of each of `weight_files`, by path relative to `directory`."""
    root = Path(directory)
    return {str(p.relative_to(root)): _sha256(p) for p in weight_files(root)}


def _sha256(path: Path) -> str:
    return file_sha256(pafs.LocalFileSystem(), str(path))


# directory -> (manifest, sizes and mtimes) of its last successful check in this process: a file
# changed since (rewritten, truncated, replaced) has another mtime or size and is hashed again
_verified: dict[str, tuple[bytes, tuple[tuple[str, int, int], ...]]] = {}


def verify_weights(checkpoint_dir: str | Path) -> None:
    """Check a checkpoint directory's config and weight files against the digests its manifest
    recorded; raises `DamagedFileError` naming the first file that differs, is missing, or is not
    recorded. A directory without `manifest.json` (a configured model, the bundled base) has no
    record to check against and passes; so, with a warning, does a manifest written before digests
    were recorded."""
    root = Path(checkpoint_dir)
    path = root / MANIFEST_FILE
    if not path.is_file():
        return
    raw = path.read_bytes()
    recorded = json.loads(raw).get("weights")
    if not recorded:
        log.warning("%s records no weight digests (written before they were recorded): weights not verified", path)
        return
    remedy = f"the checkpoint {root} is damaged or was changed after training; retrain or restore it"
    present = {str(p.relative_to(root)): p for p in weight_files(root)}
    missing = sorted(set(recorded) - set(present))
    if missing:
        raise DamagedFileError(f"{root / missing[0]}: listed in {path} but missing; {remedy}")
    stats = tuple((rel, p.stat().st_size, p.stat().st_mtime_ns) for rel, p in sorted(present.items()))
    if _verified.get(str(root)) == (raw, stats):
        return
    for rel, file in sorted(present.items()):
        check_digest(str(file), _sha256(file), recorded.get(rel), remedy)
    _verified[str(root)] = (raw, stats)
