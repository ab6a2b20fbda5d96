"""What an experiment has stored: which partitions a stage runs, which shared assets are current,
what a run that starts later would read and lacks."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import dagster as dg

from ops.data.stored_files import DamagedFileError
from pipelines.start_point import StagePart
from resources.experiment import APP_DIMENSION, EXPERIMENT_DIMENSION, PartitionAddress
from resources.storage import ParquetIOManager

CODE_VERSION_TAG = "dagster/code_version"  # Dagster tags every materialization with its asset's code version


log = logging.getLogger(__name__)


def reusable(instance: dg.DagsterInstance, job: dg.JobDefinition, key: dg.AssetKey,
             io_manager: Any) -> bool:
    """An unpartitioned asset materialized by its current code version whose data is still stored
    and matches its manifest's digest (a damaged copy is rebuilt, with a warning)."""
    event = instance.get_latest_materialization_event(key)
    if event is None or event.asset_materialization is None:
        return False
    if event.asset_materialization.tags.get(CODE_VERSION_TAG) != job.asset_layer.get(key).code_version:
        return False
    if not isinstance(io_manager, ParquetIOManager):
        return True
    address = PartitionAddress.of(None, None)
    if not io_manager.stored(key, address):
        return False
    try:
        io_manager.verify(key, address)
    except DamagedFileError as error:
        log.warning(f"{key.to_user_string()} is not reused, it is rebuilt: {error}")
        return False
    return True


def experiment_partition_keys(job: dg.JobDefinition, instance: dg.DagsterInstance, experiment: str
                              ) -> list[str | dg.MultiPartitionKey | None]:
    """Every partition of `job` that belongs to `experiment`: each app of a per-app job, the
    experiment of a per-experiment job, the one (None) of an unpartitioned job."""
    partitions = job.partitions_def
    if partitions is None:
        return [None]
    if isinstance(partitions, dg.MultiPartitionsDefinition):
        apps = next(d for d in partitions.partitions_defs if d.name == APP_DIMENSION).partitions_def
        return [dg.MultiPartitionKey({EXPERIMENT_DIMENSION: experiment, APP_DIMENSION: app})
                for app in apps.get_partition_keys(dynamic_partitions_store=instance)]
    return [experiment]


def stage_partitions(part: StagePart, instance: dg.DagsterInstance, experiment: str,
                     rebuild_shared: bool, io_manager: Any) -> list[str | dg.MultiPartitionKey | None]:
    """The partitions a stage (part) runs for `experiment` (`experiment_partition_keys`), except
    that an unpartitioned job runs only when its assets are not reusable."""
    job = part.job
    if job.partitions_def is None:
        current = not rebuild_shared and all(reusable(instance, job, k, io_manager) for k in part.assets)
        return [] if current else [None]
    return experiment_partition_keys(job, instance, experiment)


def stored_counts(parts: list[StagePart], instance: dg.DagsterInstance, experiment: str,
                  io_manager: ParquetIOManager) -> Iterator[tuple[dg.JobDefinition, dg.AssetKey, int, int]]:
    """(job, asset, partitions stored, partitions in all) of each asset of `parts` for `experiment`."""
    for part in parts:
        keys = experiment_partition_keys(part.job, instance, experiment)
        for asset in sorted(part.assets):
            stored = sum(io_manager.stored(asset, PartitionAddress.of(part.job.partitions_def, key)) for key in keys)
            yield part.job, asset, stored, len(keys)


def missing_inputs(skipped: list[StagePart], instance: dg.DagsterInstance, experiment: str,
                   io_manager: Any) -> list[str]:
    """Each asset of the skipped stage parts with partitions not stored for `experiment` (what a run
    that starts at a later stage or asset reads), as `asset` or `asset (n of m partitions)`."""
    if not isinstance(io_manager, ParquetIOManager):
        return []  # another IO manager: the first run that reads a missing input names it
    return [asset.to_user_string() + (f" ({total - stored} of {total} partitions)" if total > 1 else "")
            for _, asset, stored, total in stored_counts(skipped, instance, experiment, io_manager) if stored < total]
