"""Read-only access to one storage root (local or s3://) for the viewer.

Tables are read with Polars from the stored Parquet (`<root>/<experiment>/<asset>/_/data.parquet`),
only the columns a page shows, and kept until the file changes. Episodes are the attempt records the
stages staged (`<root>/<experiment>/_staging/<stage>/<policy version>/<task>/attempt_<k>.*`, see
`ops.data.attempt_store`): the steps with their screenshots, the hints in force, the critic's feedback and
the judge's verdict, checked against their digests as the pipeline checks them. Benchmark episodes
are found there too (their table names the policy, not the version that acted). Nothing is written.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from typing import Any, Sequence

import polars as pl
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from ops.data.attempt_store import ParquetAttemptStore, load_attempt
from ops.agent.episode import AttemptRecord
from ops.data.schemas import get_table
from ops.data.stored_files import read_bytes
from resources.experiment import UNPARTITIONED, staging_path
from resources.experiment_names import check_segment
from resources.storage import DATA_PARQUET, StorageLocation

ROLLOUT_STAGE = "rollouts"
BENCHMARK_STAGE = "benchmark"
# the schema (ops.data.schemas) of each per-experiment table the viewer reads
ASSET_TABLES = {"curriculum_tasks": "curriculum_tasks", "rollout_attempts": "attempts",
                "critic_feedback": "critic_feedback", "benchmark_results": "benchmark_results",
                "fork_pairs": "fork_pairs"}


class NotFound(LookupError):
    """What a page asks for is not in the store; the viewer answers 404 with this message."""


@dataclass(frozen=True)
class EpisodeKey:
    """Where one staged attempt lives: the stage that ran it (`rollouts`, `benchmark/<policy>`), the
    policy version that acted, the task and the attempt number."""

    experiment: str
    stage: str
    policy_version: str
    task_id: str
    attempt: int


def check_stage(stage: str) -> str:
    """`stage` if it names a stage whose episodes the viewer shows; ValueError naming it otherwise."""
    name, _, policy = stage.partition("/")
    if stage == ROLLOUT_STAGE or (name == BENCHMARK_STAGE and policy and "/" not in policy):
        if policy:
            check_segment(policy, "benchmark policy")
        return stage
    raise ValueError(f"stage {stage[:80]!r}: expected {ROLLOUT_STAGE!r} or '{BENCHMARK_STAGE}/<policy>'")


class ViewerStore:
    """The experiments, tables and episodes under one storage root."""

    def __init__(self, location: StorageLocation, cached_episodes: int = 256, cached_tables: int = 64):
        self.location = location
        self.fs, self.root = location.filesystem()
        # an episode page and its screenshots (one request each) read the attempt once
        self.episode = functools.lru_cache(maxsize=cached_episodes)(self._load_episode)
        self._read_table = functools.lru_cache(maxsize=cached_tables)(self._read_parquet)

    def _subdirs(self, path: str) -> list[str]:
        infos = self.fs.get_file_info(pafs.FileSelector(path, allow_not_found=True))
        return sorted(i.base_name for i in infos if i.type == pafs.FileType.Directory)

    def experiments(self) -> list[str]:
        """Every experiment stored under the root (directories not starting with `_`)."""
        return [name for name in self._subdirs(self.root) if not name.startswith("_")]

    def check_experiment(self, experiment: str) -> str:
        """`experiment` when it is stored; NotFound naming it and the root otherwise."""
        try:
            check_segment(experiment, "experiment")
        except ValueError as error:
            raise NotFound(str(error)) from None
        if experiment.startswith("_") or self.fs.get_file_info(
                f"{self.root}/{experiment}").type != pafs.FileType.Directory:
            raise NotFound(f"experiment {experiment!r} is not stored under {self.location.root_uri}")
        return experiment

    def table(self, experiment: str, asset: str, columns: Sequence[str]) -> pl.DataFrame | None:
        """`columns` of an experiment's stored table, None when it was not materialized. Columns an
        older file or another environment's run lacks (optional ones: a device run has no ground
        truth) read as nulls of the schema's type."""
        path = f"{self.root}/{experiment}/{asset}/{UNPARTITIONED}/{DATA_PARQUET}"
        info = self.fs.get_file_info(path)
        if info.type != pafs.FileType.File:
            return None
        # the file's size and modification time are part of the key: a rematerialized table is read again
        return self._read_table(path, ASSET_TABLES[asset], tuple(columns), info.size, info.mtime_ns)

    def _read_parquet(self, path: str, table: str, columns: tuple[str, ...], size: int,
                      mtime_ns: int | None) -> pl.DataFrame:
        with self.fs.open_input_file(path) as f:
            parquet = pq.ParquetFile(f)
            present = [c for c in columns if c in parquet.schema_arrow.names]
            frame = pl.from_arrow(parquet.read(columns=present))
        schema = get_table(table)
        missing = [pl.lit(None, schema.column(c).dtype).alias(c) for c in columns if c not in present]
        return frame.with_columns(missing).select(columns) if missing else frame

    def _load_episode(self, key: EpisodeKey) -> AttemptRecord:
        store = ParquetAttemptStore(self.fs, staging_path(self.root, key.experiment, key.stage), create=False)
        try:
            return load_attempt(store, key.policy_version, key.task_id, key.attempt)
        except FileNotFoundError as error:
            raise NotFound(f"experiment {key.experiment!r}, {key.stage}: {error}") from None

    def benchmark_episode(self, experiment: str, policy: str, task_id: str, attempt: int,
                          success: bool | None, steps: int) -> EpisodeKey:
        """Where benchmark episode (`policy`, `task_id`, `attempt`) is staged: under the policy's own
        stage, else another's (a policy not trained reuses the base's episodes), in the version
        directory whose attempt agrees with the `benchmark_results` row (success, steps)."""
        benchmark = staging_path(self.root, experiment, BENCHMARK_STAGE)
        names = self._subdirs(benchmark)
        for name in sorted(names, key=lambda n: n != policy):  # the policy's own stage first
            stage = f"{BENCHMARK_STAGE}/{name}"
            store = ParquetAttemptStore(self.fs, f"{benchmark}/{name}", create=False)
            for version in self._subdirs(store.root):
                summary = self._summary(store.attempt_path(version, task_id, attempt, "json"))
                if summary is not None and _agrees(summary, success, steps):
                    return EpisodeKey(experiment, stage, summary["policy_version"], task_id, attempt)
        raise NotFound(f"experiment {experiment!r}: no staged benchmark episode of policy {policy!r}, task "
                       f"{task_id!r}, attempt {attempt} (looked under {self.location.uri(benchmark)})")

    def _summary(self, path: str) -> dict[str, Any] | None:
        try:
            return json.loads(read_bytes(self.fs, path))
        except (OSError, ValueError):  # not staged there (S3 and local alike raise OSError), or unreadable
            return None


def _agrees(summary: dict[str, Any], success: bool | None, steps: int) -> bool:
    truth = summary.get("ground_truth") or {}
    return summary.get("n_steps") == steps and (success is None or truth.get("success", success) == success)
