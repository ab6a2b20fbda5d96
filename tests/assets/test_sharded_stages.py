"""Rollouts and the benchmark as shard steps (assets.sharding, the deployment's `shards`): two shard steps
each (the rollouts' side by side in processes of the multiprocess executor), then a merge step whose tables
are the single step's; a failed shard re-executed resumes only its own unfinished attempts; the CLI's config check
reads a sharded asset's config as the single step's."""

import os
from multiprocessing import forkserver
from typing import NamedTuple

import dagster as dg
import polars as pl
import pyarrow.fs as pafs
import pytest

from assets.base_policy import base_policy
from assets.benchmark import BENCHMARKED, benchmark_results
from assets.benchmark_shards import benchmark_for
from assets.methods import asset_in
from assets.rollout_shards import rollouts_for
from assets.rollouts import RolloutAssetConfig, rollouts
from assets.sharding import shard_of
from ops.curriculum import task_specs
from ops.data.attempt_store import ParquetAttemptStore
from pipelines.definitions import FORKED_STEPS
from pipelines.resources import resources_for
from pipelines.run.config_check import check_config, config_classes
from pipelines.start_point import ConfigError
from resources.experiment import PartitionAddress, experiment_partitions, register_experiment
from resources.storage import ParquetIOManager, StorageLocation
from training.methods.checkpoint import Checkpoint
from tests.pipelines.test_remedial_asset import stub_curriculum

EXPERIMENT = "shards"
ROLLOUTS = {"ops": {"rollouts": {"config": {"attempts": 2, "workers": 1}}}}
# greedy: sampled episodes depend on which episodes share a policy batch, so on the split (as with `workers`)
BENCHMARK = {"ops": {"benchmark_results": {"config": {"max_templates": 1, "k": 2, "workers": 1, "temperature": 0.0}}}}
ROLLOUT_TABLES = ("rollout_attempts", "rollout_steps", "critic_feedback")


def _switched_off(method_name: str, asset: str) -> dg.AssetsDefinition:
    @dg.asset(name=asset, partitions_def=experiment_partitions, ins={"base_policy": asset_in("base_policy")})
    def method_checkpoint(base_policy: Checkpoint) -> Checkpoint:
        return base_policy.unchanged(method_name, "not trained in this test", disabled=True)
    return method_checkpoint


UPSTREAM = [stub_curriculum, base_policy, *(_switched_off(method.name, method.asset) for method in BENCHMARKED)]


def _job(stage: dg.AssetsDefinition, name: str, executor: dg.ExecutorDefinition) -> dg.JobDefinition:
    job = dg.define_asset_job(name, selection=dg.AssetSelection.assets(stage), executor_def=executor,
                              partitions_def=experiment_partitions)
    return dg.Definitions(assets=[*UPSTREAM, stage], jobs=[job], resources=resources_for("local")).resolve_job_def(name)


# module-level job factories: the multiprocess executor rebuilds the job in each step's process. Each serves
# one test: a process loads a reconstructable job once, with the storage root set then
def sharded_rollouts() -> dg.JobDefinition:
    return _job(rollouts_for(2), "sharded_rollouts", dg.multiprocess_executor.configured(FORKED_STEPS))


def sharded_rollouts_in_process() -> dg.JobDefinition:
    return _job(rollouts_for(2), "sharded_rollouts_in_process", dg.in_process_executor)


def sharded_benchmark() -> dg.JobDefinition:
    # in this process: the shard steps' side-by-side execution is the executor's, checked once above on rollouts
    # (a process per step costs seconds of imports)
    return _job(benchmark_for(2), "sharded_benchmark", dg.in_process_executor)


@pytest.fixture
def storage_root(tmp_path, monkeypatch):
    """A storage root (the steps' processes inherit it) with the upstream assets stored; the instance."""
    monkeypatch.delenv("MOBILEFORGE_VIEWER_URL", raising=False)
    def prepare(name: str) -> tuple[str, dg.DagsterInstance]:
        root = str(tmp_path / name)
        monkeypatch.setenv("MOBILEFORGE_STORAGE_ROOT", root)
        home = tmp_path / f"{name}_home"
        home.mkdir()
        instance = dg.DagsterInstance.local_temp(str(home))
        register_experiment(instance, EXPERIMENT)
        assert dg.materialize(UPSTREAM, instance=instance, resources=resources_for("local"),
                              partition_key=EXPERIMENT).success
        return root, instance
    return prepare


