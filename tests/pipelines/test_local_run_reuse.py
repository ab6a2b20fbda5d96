"""The local runner plans a stage of shared (unpartitioned) assets only when their stored copy is
missing, gone from storage, or made by another code version; per-app stages run every app."""

import shutil

import dagster as dg

from assets.base_policy import base_policy
from pipelines.definitions import defs
from pipelines.run.config_check import stage_run_config
from pipelines.run.stored import stage_partitions
from pipelines.start_point import StagePart
from pipelines.resources import resources_for


def _shared_stage(code_version: str, resources: dict) -> dg.JobDefinition:
    @dg.asset(name="probe", code_version=code_version)
    def probe() -> dict:
        return {"code_version": code_version}

    stage = dg.define_asset_job("policy", selection=[probe])
    return dg.Definitions(assets=[probe], jobs=[stage], resources=resources).resolve_job_def("policy")


def _materialize(job: dg.JobDefinition, instance: dg.DagsterInstance) -> None:
    assert job.execute_in_process(instance=instance).success


def test_a_shared_stage_runs_again_when_its_stored_files_are_gone(tmp_path, monkeypatch):
    monkeypatch.setenv("MOBILEFORGE_STORAGE_ROOT", str(tmp_path))
    resources = resources_for("local")
    instance = dg.DagsterInstance.ephemeral()
    job = _shared_stage("1", resources)
    stage = StagePart.whole(job)
    plan = lambda rebuild=False: stage_partitions(stage, instance, "x", rebuild, resources["io_manager"])  # noqa: E731
    assert plan() == [None]
    _materialize(job, instance)
    assert plan() == [] and plan(rebuild=True) == [None]
    shutil.rmtree(tmp_path / "_shared" / "probe")  # e.g. storage wiped, DAGSTER_HOME kept
    assert plan() == [None]


def test_a_shared_stage_runs_again_after_a_code_version_change(tmp_path, monkeypatch):
    monkeypatch.setenv("MOBILEFORGE_STORAGE_ROOT", str(tmp_path))
    resources = resources_for("local")
    instance = dg.DagsterInstance.ephemeral()
    _materialize(_shared_stage("1", resources), instance)
    for code_version, planned in (("1", []), ("2", [None])):
        stage = StagePart.whole(_shared_stage(code_version, resources))
        assert stage_partitions(stage, instance, "x", False, resources["io_manager"]) == planned


def test_partitioned_stages_run_every_app_or_the_experiment():
    from phonesim.apps import load_apps
    from pipelines.resources import resources_for
    from resources.experiment import sync_app_partitions

    instance = dg.DagsterInstance.ephemeral()
    sync_app_partitions(instance, resources_for("local")["simulator"].apps())  # as `mobileforge run` does
    discovery = stage_partitions(StagePart.whole(defs.resolve_job_def("discovery")), instance, "x", False, None)
    assert sorted(k.keys_by_dimension["app"] for k in discovery) == sorted(load_apps())
    assert {k.keys_by_dimension["experiment"] for k in discovery} == {"x"}
    assert stage_partitions(StagePart.whole(defs.resolve_job_def("evaluation")), instance, "x", False, None) == ["x"]


def test_a_stage_gets_only_its_own_assets_config_and_info_logs():
    config = {"rollouts": {"attempts": 2}, "benchmark_results": {"k": 2}}
    run_config = stage_run_config(defs.resolve_job_def("evaluation"), config)
    assert run_config["ops"] == {"benchmark_results": {"config": {"k": 2}}}
    assert run_config["loggers"]["console"]["config"]["log_level"] == "INFO"


def test_the_base_policy_code_version_follows_the_bundled_checkpoint(tmp_path):
    from training.base.bundled import BUNDLED_DIR, bundled_digest

    assert base_policy.code_versions_by_key[base_policy.key].endswith(bundled_digest())
    copy = tmp_path / "base"
    shutil.copytree(BUNDLED_DIR, copy)
    assert bundled_digest(copy) == bundled_digest()
    (copy / "model.safetensors").write_bytes(b"other weights")
    assert bundled_digest(copy) != bundled_digest()
