"""ArtifactStore on a local root: directories and HF datasets in, out, replaced, incomplete."""

import datasets
import pytest

from resources.storage import ARTIFACT_MARKER, ArtifactStore


def _make_dir(root, files):
    for rel, data in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return root


def _tree(root):
    return {str(p.relative_to(root)): p.read_bytes()
            for p in sorted(root.rglob("*")) if p.is_file() and p.name != ARTIFACT_MARKER}


def test_put_and_get_a_checkpoint_directory(location, tmp_path):
    store = ArtifactStore(location=location)
    files = {"config.json": b"{}", "model/weights.safetensors": b"\x01" * 64}
    source = _make_dir(tmp_path / "ckpt", files)

    uri = store.put_dir(source, "default/checkpoints/hifpo/run1")
    assert uri == store.uri_for("default/checkpoints/hifpo/run1")
    assert store.exists(uri) and store.exists("default/checkpoints/hifpo/run1")
    assert not store.exists("default/checkpoints/hifpo/run2")
    assert _tree(store.get_dir(uri, tmp_path / "out")) == files
    assert _tree(store.local_path(uri)) == files


def test_putting_the_same_key_replaces_the_directory(location, tmp_path):
    store = ArtifactStore(location=location)
    store.put_dir(_make_dir(tmp_path / "v1", {"old.bin": b"1", "keep.txt": b"a"}), "ckpt")
    uri = store.put_dir(_make_dir(tmp_path / "v2", {"keep.txt": b"b"}), "ckpt")
    assert _tree(store.local_path(uri)) == {"keep.txt": b"b"}


def test_incomplete_or_missing_artifacts_are_refused(location, tmp_path):
    store = ArtifactStore(location=location)
    uri = store.put_dir(_make_dir(tmp_path / "src", {"a": b"1"}), "partial")
    (store.local_path(uri) / ARTIFACT_MARKER).unlink()  # as if the upload died before the end
    with pytest.raises(FileNotFoundError, match="incomplete"):
        store.get_dir(uri, tmp_path / "out")
    with pytest.raises(NotADirectoryError):
        store.put_dir(tmp_path / "does-not-exist", "x")
    with pytest.raises(ValueError, match="artifact key part"):
        store.uri_for("../outside")


def test_hf_dataset_round_trip(location, tmp_path):
    store = ArtifactStore(location=location)
    dataset = datasets.Dataset.from_dict({"prompt": ["a", "b"], "reward": [0.5, 1.0]})
    uri = store.put_hf_dataset(dataset, "default/step_datasets/hifpo", tmp_path / "scratch")
    loaded = store.load_hf_dataset(uri)
    assert loaded.to_dict() == dataset.to_dict()