def _stored(root: str, asset: str) -> pl.DataFrame:
    return ParquetIOManager(location=StorageLocation(root=root)).load(
        dg.AssetKey(asset), PartitionAddress.of(experiment_partitions, EXPERIMENT))


def _same_rows(a: pl.DataFrame, b: pl.DataFrame) -> bool:
    keys = [c for c in ("policy_id", "task_id", "attempt", "step") if c in a.columns]
    drop = [c for c in a.columns if "latency" in c or c.endswith("_at")]  # wall-clock fields
    return a.drop(drop).sort(keys).equals(b.drop(drop).sort(keys))


def _steps(instance: dg.DagsterInstance, run_id: str) -> dict[str, dict[str, float | int]]:
    """Step key -> its start and end times and the process it ran in, from the run's events."""
    steps: dict[str, dict[str, float | int]] = {}
    for record in instance.all_logs(run_id):
        event = record.dagster_event
        if event and event.event_type in (dg.DagsterEventType.STEP_START, dg.DagsterEventType.STEP_SUCCESS):
            step = steps.setdefault(record.step_key, {})
            step["start" if event.event_type == dg.DagsterEventType.STEP_START else "end"] = record.timestamp
            step["pid"] = event.pid
    return steps


def _ran_side_by_side(steps: dict, shards: list[str]) -> None:
    first, second = (steps[shard] for shard in shards)
    assert first["pid"] != second["pid"] and os.getpid() not in (first["pid"], second["pid"])
    assert first["start"] < second["end"] and second["start"] < first["end"]  # overlapping in time


def _staged(store: ParquetAttemptStore) -> dict[str, int]:
    """Every staged attempt's record (its summary JSON, written last) and when it was written."""
    return {info.path: info.mtime_ns for info in store.fs.get_file_info(pafs.FileSelector(store.root, recursive=True))
            if info.path.endswith(".json")}


def _materialization(instance: dg.DagsterInstance, run_id: str, asset: str) -> dict:
    [event] = [e for e in instance.all_logs(run_id, of_type=dg.DagsterEventType.ASSET_MATERIALIZATION)
               if e.dagster_event.asset_key == dg.AssetKey(asset)]
    return event.asset_materialization.metadata


class Runs(NamedTuple):
    """A stage run as one step and as two shard steps, each on its own storage root and instance."""

    single_root: str
    single: dict  # the single step's materialization metadata, by asset
    sharded_root: str
    sharded: dict  # the merge step's
    steps: dict  # the sharded run's steps, as `_steps` reads them
    shards: list[str]


def _single_then_sharded(storage_root, single_step: dg.AssetsDefinition, sharded_job, run_config: dict) -> Runs:
    """`single_step` materialized, then `sharded_job`; checks that the sharded run is two shard steps, then
    the merge."""
    single_root, single_instance = storage_root(f"{single_step.node_def.name}_single")
    one = dg.materialize([*UPSTREAM, single_step], instance=single_instance, resources=resources_for("local"),
                         partition_key=EXPERIMENT, run_config=run_config, selection=[single_step])
    sharded_root, instance = storage_root(f"{single_step.node_def.name}_sharded")
    two = dg.execute_job(dg.reconstructable(sharded_job), instance=instance, run_config=run_config,
                         tags={"dagster/partition": EXPERIMENT})
    assert one.success and two.success
    name = single_step.node_def.name
    steps, shards = _steps(instance, two.run_id), [f"{name}.{name}_shard_0", f"{name}.{name}_shard_1"]
    assert set(steps) == {*shards, f"{name}.{name}_merge"}
    assert steps[f"{name}.{name}_merge"]["start"] > max(steps[shard]["end"] for shard in shards)
    return Runs(single_root, {key.to_user_string(): _materialization(single_instance, one.run_id, key.to_user_string())
                              for key in single_step.keys}, sharded_root,
                {key.to_user_string(): _materialization(instance, two.run_id, key.to_user_string())
                 for key in single_step.keys}, steps, shards)


