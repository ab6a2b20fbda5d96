"""A checkpoint is known by its weights: the digest follows config and weight bytes, not the
trainer's pickled arguments (which hold a temporary output path) or where the files lie."""

from training.methods.checkpoint import weights_digest


def _checkpoint(directory, weights: bytes, training_args: bytes):
    directory.mkdir()
    (directory / "config.json").write_text('{"hidden_size": 64}')
    (directory / "model.safetensors").write_bytes(weights)
    (directory / "training_args.bin").write_bytes(training_args)
    return directory


def test_the_digest_ignores_the_trainer_arguments_and_follows_the_weights(tmp_path):
    one = _checkpoint(tmp_path / "one", b"weights", b"output_dir=/tmp/abc")
    two = _checkpoint(tmp_path / "two", b"weights", b"output_dir=/tmp/xyz")
    other = _checkpoint(tmp_path / "other", b"weightz", b"output_dir=/tmp/abc")
    assert weights_digest(one) == weights_digest(two) != weights_digest(other)
