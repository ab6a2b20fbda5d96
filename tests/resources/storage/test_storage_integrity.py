"""Damage is detected, not read as good: content digests in manifests, artifact markers and staged
attempt summaries, checked on read and before reuse; concurrent writers never share a temp file."""

from __future__ import annotations

import json
import threading
from dataclasses import replace
from pathlib import Path

import dagster as dg
import polars as pl
import pyarrow.parquet as pq
import pytest

from ops.data.attempt_store import ParquetAttemptStore, collect_tables
from ops.agent.episode import AttemptRecord, CriticFeedback, StepLabel
from ops.data.stored_files import DamagedFileError
from pipelines.run.stored import stage_partitions
from pipelines.start_point import StagePart
from resources.experiment import SHARED_EXPERIMENT, UNPARTITIONED, PartitionAddress
from resources.storage import ARTIFACT_MARKER, MANIFEST, ArtifactStore, ParquetIOManager, StorageLocation
from tests.ops.judging.scripted import CLICK_ELEMENT, CLICK_POINT, TERMINATE, make_attempt
from tests.resources.storage.graph import materialize_experiment, tiny_png

TRANSITIONS = dg.AssetKey("exploration_transitions")
INDEX = dg.AssetKey("task_index")


def _flip_byte(path: Path, offset: int) -> None:
    data = bytearray(path.read_bytes())
    data[offset] ^= 0x01
    path.write_bytes(bytes(data))


def _stored_transitions(instance, io_manager) -> tuple[PartitionAddress, Path]:
    materialize_experiment(instance, {"io_manager": io_manager}, "default", steps=4)
    address = PartitionAddress("default", "notes")
    return address, Path(io_manager.partition_dir(TRANSITIONS, address))


def test_the_manifest_records_size_and_digest_and_an_intact_partition_loads(instance, io_manager):
    address, directory = _stored_transitions(instance, io_manager)
    manifest = json.loads((directory / MANIFEST).read_text())
    assert manifest["rows"] == 4 and manifest["bytes"] == (directory / "data.parquet").stat().st_size
    assert len(manifest["sha256"]) == 64
    assert io_manager.load(TRANSITIONS, address).height == 4


def test_a_flipped_byte_is_detected_on_read_naming_the_file_and_the_remedy(instance, io_manager):
    address, directory = _stored_transitions(instance, io_manager)
    data = directory / "data.parquet"
    _flip_byte(data, data.stat().st_size // 2)  # inside the column data (PNG bytes, strings)
    with pytest.raises(DamagedFileError) as caught:
        io_manager.load(TRANSITIONS, address)
    message = str(caught.value)
    assert str(data) in message and "is damaged" in message
    assert "rematerialize exploration_transitions (experiment 'default', partition 'notes')" in message


def test_a_valid_parquet_with_half_its_rows_is_detected_naming_both_counts(instance, io_manager):
    address, directory = _stored_transitions(instance, io_manager)
    data = directory / "data.parquet"
    pq.write_table(pq.read_table(data).slice(0, 2), data)  # readable, schema-valid, half the rows
    with pytest.raises(DamagedFileError, match=r"records 4 rows, the file holds 2") as caught:
        io_manager.load(TRANSITIONS, address)
    assert str(data) in str(caught.value)


def test_damaged_json_and_a_missing_manifest_are_detected(instance, io_manager):
    materialize_experiment(instance, {"io_manager": io_manager}, "default")
    address = PartitionAddress("default", UNPARTITIONED)
    directory = Path(io_manager.partition_dir(INDEX, address))
    value = json.loads((directory / "data.json").read_text())
    (directory / "data.json").write_text(json.dumps({**value, "task_ids": value["task_ids"][:1]}, sort_keys=True))
    with pytest.raises(DamagedFileError, match="data.json is damaged"):
        io_manager.load(INDEX, address)
    (directory / MANIFEST).unlink()
    with pytest.raises(DamagedFileError, match="manifest is missing"):
        io_manager.load(INDEX, address)


def test_a_damaged_shared_asset_is_rebuilt_not_reused(tmp_path, caplog):
    location = StorageLocation(root=str(tmp_path))
    io_manager = ParquetIOManager(location=location)

    @dg.asset(name="probe", code_version="1")
    def probe() -> pl.DataFrame:
        return pl.DataFrame({"x": list(range(100))})

    stage = dg.define_asset_job("policy", selection=[probe])
    job = dg.Definitions(assets=[probe], jobs=[stage],
                         resources={"io_manager": io_manager}).resolve_job_def("policy")
    instance = dg.DagsterInstance.ephemeral()
    assert job.execute_in_process(instance=instance).success
    assert stage_partitions(StagePart.whole(job), instance, "x", False, io_manager) == []
    data = Path(io_manager.partition_dir(dg.AssetKey("probe"), PartitionAddress(SHARED_EXPERIMENT, UNPARTITIONED)))
    _flip_byte(data / "data.parquet", 200)
    assert stage_partitions(StagePart.whole(job), instance, "x", False, io_manager) == [None]
    assert "probe is not reused, it is rebuilt" in caplog.text


def _artifact(tmp_path) -> tuple[ArtifactStore, str, Path]:
    store = ArtifactStore(location=StorageLocation(root=str(tmp_path / "storage")))
    source = tmp_path / "src"
    (source / "sub").mkdir(parents=True)
    (source / "model.safetensors").write_bytes(bytes(range(256)) * 64)
    (source / "sub" / "config.json").write_text("{}")
    uri = store.put_dir(source, "default/base_policy/abc")
    return store, uri, store.local_path(uri)


def test_the_artifact_marker_records_digests_and_a_flipped_byte_is_detected(tmp_path):
    store, uri, directory = _artifact(tmp_path)
    marker = json.loads((directory / ARTIFACT_MARKER).read_text())
    assert set(marker["sha256"]) == {"model.safetensors", "sub/config.json"}
    _flip_byte(directory / "model.safetensors", 1000)
    with pytest.raises(DamagedFileError, match=r"model.safetensors is damaged.*rematerialize"):
        store.local_path(uri)
    with pytest.raises(DamagedFileError, match="model.safetensors is damaged"):
        store.get_dir(uri, tmp_path / "copy")


def test_a_truncated_artifact_file_is_detected(tmp_path):
    store, uri, directory = _artifact(tmp_path)
    weights = directory / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:100])
    with pytest.raises(DamagedFileError, match=r"model.safetensors: expected 16384 bytes, found 100"):
        store.local_path(uri)


