"""`mobileforge run --fork PARENT --from STAGE`: what PARENT stored for the stages before STAGE, and
its staged attempts, are copied into the new experiment through the storage layer (local and S3),
recorded in Dagster, and verified on read; each refusal comes before anything is copied.

The stages here are the storage tests' small graph (tests/resources/storage/graph.py): a per-app stage and a
per-experiment one with a table and a JSON asset, materialized in process for the parent."""

import json
import os
from dataclasses import replace
from pathlib import Path

import dagster as dg
import pytest
from click.testing import CliRunner
from dagster._core.definitions.data_version import StaleStatus
from dagster._utils.test.data_versions import get_stale_status_resolver

import mobileforge.cli.run as run_cli
from ops.data.attempt_store import ParquetAttemptStore
from pipelines.run.experiment import run_experiment
from pipelines.run.fork import FORKED_FROM, fork_experiment
from pipelines.run.observer import LineObserver
from pipelines.run.stored import CODE_VERSION_TAG
from pipelines.start_point import ConfigError
from pipelines.start_point import StagePart, split_at
from resources.experiment import APP_DIMENSION, EXPERIMENT_DIMENSION, PartitionAddress, register_experiment
from resources.experiment_lock import ExperimentBusy, experiment_lock
from resources.storage import MANIFEST, ParquetIOManager, StorageLocation
from tests.pipelines.test_named_ablations import run_arguments  # noqa: F401  (fixture)
from tests.resources.storage.graph import ALL_ASSETS, APPS, curriculum_tasks, exploration_transitions, \
    materialize_experiment, task_index
from tests.resources.storage.test_storage_integrity import _attempt, _flip_byte
from tests.resources.storage.test_storage_s3 import s3_endpoint, s3_location  # noqa: F401  (fixtures)

PARENT, NEW = "default", "ablation"
STAGES = [dg.define_asset_job("discovery", selection=[exploration_transitions]),
          dg.define_asset_job("interaction", selection=[curriculum_tasks, task_index])]
TRANSITIONS, TASKS, INDEX = (dg.AssetKey(name) for name in ("exploration_transitions", "curriculum_tasks", "task_index"))


def _defs(io_manager: ParquetIOManager) -> dg.Definitions:
    return dg.Definitions(assets=ALL_ASSETS, jobs=STAGES, resources={"io_manager": io_manager})


@pytest.fixture(params=["local", "s3"])
def location(request, tmp_path) -> StorageLocation:
    if request.param == "s3":
        return request.getfixturevalue("s3_location")
    return StorageLocation(root=str(tmp_path / "storage"))


@pytest.fixture
def parent(location):
    """(instance, io manager, stage jobs) once PARENT stored both stages and staged attempts:
    two of the base's benchmark episodes and one rollout attempt."""
    io_manager = ParquetIOManager(location=location)
    with dg.DagsterInstance.ephemeral() as instance:
        register_experiment(instance, PARENT)
        materialize_experiment(instance, {"io_manager": io_manager}, PARENT)
        for attempt in (1, 2):
            location.attempt_store(PARENT, "benchmark/base").save(_attempt(attempt))
        location.attempt_store(PARENT).save(_attempt(1))
        defs = _defs(io_manager)
        yield instance, io_manager, [defs.resolve_job_def(job.name) for job in STAGES]


def _fork(parent, location, new: str = NEW, source: str = PARENT, start: str = "evaluation") -> list[str]:
    """Fork `source` into `new` for a run from `start`, a stage or an asset (the small graph has no
    evaluation stage: from it, both stages are copied)."""
    instance, io_manager, jobs = parent
    read = split_at(jobs, {}, start)[0] if start != "evaluation" else [StagePart.whole(job) for job in jobs]
    lines: list[str] = []
    fork_experiment(source, new, read, start, instance, location, io_manager, LineObserver(log=lines.append))
    return lines


