"""The local runner reuses shared assets only while their data is still in storage."""

import shutil

import dagster as dg

from assets.base_policy import base_policy
from pipelines.local_run import run_experiment
from pipelines.resources import resources_for


def _shared_probe(code_version: str) -> dg.AssetsDefinition:
    @dg.asset(name="probe", code_version=code_version)
    def probe() -> dict:
        return {"code_version": code_version}

    return probe


def test_a_shared_asset_whose_files_were_deleted_is_materialized_again(tmp_path, monkeypatch):
    monkeypatch.setenv("MOBILEFORGE_STORAGE_ROOT", str(tmp_path))
    resources = resources_for("local")
    instance = dg.DagsterInstance.ephemeral()
    probe = _shared_probe("1")
    for expected_runs in (1, 0):  # first run materializes, the second reuses
        lines: list[str] = []
        run_experiment([probe], [], resources, "x", instance=instance, log=lines.append)
        assert sum("shared: probe" in line for line in lines) == expected_runs
    shutil.rmtree(tmp_path / "_shared" / "probe")  # e.g. storage wiped, DAGSTER_HOME kept
    lines = []
    run_experiment([probe], [], resources, "x", instance=instance, log=lines.append)
    assert sum("shared: probe" in line for line in lines) == 1
    assert (tmp_path / "_shared" / "probe").is_dir()


def test_a_shared_asset_stored_by_another_code_version_is_materialized_again(tmp_path, monkeypatch):
    monkeypatch.setenv("MOBILEFORGE_STORAGE_ROOT", str(tmp_path))
    resources = resources_for("local")
    instance = dg.DagsterInstance.ephemeral()
    for version, expected_runs in (("1", 1), ("1", 0), ("2", 1), ("2", 0)):
        lines: list[str] = []
        run_experiment([_shared_probe(version)], [], resources, "x", instance=instance, log=lines.append)
        assert sum("shared: probe" in line for line in lines) == expected_runs, (version, lines)


def test_the_base_policy_code_version_follows_the_bundled_checkpoint(tmp_path):
    from training.base.bundled import BUNDLED_DIR, bundled_digest

    assert base_policy.code_versions_by_key[base_policy.key].endswith(bundled_digest())
    copy = tmp_path / "base"
    shutil.copytree(BUNDLED_DIR, copy)
    assert bundled_digest(copy) == bundled_digest()
    (copy / "model.safetensors").write_bytes(b"other weights")
    assert bundled_digest(copy) != bundled_digest()
