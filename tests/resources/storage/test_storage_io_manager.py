"""ParquetIOManager on a local root, driven by real `dagster.materialize` runs."""


import json
from pathlib import Path

import dagster as dg
import polars as pl
import pytest

from ops.data.stored_files import write_atomic
from resources.experiment import (
    APPS_OF_EXPERIMENT,
    SHARED_EXPERIMENT,
    PartitionAddress,
    experiment_partitions,
    register_experiment,
)
from resources.storage import MANIFEST, StorageLocation
from tests.resources.storage.graph import ALL_ASSETS, APPS, experiment_by_app, materialize_experiment

TASKS = dg.AssetKey("curriculum_tasks")
TRANSITIONS = dg.AssetKey("exploration_transitions")


def test_experiments_are_stored_side_by_side(instance, io_manager):
    resources = {"io_manager": io_manager}
    materialize_experiment(instance, resources, "default", steps=2, step_budget=5)
    materialize_experiment(instance, resources, "ablation", steps=3, step_budget=9)

    default = io_manager.load(TASKS, PartitionAddress("default", "_"))
    ablation = io_manager.load(TASKS, PartitionAddress("ablation", "_"))
    assert default.get_column("step_budget").to_list() == [5, 5]
    assert ablation.get_column("step_budget").to_list() == [9, 9]
    for experiment, steps in (("default", 2), ("ablation", 3)):
        for app in APPS:
            frame = io_manager.load(TRANSITIONS, PartitionAddress(experiment, app))
            assert frame.get_column("app").unique().to_list() == [app]
            assert frame.height == steps


def test_downstream_reads_every_app_of_its_own_experiment(instance, io_manager):
    resources = {"io_manager": io_manager}
    materialize_experiment(instance, resources, "default")
    result = materialize_experiment(instance, resources, "ablation")
    tasks = result.output_for_node("curriculum_tasks")
    assert sorted(tasks.get_column("app").to_list()) == sorted(APPS)
    assert all(t.startswith("ablation-") for t in tasks.get_column("task_id").to_list())
    index = io_manager.load(dg.AssetKey("task_index"), PartitionAddress("ablation", "_"))
    assert index == {"experiment": "ablation",
                     "task_ids": tasks.get_column("task_id").to_list()}


def test_manifest_and_metadata_record_config_code_version_and_upstream(instance, io_manager):
    result = materialize_experiment(instance, {"io_manager": io_manager}, "ablation",
                                    step_budget=9, variation_type="parameter_change")
    manifest = io_manager.manifest(TASKS, PartitionAddress("ablation", "_"))
    lineage = manifest["lineage"]
    assert manifest["rows"] == 2 and manifest["experiment"] == "ablation"
    assert lineage["config"] == {"step_budget": 9, "variation_type": "parameter_change"}
    assert lineage["code_version"] == "curriculum-1"
    (upstream,) = lineage["upstream"]
    assert upstream["asset_key"] == "exploration_transitions"
    recorded = {p["partition"]: p for p in upstream["partitions"]}
    assert set(recorded) == {f"{app}|ablation" for app in APPS}
    for partition, entry in recorded.items():
        (record,) = instance.fetch_materializations(
            dg.AssetRecordsFilter(asset_key=TRANSITIONS, asset_partitions=[partition]),
            limit=1).records
        assert entry["run_id"] == record.run_id
        assert entry["data_version"] == record.asset_materialization.tags["dagster/data_version"]

    (mat,) = [m for m in result.asset_materializations_for_node("curriculum_tasks")]
    assert mat.metadata["config"].value == lineage["config"]
    assert mat.metadata["upstream"].value == lineage["upstream"]
    assert mat.metadata["code_version"].value == "curriculum-1"


def test_rematerializing_a_partition_replaces_it_and_leaves_others(instance, io_manager,
                                                                     location):
    resources = {"io_manager": io_manager}
    materialize_experiment(instance, resources, "default", step_budget=5)
    materialize_experiment(instance, resources, "ablation", step_budget=7)
    default_dir = Path(io_manager.partition_dir(TASKS, PartitionAddress("default", "_")))
    default_bytes = (default_dir / "data.parquet").read_bytes()

    materialize_experiment(instance, resources, "ablation", step_budget=11)

    ablation = io_manager.load(TASKS, PartitionAddress("ablation", "_"))
    assert ablation.get_column("step_budget").to_list() == [11, 11]
    assert (default_dir / "data.parquet").read_bytes() == default_bytes
    stored = sorted(p.name for p in Path(location.root_uri).rglob("*") if p.is_file())
    assert not [name for name in stored if name.startswith(".tmp-")]


