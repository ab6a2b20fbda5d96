"""Checkpoint weights loaded by path are the files their trainer wrote: `manifest.json` records each
config and weight file's sha256, and a flipped, truncated, missing or unrecorded file is refused by name
before anything is loaded (issue #41)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ops.data.stored_files import DamagedFileError
from training.inference.local_policy import LocalPolicy
from training.methods.checkpoint import weights_digest
from training.models.weight_files import verify_weights, weight_files
from training.trainers.manifest import Manifest, read_manifest, write_manifest
from training.trainers.runs import require_local_checkpoint


@pytest.fixture
def checkpoint(tmp_path) -> Path:
    directory = tmp_path / "checkpoint"
    (directory / "shards").mkdir(parents=True)
    (directory / "config.json").write_text(json.dumps({"model_type": "qwen2_vl"}))
    (directory / "model.safetensors").write_bytes(bytes(range(256)) * 64)
    (directory / "shards" / "extra.bin").write_bytes(b"\x01" * 1000)
    (directory / "training_args.bin").write_bytes(b"pickled arguments")  # not weights
    write_manifest(directory, Manifest(method="sft", base_checkpoint="base", dataset={}, config={}, metrics={},
                                       curves={}))
    return directory


def test_the_manifest_records_the_digest_of_each_config_and_weight_file(checkpoint):
    recorded = read_manifest(checkpoint).weights
    assert sorted(recorded) == ["config.json", "model.safetensors", "shards/extra.bin"]
    assert [str(p.relative_to(checkpoint)) for p in weight_files(checkpoint)] == sorted(recorded)
    verify_weights(checkpoint)  # intact: passes
    assert len(weights_digest(checkpoint)) == 12


def _flip(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x01
    path.write_bytes(bytes(data))


@pytest.mark.parametrize(("damage", "named", "says"), [
    (lambda d: _flip(d / "model.safetensors"), "model.safetensors", "is damaged: its sha256 is"),
    (lambda d: (d / "model.safetensors").write_bytes((d / "model.safetensors").read_bytes()[:1000]),
     "model.safetensors", "is damaged: its sha256 is"),
    (lambda d: (d / "shards" / "extra.bin").unlink(), "shards/extra.bin", "listed in"),
    (lambda d: (d / "model-00002.safetensors").write_bytes(b"\x00" * 10), "model-00002.safetensors",
     "no content digest was recorded"),
])
def test_a_damaged_weight_file_is_refused_naming_it(checkpoint, damage, named, says):
    verify_weights(checkpoint)  # checked once while intact: the damage after it must still be seen
    damage(checkpoint)
    with pytest.raises(DamagedFileError, match=says) as caught:
        verify_weights(checkpoint)
    assert str(checkpoint / named) in str(caught.value)


def test_loading_by_path_refuses_damaged_weights_before_reading_them(checkpoint):
    _flip(checkpoint / "model.safetensors")
    for load in (lambda: LocalPolicy(checkpoint), lambda: require_local_checkpoint(checkpoint)):
        with pytest.raises(DamagedFileError, match="model.safetensors is damaged"):
            load()


def test_a_directory_without_a_manifest_has_nothing_to_check(tmp_path):
    (tmp_path / "config.json").write_text("{}")
    verify_weights(tmp_path)
