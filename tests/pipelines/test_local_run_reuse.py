"""The local runner reuses shared assets only while their data is still in storage."""

import shutil

import dagster as dg

from assets.base_policy import base_policy
from pipelines.local_run import run_experiment
from pipelines.resources import resources_for


def test_a_shared_asset_whose_files_were_deleted_is_materialized_again(tmp_path, monkeypatch):
    monkeypatch.setenv("MOBILEFORGE_STORAGE_ROOT", str(tmp_path))
    resources = resources_for("local")
    instance = dg.DagsterInstance.ephemeral()
    config = {"base_policy": {"max_steps": 1}}
    for expected_runs in (1, 0):  # first run materializes, the second reuses
        lines: list[str] = []
        run_experiment([base_policy], [], resources, "x", config, instance=instance, log=lines.append)
        assert sum("shared: base_policy" in line for line in lines) == expected_runs
    shutil.rmtree(tmp_path / "_shared" / "base_policy")  # e.g. storage wiped, DAGSTER_HOME kept
    lines = []
    run_experiment([base_policy], [], resources, "x", config, instance=instance, log=lines.append)
    assert sum("shared: base_policy" in line for line in lines) == 1
    assert (tmp_path / "_shared" / "base_policy").is_dir()