def _addresses(experiment: str) -> list[tuple[dg.AssetKey, PartitionAddress, str]]:
    """(asset, storage address, Dagster partition key) of everything the stages store for `experiment`."""
    per_app = [(TRANSITIONS, PartitionAddress(experiment, app),
                str(dg.MultiPartitionKey({EXPERIMENT_DIMENSION: experiment, APP_DIMENSION: app}))) for app in APPS]
    return per_app + [(key, PartitionAddress(experiment, "_"), experiment) for key in (TASKS, INDEX)]


def test_a_fork_copies_every_partition_and_staged_attempt_verified_and_recorded(parent, location):
    instance, io_manager, _ = parent
    lines = _fork(parent, location)
    assert lines == [f"forked {PARENT!r} into {NEW!r} before evaluation: 4 partitions of curriculum_tasks, "
                     "exploration_transitions, task_index; staged attempts copied: benchmark/base 2, rollouts 1"]
    assert instance.has_dynamic_partition(EXPERIMENT_DIMENSION, NEW)
    for (key, address, partition), (_, source, source_partition) in zip(_addresses(NEW), _addresses(PARENT)):
        io_manager.verify(key, address)  # the copy matches the digest its manifest records
        copied, original = io_manager.load(key, address), io_manager.load(key, source)
        assert copied == original if isinstance(original, dict) else copied.equals(original)
        manifest = io_manager.manifest(key, address)
        assert (manifest["experiment"], manifest["forked_from"]["experiment"]) == (NEW, PARENT)
        (record,) = instance.fetch_materializations(
            dg.AssetRecordsFilter(asset_key=key, asset_partitions=[partition]), limit=5).records
        event = record.asset_materialization
        parent_event = instance.fetch_materializations(
            dg.AssetRecordsFilter(asset_key=key, asset_partitions=[source_partition]), limit=1).records[0]
        assert event.metadata[FORKED_FROM].value == PARENT
        assert event.metadata["forked_from_run"].value == parent_event.run_id
        assert event.tags[CODE_VERSION_TAG] == parent_event.asset_materialization.tags[CODE_VERSION_TAG]
    # the UI's staleness: the forked curriculum reads the forked explorations, so it is not stale
    stale = get_stale_status_resolver(instance, ALL_ASSETS)
    assert stale.get_status(TASKS, NEW) == stale.get_status(TASKS, PARENT) == StaleStatus.FRESH
    # a copied episode is resumed for the same task and policy version, and only for those
    task = _attempt(1).task
    store = location.attempt_store(NEW, "benchmark/base")
    assert sorted(store.completed(task, "p0")) == [1, 2]
    assert store.completed(task, "p1") == {}  # a new checkpoint's version: its episodes run
    assert store.completed(replace(task, instruction="Turn off Wi-Fi"), "p0") == {}


def test_a_fork_for_an_asset_start_copies_the_rest_of_its_stage_and_not_the_asset(parent, location):
    instance, io_manager, _ = parent
    lines = _fork(parent, location, start="task_index")
    assert lines[0].startswith(f"forked {PARENT!r} into {NEW!r} before task_index: 3 partitions of curriculum_tasks, "
                               "exploration_transitions;")
    io_manager.verify(TASKS, PartitionAddress(NEW, "_"))
    assert not io_manager.stored(INDEX, PartitionAddress(NEW, "_"))  # the run from task_index makes its own
    assert not instance.fetch_materializations(dg.AssetRecordsFilter(asset_key=INDEX, asset_partitions=[NEW]),
                                               limit=1).records


def test_writing_the_fork_leaves_the_parent_as_it_was(parent, location, tmp_path):
    if location.is_s3:
        pytest.skip("hard links are a local optimisation; S3 copies are separate objects")
    instance, io_manager, _ = parent
    _fork(parent, location)
    parent_data = Path(io_manager.partition_dir(TASKS, PartitionAddress(PARENT, "_"))) / "data.parquet"
    assert os.stat(parent_data).st_nlink == 2  # linked, not copied
    materialize_experiment(instance, {"io_manager": io_manager}, NEW, step_budget=9)  # NEW rewrites its tables
    assert io_manager.load(TASKS, PartitionAddress(NEW, "_"))["step_budget"].to_list() == [9, 9]
    assert io_manager.load(TASKS, PartitionAddress(PARENT, "_"))["step_budget"].to_list() == [5, 5]
    rerun = _attempt(2)
    rerun.answer = "rerun in the fork"
    location.attempt_store(NEW, "benchmark/base").save(rerun)
    summary = Path(location.attempt_store(PARENT, "benchmark/base").attempt_path("p0", "wifi", 2, "json"))
    assert json.loads(summary.read_text())["answer"] is None
    assert sorted(location.attempt_store(PARENT, "benchmark/base").completed(_attempt(1).task, "p0")) == [1, 2]