@pytest.fixture
def own_forkserver():
    """The shard steps fork from this process's forkserver (as a sharded stage's run worker does), which keeps the
    environment it started with: one that starts in this test, after the storage root is set, and ends with it."""
    forkserver._forkserver._stop()  # the stdlib's own hook for its tests
    yield
    forkserver._forkserver._stop()


def test_rollouts_run_as_two_shard_steps_side_by_side_and_merge_into_the_single_steps_tables(storage_root,
                                                                                             own_forkserver):
    runs = _single_then_sharded(storage_root, rollouts, sharded_rollouts, ROLLOUTS)
    _ran_side_by_side(runs.steps, runs.shards)
    for table in ROLLOUT_TABLES:
        assert _same_rows(_stored(runs.single_root, table), _stored(runs.sharded_root, table)), table
    single, merged = runs.single["rollout_attempts"], runs.sharded["rollout_attempts"]
    for key in ("policy_version", "tasks", "attempts", "attempts_run", "attempts_resumed", "end_reasons", "viewer"):
        assert merged[key] == single[key], key
    assert merged["attempts_run"].value == 6  # 3 tasks x 2 attempts


def test_a_failed_shard_reexecuted_resumes_only_its_own_unfinished_attempts(storage_root, monkeypatch):
    root, instance = storage_root("resume")
    tasks = task_specs(_stored(root, "curriculum_tasks"), True, None)
    [victim] = shard_of(tasks, 1, 2)  # shard 2's only task: its first attempt is staged, then the shard dies
    save = ParquetAttemptStore.save

    def dies_after_first_attempt(store, record):
        save(store, record)
        if record.task.task_id == victim.task_id and record.attempt == 1:
            raise RuntimeError("shard killed after staging its first attempt")
    monkeypatch.setattr(ParquetAttemptStore, "save", dies_after_first_attempt)
    failed = dg.execute_job(dg.reconstructable(sharded_rollouts_in_process), instance=instance,
                            run_config=ROLLOUTS, tags={"dagster/partition": EXPERIMENT}, raise_on_error=False)
    assert not failed.success
    assert {step for step, s in _steps(instance, failed.run_id).items() if "end" in s} == {"rollouts.rollouts_shard_0"}
    store = StorageLocation(root=root).attempt_store(EXPERIMENT)
    staged = _staged(store)
    assert len(staged) == 2 * 2 + 1  # shard 1's two tasks, both attempts; shard 2's first attempt

    monkeypatch.setattr(ParquetAttemptStore, "save", save)
    resumed = dg.execute_job(dg.reconstructable(sharded_rollouts_in_process), instance=instance,
                             run_config=ROLLOUTS, tags={"dagster/partition": EXPERIMENT},  # as the UI re-executes
                             reexecution_options=dg.ReexecutionOptions.from_failure(failed.run_id, instance))
    assert resumed.success
    assert set(_steps(instance, resumed.run_id)) == {"rollouts.rollouts_shard_1", "rollouts.rollouts_merge"}
    after = _staged(store)
    assert {path: after[path] for path in staged} == staged  # nothing staged before was run again
    assert len(after) == 6
    merged = _materialization(instance, resumed.run_id, "rollout_attempts")
    # the finished shard's part read from the failed run; the re-executed shard ran its one unfinished attempt
    assert (merged["attempts_run"].value, merged["attempts_resumed"].value, merged["attempts"].value) == (5, 1, 6)


def test_the_benchmark_runs_as_two_shard_steps_and_merges_into_the_single_steps_results(storage_root):
    runs = _single_then_sharded(storage_root, benchmark_results, sharded_benchmark, BENCHMARK)
    single, sharded = _stored(runs.single_root, "benchmark_results"), _stored(runs.sharded_root, "benchmark_results")
    assert sharded.height >= 4 and sharded.equals(single)  # the same rows in the same order
    for key in ("episodes", "tasks", "pass_at_k", "versus_base", "by_difficulty", "episode_rates"):
        assert runs.sharded["benchmark_results"][key] == runs.single["benchmark_results"][key], key


def test_the_cli_config_check_reads_a_sharded_assets_config_as_the_single_steps():
    job = sharded_rollouts_in_process()
    assert config_classes([job])["rollouts"] is RolloutAssetConfig
    check_config({"rollouts": {"attempts": 2}}, [job])
    with pytest.raises(ConfigError, match="rollouts.attempts"):
        check_config({"rollouts": {"attempts": 0}}, [job])
