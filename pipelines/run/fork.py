"""`--fork PARENT`: a new experiment starts from what another stored, copied and recorded in Dagster."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import dagster as dg
from dagster._core.definitions.data_version import INPUT_EVENT_POINTER_TAG_PREFIX
from dagster._core.storage.tags import PARTITION_NAME_TAG, get_multidimensional_partition_tag

from ops.data.stored_files import DamagedFileError
from pipelines.run.observer import Observer
from pipelines.run.stored import experiment_partition_keys, missing_inputs, stored_counts
from pipelines.run.sweep import sweep_abandoned_runs
from pipelines.start_point import ConfigError, StagePart
from resources.experiment import PartitionAddress, latest_materialization, register_experiment
from resources.experiment_lock import ExperimentBusy, experiment_lock
from resources.storage import ParquetIOManager, StorageLocation

FORKED_FROM = "forked_from"  # metadata of a partition `--fork` copied: the experiment it was copied from


@dataclass(frozen=True)
class PartitionCopy:
    """One stored partition that forking copies: `source` of the parent, `target` of the fork."""

    asset: dg.AssetKey
    partitions_def: dg.PartitionsDefinition
    source: str | dg.MultiPartitionKey
    target: str | dg.MultiPartitionKey

    def address(self, key: str | dg.MultiPartitionKey) -> PartitionAddress:
        return PartitionAddress.of(self.partitions_def, key)


def fork_copies(skipped: list[StagePart], instance: dg.DagsterInstance, parent: str, experiment: str
                ) -> list[PartitionCopy]:
    """Every per-experiment and per-app partition of the skipped stage parts' assets that forking
    `parent` into `experiment` copies, upstream before downstream (shared assets, without an
    experiment, are read by both as they are)."""
    copies = []
    for part in skipped:
        job = part.job
        if job.partitions_def is None:
            continue
        pairs = list(zip(experiment_partition_keys(job, instance, parent),
                         experiment_partition_keys(job, instance, experiment), strict=True))
        for asset in (k for k in job.asset_layer.asset_graph.toposorted_asset_keys if k in part.assets):
            copies += [PartitionCopy(asset, job.partitions_def, source, target) for source, target in pairs]
    return copies


def record_fork(instance: dg.DagsterInstance, copy: PartitionCopy, parent: str, uri: str,
                forked_events: dict[dg.AssetKey, int]) -> int:
    """Report `copy.target` materialized, as a copy of `copy.source`: the parent event's metadata
    and version tags (code, data and input data versions, which the UI's staleness reads) plus
    `forked_from`; its inputs point at the events this fork recorded for them (`forked_events`,
    storage id by asset), not at the parent's. Returns the new event's storage id."""
    source = latest_materialization(instance, copy.asset, str(copy.source))
    event = source.asset_materialization if source is not None else None
    tags = {tag: value for tag, value in (event.tags or {} if event is not None else {}).items()
            if not tag.startswith(PARTITION_NAME_TAG)}  # the parent's partition: the target's are set below
    if isinstance(copy.target, dg.MultiPartitionKey):
        tags.update({get_multidimensional_partition_tag(dimension): key
                     for dimension, key in copy.target.keys_by_dimension.items()})
    for tag in [t for t in tags if t.startswith(INPUT_EVENT_POINTER_TAG_PREFIX)]:
        upstream = dg.AssetKey.from_user_string(tag.split("/", 2)[-1])
        if upstream in forked_events:
            tags[tag] = str(forked_events[upstream])
    metadata = {**(event.metadata if event is not None else {}), "uri": uri,
                "experiment": copy.address(copy.target).experiment, FORKED_FROM: parent,
                "forked_from_run": source.run_id if source is not None else ""}
    instance.report_runless_asset_event(
        dg.AssetMaterialization(copy.asset, partition=str(copy.target), metadata=metadata, tags=tags))
    return latest_materialization(instance, copy.asset, str(copy.target)).storage_id


def _fork_refusals(skipped: list[StagePart], instance: dg.DagsterInstance, parent: str,
                   copies: list[PartitionCopy], io_manager: ParquetIOManager) -> list[str]:
    """What `parent` lacks (`missing_inputs`) or holds damaged of what forking copies."""
    problems = [f"not stored: {asset}" for asset in missing_inputs(skipped, instance, parent, io_manager)]
    for copy in ([] if problems else copies):
        try:
            io_manager.verify(copy.asset, copy.address(copy.source))
        except DamagedFileError as error:
            problems.append(str(error))
    return problems


def fork_experiment(parent: str, experiment: str, skipped: list[StagePart], from_stage: str,
                    instance: dg.DagsterInstance, storage: StorageLocation, io_manager: Any,
                    observer: Observer) -> None:
    """Copy into `experiment` what `parent` stored for the `skipped` stage parts, those a run from
    `from_stage` (a stage or an asset, `pipelines.start_point.split_at`) reads (`fork_copies`), and
    every attempt it staged, and record each copied partition in Dagster (`record_fork`).

    Call it holding `experiment`'s lock. `parent`'s lock is held while copying, and runs a killed
    `mobileforge run` of `parent` left behind are swept as its next run would (ExperimentBusy if one
    still writes), so what is copied is one finished state of `parent`. ConfigError before anything
    is copied when `experiment` already holds some of it (a fork never overwrites an experiment) or
    `parent` lacks some or holds a damaged copy.
    """
    if not isinstance(io_manager, ParquetIOManager):
        raise ConfigError(f"--fork {parent}: forking copies what the ParquetIOManager stored; this profile's IO "
                          f"manager is a {type(io_manager).__name__}")
    held = [asset.to_user_string() for job, asset, stored, _ in stored_counts(skipped, instance, experiment, io_manager)
            if stored and job.partitions_def is not None]
    held += [f"staged {stage} attempts" for stage in sorted(storage.staged_attempts(experiment))]
    if held:
        raise ConfigError(f"--fork {parent}: experiment {experiment!r} already holds {', '.join(held)}, and a fork "
                          f"never overwrites an experiment; fork into a new name (--experiment {experiment}-2), or "
                          f"continue this one without --fork (--experiment {experiment} --from {from_stage})")
    try:
        with experiment_lock(storage.root_uri, parent, report=observer.notice):
            for line in sweep_abandoned_runs(instance, parent):
                observer.notice(line)
            copies = fork_copies(skipped, instance, parent, experiment)
            problems = _fork_refusals(skipped, instance, parent, copies, io_manager)
            if problems:
                raise ConfigError(f"--fork {parent}: experiment {parent!r} has not stored intact what the stages "
                                  f"before {from_stage} make:\n  " + "\n  ".join(problems)
                                  + f"\nrun them for {parent!r} first, or fork from an earlier stage")
            register_experiment(instance, experiment)
            staged = storage.copy_staged_attempts(parent, experiment)
            forked_events: dict[dg.AssetKey, int] = {}
            for copy in copies:
                io_manager.copy_partition(copy.asset, copy.address(copy.source), copy.address(copy.target))
                uri = storage.uri(io_manager.partition_dir(copy.asset, copy.address(copy.target)))
                forked_events[copy.asset] = record_fork(instance, copy, parent, uri, forked_events)
    except ExperimentBusy as error:
        raise ExperimentBusy(f"--fork {parent}: {error}") from None
    assets = sorted({copy.asset.to_user_string() for copy in copies})
    observer.notice(f"forked {parent!r} into {experiment!r} before {from_stage}: {len(copies)} partitions of "
                    f"{', '.join(assets) or 'no asset'}; staged attempts copied: "
                    + (", ".join(f"{stage} {n}" for stage, n in sorted(staged.items())) or "none"))