def test_a_fork_never_overwrites_an_experiment(parent, location):
    _fork(parent, location)
    with pytest.raises(ConfigError, match=rf"experiment '{NEW}' already holds exploration_transitions, curriculum_tasks, "
                                          rf"task_index, staged benchmark/base attempts, staged rollouts attempts.*"
                                          rf"--experiment {NEW}-2.*--experiment {NEW} --from evaluation"):
        _fork(parent, location)
    location.attempt_store("staged-only", "rollouts").save(_attempt(1))
    with pytest.raises(ConfigError, match="'staged-only' already holds staged rollouts attempts"):
        _fork(parent, location, new="staged-only")


def test_a_parent_without_the_stages_or_with_a_damaged_copy_is_refused(parent, location):
    instance, io_manager, _ = parent
    with pytest.raises(ConfigError, match=r"'nothing' has not stored intact what the stages before evaluation make:\n"
                                          r"  not stored: exploration_transitions \(2 of 2 partitions\)\n"
                                          r"  not stored: curriculum_tasks\n  not stored: task_index"):
        _fork(parent, location, source="nothing")
    if location.is_s3:
        return
    damaged = Path(io_manager.partition_dir(TASKS, PartitionAddress(PARENT, "_"))) / "data.parquet"
    _flip_byte(damaged, damaged.stat().st_size // 2)
    with pytest.raises(ConfigError, match=f"{damaged} is damaged"):
        _fork(parent, location)
    assert not instance.has_dynamic_partition(EXPERIMENT_DIMENSION, NEW)  # refused before anything


def test_a_parent_being_written_is_not_copied(parent, location):
    with experiment_lock(location.root_uri, PARENT, report=lambda line: None):
        with pytest.raises(ExperimentBusy, match=f"--fork {PARENT}: experiment '{PARENT}' is being materialized"):
            _fork(parent, location)


@pytest.mark.parametrize("arguments, message", [
    (["--experiment", NEW, "--fork", PARENT], f"--fork {PARENT} needs --from STAGE"),
    (["--experiment", PARENT, "--fork", PARENT, "--from", "training"], "cannot be forked into itself"),
    (["--experiment", NEW, "--fork", "../up", "--from", "training"], "experiment '../up': use letters"),
])
def test_the_cli_refuses_a_bad_fork_before_anything_runs(arguments, message):
    result = CliRunner().invoke(run_cli.run, arguments)
    assert result.exit_code == 2 and message in result.output, result.output


def test_a_named_ablation_forks_with_its_preset_and_the_set_values(run_arguments):
    result = CliRunner().invoke(run_cli.run, ["--experiment", "wizard", "--fork", PARENT, "--from", "training",
                                              "--set", "benchmark_results.k=2"])
    assert result.exit_code == 0, result.output
    assert (run_arguments["fork"], run_arguments["from_stage"]) == (PARENT, "training")
    assert run_arguments["config"]["rft_checkpoint"] == {"remedial": True}
    assert run_arguments["config"]["benchmark_results"] == {"k": 2}


def test_run_experiment_refuses_a_fork_without_a_stage(tmp_path):
    io_manager = ParquetIOManager(location=StorageLocation(root=str(tmp_path)))
    with pytest.raises(ConfigError, match="needs --from STAGE"):
        run_experiment(NEW, fork=PARENT, defs=_defs(io_manager), instance=dg.DagsterInstance.ephemeral())