def test_failed_write_keeps_the_previous_file(tmp_path):
    fs, _ = StorageLocation(root=str(tmp_path)).filesystem()
    target = f"{tmp_path}/a/data.bin"

    def good(path: str) -> None:
        with fs.open_output_stream(path) as out:
            out.write(b"old")

    def crashes_midway(path: str) -> None:
        with fs.open_output_stream(path) as out:
            out.write(b"partial")
        raise RuntimeError("disk full")

    write_atomic(fs, target, good)
    with pytest.raises(RuntimeError, match="disk full"):
        write_atomic(fs, target, crashes_midway)
    assert Path(target).read_bytes() == b"old"
    assert [p.name for p in Path(target).parent.iterdir()] == ["data.bin"]


def test_unpartitioned_assets_go_to_the_shared_directory(io_manager):
    @dg.asset
    def app_catalog() -> pl.DataFrame:
        return pl.DataFrame({"app": APPS})

    dg.materialize([app_catalog], resources={"io_manager": io_manager})
    frame = io_manager.load(dg.AssetKey("app_catalog"), PartitionAddress(SHARED_EXPERIMENT, "_"))
    assert frame.get_column("app").to_list() == APPS
    manifest_path = Path(io_manager.partition_dir(
        dg.AssetKey("app_catalog"), PartitionAddress(SHARED_EXPERIMENT, "_"))) / MANIFEST
    assert json.loads(manifest_path.read_text())["lineage"]["upstream"] == []


def test_unsupported_outputs_and_missing_partitions_fail_clearly(io_manager):
    @dg.asset
    def weights() -> bytes:
        return b"\0" * 8

    with pytest.raises(TypeError, match="ArtifactStore"):
        dg.materialize([weights], resources={"io_manager": io_manager})
    with pytest.raises(FileNotFoundError, match="experiment 'nope'.*materialize it first"):
        io_manager.load(TASKS, PartitionAddress("nope", "_"))


@pytest.mark.parametrize("name", ["../escape", "a/b", "", "_reserved", "-x"])
def test_bad_experiment_names_are_rejected(instance, name):
    with pytest.raises(ValueError, match="experiment"):
        register_experiment(instance, name)


def test_registering_an_experiment_twice_is_a_no_op(instance):
    assert register_experiment(instance, "sweep-1") is True
    assert register_experiment(instance, "sweep-1") is False
    assert "sweep-1" in instance.get_dynamic_partitions("experiment")


def test_dict_annotated_input_gets_one_frame_per_upstream_partition(instance, io_manager):
    @dg.asset(partitions_def=experiment_partitions,
              ins={"exploration_transitions": dg.AssetIn(partition_mapping=APPS_OF_EXPERIMENT)})
    def rows_per_app(exploration_transitions: dict) -> dict:
        return {key: frame.height for key, frame in exploration_transitions.items()}

    materialize_experiment(instance, {"io_manager": io_manager}, "default", steps=3)
    result = dg.materialize([*ALL_ASSETS, rows_per_app], selection=[rows_per_app],
                            instance=instance, resources={"io_manager": io_manager},
                            partition_key="default")
    assert result.output_for_node("rows_per_app") == {f"{app}|default": 3 for app in APPS}


def test_per_app_asset_reads_its_experiments_tasks(instance, io_manager):
    @dg.asset(partitions_def=experiment_by_app,
              ins={"curriculum_tasks": dg.AssetIn(partition_mapping=APPS_OF_EXPERIMENT)})
    def app_tasks(context: dg.AssetExecutionContext, curriculum_tasks: pl.DataFrame
                  ) -> pl.DataFrame:
        app = context.partition_key.keys_by_dimension["app"]
        return curriculum_tasks.filter(pl.col("app") == app)

    materialize_experiment(instance, {"io_manager": io_manager}, "default", step_budget=5)
    materialize_experiment(instance, {"io_manager": io_manager}, "ablation", step_budget=9)
    result = dg.materialize(
        [*ALL_ASSETS, app_tasks], selection=[app_tasks], instance=instance,
        resources={"io_manager": io_manager},
        partition_key=dg.MultiPartitionKey({"experiment": "ablation", "app": "clock"}))
    frame = result.output_for_node("app_tasks")
    assert frame.select("app", "step_budget").rows() == [("clock", 9)]