def _attempt(number: int) -> AttemptRecord:
    record = make_attempt([CLICK_POINT, CLICK_ELEMENT, TERMINATE], task_id="wifi", attempt=number)
    record.final_screenshot_png = tiny_png(number)
    record.feedback = CriticFeedback(decision=0, reason="stopped early", failure_step=1, task_feasible=True,
                                     step_analysis=[StepLabel(s.step, True, "fine") for s in record.steps],
                                     hint=None, critic="programmatic", step_descriptions=[])
    return record


def _staged(tmp_path) -> ParquetAttemptStore:
    store = ParquetAttemptStore.from_uri(str(tmp_path / "staging"))
    for attempt in (1, 2, 3):
        store.save(_attempt(attempt))
    return store


@pytest.mark.parametrize("damage", ["flip the steps", "truncate the steps", "edit the summary", "drop the screenshot"])
def test_a_damaged_staged_attempt_is_not_resumed_and_is_counted(tmp_path, damage, caplog):
    store = _staged(tmp_path)
    base = tmp_path / "staging" / "p0" / "wifi"
    steps, summary, png = base / "attempt_2.parquet", base / "attempt_2.json", base / "attempt_2.png"
    if damage == "flip the steps":
        _flip_byte(steps, steps.stat().st_size // 2)
    elif damage == "truncate the steps":
        steps.write_bytes(steps.read_bytes()[:-50])
    elif damage == "edit the summary":
        summary.write_text(summary.read_text().replace('"n_steps": 3', '"n_steps": 2'))
    else:
        png.unlink()
    assert sorted(store.completed(_attempt(1).task, "p0")) == [1, 3]  # attempt 2 runs again
    assert list(store.damaged) == [str(summary)]
    assert "staged attempt damaged" in caplog.text and "attempt_2" in caplog.text
    attempts, steps_table, _ = collect_tables(store, "p0", [_attempt(1).task])
    assert attempts["attempt"].to_list() == [1, 3] and steps_table.height == 6
    store.save(_attempt(2))  # the rerun
    assert sorted(store.completed(_attempt(1).task, "p0")) == [1, 2, 3]


def test_an_attempt_staged_for_another_definition_of_the_task_is_run_again(tmp_path, caplog):
    """A task id whose instruction or params changed since its attempts were staged (a template or
    curriculum edit) must not resume them: they were made, and judged, for another task."""
    store = _staged(tmp_path)
    changed = replace(_attempt(1).task, params={**_attempt(1).task.params, "changed": True})
    assert store.completed(changed, "p0") == {}
    assert len(store.stale) == 3 and "another definition of task wifi" in caplog.text
    attempts, _, _ = collect_tables(store, "p0", [changed])
    assert attempts.height == 0
    store.save(replace(_attempt(2), task=changed))  # the rerun overwrites the stale attempt
    assert sorted(store.completed(changed, "p0")) == [2]
    assert sorted(store.completed(_attempt(1).task, "p0")) == [1, 3]


def test_concurrent_writers_of_one_attempt_never_collide(tmp_path):
    """Two writers of the same staged attempt (two runs on one experiment) used to share the fixed
    temp name `attempt_N.parquet.tmp`; one crashed when the other had already moved it."""
    store = ParquetAttemptStore.from_uri(str(tmp_path / "staging"))
    record = _attempt(1)
    errors: list[BaseException] = []

    def write() -> None:
        try:
            for _ in range(40):
                store.save(record)
        except BaseException as error:  # noqa: BLE001 — collected for the assertion below
            errors.append(error)

    writers = [threading.Thread(target=write) for _ in range(4)]
    for thread in writers:
        thread.start()
    for thread in writers:
        thread.join()
    assert errors == []
    assert sorted(store.completed(_attempt(1).task, "p0")) == [1] and not store.damaged
    assert not [p.name for p in (tmp_path / "staging").rglob("*") if "tmp" in p.name]


def test_resuming_a_task_removes_the_temp_files_a_killed_writer_left(tmp_path):
    store = _staged(tmp_path)
    base = tmp_path / "staging" / "p0" / "wifi"
    (base / ".tmp-0123abcd-attempt_2.png").write_bytes(b"half a screenshot")
    assert sorted(store.completed(_attempt(1).task, "p0")) == [1, 2, 3]
    assert sorted(p.name for p in base.iterdir()) == [f"attempt_{k}.{ext}" for k in (1, 2, 3)
                                                      for ext in ("json", "parquet", "png")]
