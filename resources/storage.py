"""Where the pipeline's data lives: one storage root (local path or s3://), an IO manager that
stores Polars frames as Parquet per experiment and partition, and an artifact store for
directories (checkpoints, HF datasets).

Layout under the root (local and S3 alike, through pyarrow.fs): an experiment's tables as
`resources.experiment` lays them out, each beside a `_manifest.json`, and directories under
`<root>/_artifacts/<key>/...` (ArtifactStore).
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import tempfile
import uuid
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Sequence

import dagster as dg
import polars as pl
import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq
from pydantic import BaseModel, Field

from ops.data.attempt_store import SUMMARY_FILE, ParquetAttemptStore
from ops.data.schemas import PARQUET_WRITE_OPTIONS
from ops.data.stored_files import (
    DamagedFileError,
    check_digest,
    copy_file,
    copy_tree,
    exists,
    file_sha256,
    read_bytes,
    sha256_hex,
    write_bytes_atomic,
)
from resources.experiment import STAGING_DIR, PartitionAddress, collect_lineage, lineage_metadata, staging_path
from resources.experiment_names import check_segment
from resources.storage_root import default_storage_root

DATA_PARQUET = "data.parquet"
DATA_JSON = "data.json"
MANIFEST = "_manifest.json"
ARTIFACTS_DIR = "_artifacts"
ARTIFACT_MARKER = "_COMPLETE.json"


@functools.lru_cache(maxsize=16)
def _filesystem(root_uri: str, endpoint_override: str | None, region: str | None
                ) -> tuple[pafs.FileSystem, str]:
    if root_uri.startswith("s3://"):
        kwargs: dict[str, Any] = {"region": region}
        if endpoint_override:
            scheme, _, host = endpoint_override.rpartition("://")
            kwargs.update(endpoint_override=host, scheme=scheme or "https")
        return pafs.S3FileSystem(**kwargs), root_uri.removeprefix("s3://").rstrip("/")
    return pafs.LocalFileSystem(), str(Path(root_uri).expanduser().resolve())


class StorageLocation(dg.ConfigurableResource):
    """The storage root shared by the IO manager, the artifact store and the DuckDB catalog.

    S3 credentials come from the usual AWS environment variables / config files.
    """

    root: str | None = Field(
        default=None,
        description="Local directory or s3://bucket/prefix; default $MOBILEFORGE_HOME/storage "
                    "or <repo>/.mobileforge/storage.")
    s3_endpoint_override: str | None = Field(
        default=None, description="S3-compatible endpoint, e.g. http://127.0.0.1:9000 (MinIO).")
    s3_region: str | None = Field(default=None, description="S3 region; SDK default if unset.")

    @property
    def root_uri(self) -> str:
        return self.root or default_storage_root()

    @property
    def is_s3(self) -> bool:
        return self.root_uri.startswith("s3://")

    def filesystem(self) -> tuple[pafs.FileSystem, str]:
        """The pyarrow filesystem and the root path inside it."""
        return _filesystem(self.root_uri, self.s3_endpoint_override, self.s3_region)

    def uri(self, path: str) -> str:
        """The URI of a filesystem path (plain absolute path when local)."""
        return f"s3://{path}" if self.is_s3 else path

    def attempt_store(self, experiment: str, stage: str = "rollouts") -> ParquetAttemptStore:
        """Where finished attempts of an experiment's stage are staged (and resumed from)."""
        fs, root = self.filesystem()
        return ParquetAttemptStore(fs, staging_path(root, experiment, stage))

    def staged_attempts(self, experiment: str) -> dict[str, int]:
        """Finished attempts staged for `experiment`, by stage (what a rerun can resume)."""
        fs, _ = self.filesystem()
        base = self._staging_dir(experiment)
        counts: dict[str, int] = {}
        for info in fs.get_file_info(pafs.FileSelector(base, recursive=True, allow_not_found=True)):
            if info.type == pafs.FileType.File and SUMMARY_FILE.fullmatch(info.base_name):
                stage = "/".join(info.path[len(base) + 1:].split("/")[:-3])  # <stage>/<policy>/<task>/<file>
                counts[stage] = counts.get(stage, 0) + 1
        return counts

    def copy_staged_attempts(self, source_experiment: str, target_experiment: str) -> dict[str, int]:
        """Copy every attempt `source_experiment` staged into `target_experiment`'s staging area
        (hard links on a local root); returns the target's staged attempts by stage. A copied
        attempt is resumed only where the attempt store's check accepts it: same policy version,
        same task definition, intact files."""
        fs, _ = self.filesystem()
        copy_tree(fs, self._staging_dir(source_experiment), self._staging_dir(target_experiment))
        return self.staged_attempts(target_experiment)

    def _staging_dir(self, experiment: str) -> str:
        _, root = self.filesystem()
        return f"{root}/{check_segment(experiment, 'experiment')}/{STAGING_DIR}"

    def path_of(self, uri: str) -> str:
        """Inverse of `uri`: the filesystem path of a URI under this location's scheme."""
        if self.is_s3 != uri.startswith("s3://"):
            raise ValueError(f"URI {uri!r} does not belong to storage root {self.root_uri!r}")
        return uri.removeprefix("s3://") if self.is_s3 else str(Path(uri).resolve())


class ParquetIOManager(dg.ConfigurableIOManager):
    """Stores Polars DataFrames as Parquet (dicts, lists and pydantic models as JSON) under the
    storage root; an input annotated with a pydantic model loads as that model.

    Every write is atomic and leaves `_manifest.json` beside the data: asset key, experiment,
    partition, rows and columns, the data file's size and sha256, run id, code version, run
    config and upstream data versions. Reads check the data file against that digest.
    An input spanning several upstream partitions (e.g. every app of one experiment) loads as
    one concatenated DataFrame, or as `{partition_key: value}` when the input is annotated
    `dict` or the stored values are JSON.
    """

    location: StorageLocation

    def partition_dir(self, asset_key: dg.AssetKey, address: PartitionAddress) -> str:
        """Filesystem path of one stored partition's directory."""
        _, base = self.location.filesystem()
        parts = [check_segment(p, "asset key part") for p in asset_key.path]
        return "/".join([base, address.experiment, *parts, address.partition])

    def handle_output(self, context: dg.OutputContext, obj: Any) -> None:
        if isinstance(obj, pl.LazyFrame):
            obj = obj.collect()
        pdef = context.asset_partitions_def if context.has_asset_partitions else None
        if pdef is not None and not context.has_partition_key:
            raise ValueError(f"{context.asset_key.to_user_string()}: ParquetIOManager stores one "
                             "partition per run; launch partition ranges as one run per partition")
        address = PartitionAddress.of(pdef, context.partition_key if pdef else None)
        directory = self.partition_dir(context.asset_key, address)
        fs, _ = self.location.filesystem()
        manifest: dict[str, Any] = {
            "asset_key": context.asset_key.to_user_string(),
            "experiment": address.experiment,
            "partition": address.partition,
            "run_id": context.run_id,
            "written_at": datetime.now(timezone.utc).isoformat(),
        }
        if isinstance(obj, pl.DataFrame):
            sink = pa.BufferOutputStream()
            pq.write_table(obj.to_arrow(), sink, **PARQUET_WRITE_OPTIONS)
            data = sink.getvalue()
            write_bytes_atomic(fs, f"{directory}/{DATA_PARQUET}", data)
            stale = f"{directory}/{DATA_JSON}"
            manifest.update(format="parquet", rows=obj.height, bytes=data.size, sha256=sha256_hex(data),
                            columns={n: str(t) for n, t in obj.schema.items()})
            context.add_output_metadata({"rows": obj.height})
        elif isinstance(obj, (dict, list, BaseModel)):
            value = obj.model_dump(mode="json") if isinstance(obj, BaseModel) else obj
            data = json.dumps(value, ensure_ascii=False, sort_keys=True).encode()
            write_bytes_atomic(fs, f"{directory}/{DATA_JSON}", data)
            stale = f"{directory}/{DATA_PARQUET}"
            manifest.update(format="json", bytes=len(data), sha256=sha256_hex(data))
        else:
            raise TypeError(
                f"{context.asset_key.to_user_string()}: ParquetIOManager stores polars frames "
                f"and JSON dicts/lists/pydantic models, got {type(obj).__name__}; store large artifacts with "
                "ArtifactStore and return its URI/manifest dict")
        if exists(fs, stale):  # the asset changed format: drop the other representation
            fs.delete_file(stale)
        manifest["lineage"] = lineage = self._lineage(context)
        write_bytes_atomic(fs, f"{directory}/{MANIFEST}",
                           json.dumps(manifest, indent=1, default=str).encode())
        context.add_output_metadata({"uri": self.location.uri(directory), "experiment": address.experiment,
                                     **(lineage_metadata(lineage) if lineage else {})})

    @staticmethod
    def _lineage(context: dg.OutputContext) -> dict[str, Any] | None:
        """What this output was built from (config, code version, upstream data versions); None for an
        output context built outside a run (direct invocation)."""
        try:
            step_context = context.step_context
        except dg.DagsterInvariantViolationError:
            return None
        return collect_lineage(step_context, context.asset_key)

    def load_input(self, context: dg.InputContext) -> Any:
        pdef = context.asset_partitions_def if context.has_asset_partitions else None
        keys: Sequence[str | None] = list(context.asset_partition_keys) if pdef else [None]
        values = {k: self.load(context.asset_key, PartitionAddress.of(pdef, k)) for k in keys}
        wanted = getattr(context.dagster_type, "typing_type", None)
        if isinstance(wanted, type) and issubclass(wanted, BaseModel):  # typed JSON, e.g. a Checkpoint
            values = {k: wanted.model_validate(v) for k, v in values.items()}
        if len(values) == 1:
            return next(iter(values.values()))
        wants_dict = getattr(context.dagster_type, "typing_type", None) is dict
        if not wants_dict and all(isinstance(v, pl.DataFrame) for v in values.values()):
            return pl.concat(list(values.values()), how="vertical")
        return {str(k): v for k, v in values.items()}

    def stored(self, asset_key: dg.AssetKey, address: PartitionAddress) -> bool:
        """Whether the partition's data is in storage (the Dagster instance may still record a
        materialization whose files were deleted since)."""
        fs, _ = self.location.filesystem()
        directory = self.partition_dir(asset_key, address)
        return exists(fs, f"{directory}/{DATA_PARQUET}") or exists(fs, f"{directory}/{DATA_JSON}")

    def load(self, asset_key: dg.AssetKey, address: PartitionAddress) -> Any:
        """Load one stored partition (a DataFrame, or the stored JSON value), checked against the
        digest and row count its manifest recorded; raises DamagedFileError naming the file and
        what to rematerialize when they differ."""
        path, data = self._read_verified(asset_key, address)
        if path.endswith(DATA_PARQUET):
            # ParquetFile, not read_table: read_table imports pyarrow.dataset and with it pandas (~0.35 CPU s a process)
            return pl.from_arrow(pq.ParquetFile(pa.BufferReader(data)).read())
        return json.loads(data)

    def verify(self, asset_key: dg.AssetKey, address: PartitionAddress) -> None:
        """Check one stored partition against its manifest without parsing it (see `load`)."""
        self._read_verified(asset_key, address)

    def _read_verified(self, asset_key: dg.AssetKey, address: PartitionAddress) -> tuple[str, bytes]:
        fs, _ = self.location.filesystem()
        directory = self.partition_dir(asset_key, address)
        path = next((p for p in (f"{directory}/{DATA_PARQUET}", f"{directory}/{DATA_JSON}") if exists(fs, p)), None)
        if path is None:
            raise FileNotFoundError(
                f"no stored data for asset {asset_key.to_user_string()!r}, experiment "
                f"{address.experiment!r}, partition {address.partition!r} at "
                f"{self.location.uri(directory)}; materialize it first")
        data = read_bytes(fs, path)
        remedy = (f"delete {self.location.uri(directory)} and rematerialize {asset_key.to_user_string()} "
                  f"(experiment {address.experiment!r}, partition {address.partition!r})")
        try:
            manifest = json.loads(read_bytes(fs, f"{directory}/{MANIFEST}"))
        except (FileNotFoundError, ValueError) as error:
            raise DamagedFileError(f"{self.location.uri(path)}: its manifest is missing or unreadable "
                                   f"({error}); {remedy}") from None
        check_digest(self.location.uri(path), sha256_hex(data), manifest.get("sha256"), remedy,
                     _rows_detail(data, manifest) if path.endswith(DATA_PARQUET) else "")
        return path, data

    def copy_partition(self, asset_key: dg.AssetKey, source: PartitionAddress, target: PartitionAddress) -> None:
        """Copy one stored partition to another experiment's address (the data file hard-linked
        on a local root); the copy's manifest is the source's, naming the target's experiment and
        the one it was forked from, so the copy verifies like any partition. Check the source
        first (`verify`): the copy carries its digest as it is."""
        fs, _ = self.location.filesystem()
        source_dir, target_dir = self.partition_dir(asset_key, source), self.partition_dir(asset_key, target)
        name = DATA_PARQUET if exists(fs, f"{source_dir}/{DATA_PARQUET}") else DATA_JSON
        copy_file(fs, f"{source_dir}/{name}", f"{target_dir}/{name}")
        manifest = self.manifest(asset_key, source)
        manifest.update(experiment=target.experiment, partition=target.partition,
                        forked_from={"experiment": source.experiment, "partition": source.partition,
                                     "written_at": manifest.get("written_at")},
                        written_at=datetime.now(timezone.utc).isoformat())
        write_bytes_atomic(fs, f"{target_dir}/{MANIFEST}", json.dumps(manifest, indent=1, default=str).encode())

    def manifest(self, asset_key: dg.AssetKey, address: PartitionAddress) -> dict[str, Any]:
        """The `_manifest.json` of one stored partition."""
        fs, _ = self.location.filesystem()
        return json.loads(read_bytes(fs, f"{self.partition_dir(asset_key, address)}/{MANIFEST}"))


# directory -> (marker, sizes and mtimes) of its last successful check in this process: a file
# changed since (rewritten, truncated, replaced) has another mtime or size and is hashed again
_verified_dirs: dict[str, tuple[bytes, tuple[tuple[str, int, int], ...]]] = {}


def verify_artifact_dir(directory: Path, marker: bytes, uri: str) -> Path:
    """`directory` once every file its marker lists has the recorded size and sha256; raises
    DamagedFileError naming the first file that differs."""
    recorded = json.loads(marker)
    remedy = f"the artifact {uri} is damaged: delete it and rematerialize the asset that stored it"
    stats = []
    for rel, size in sorted(recorded["files"].items()):
        path = directory / rel
        if not path.is_file() or path.stat().st_size != size:
            actual = path.stat().st_size if path.is_file() else "no file"
            raise DamagedFileError(f"{path}: expected {size} bytes, found {actual}; {remedy}")
        stats.append((rel, size, path.stat().st_mtime_ns))
    fingerprint = (marker, tuple(stats))
    if _verified_dirs.get(str(directory)) == fingerprint:
        return directory
    digests = recorded.get("sha256") or {}
    local = pafs.LocalFileSystem()
    for rel, _, _ in stats:
        check_digest(str(directory / rel), file_sha256(local, str(directory / rel)), digests.get(rel), remedy)
    _verified_dirs[str(directory)] = fingerprint
    return directory


def _rows_detail(data: bytes, manifest: dict[str, Any]) -> str:
    """What a damaged Parquet file holds against its manifest, for the error message."""
    try:
        rows = pq.read_metadata(pa.BufferReader(data)).num_rows
    except (pa.ArrowException, OSError):
        return f" and it is no readable Parquet file (the manifest records {manifest.get('rows')} rows)"
    return f" (the manifest records {manifest.get('rows')} rows, the file holds {rows})"


class ArtifactStore(dg.ConfigurableResource):
    """Directories too large for the IO manager (checkpoints, `datasets.save_to_disk` output).

    Local and S3 roots share this code through pyarrow.fs. A directory counts as stored only
    once its `_COMPLETE.json` marker (file list, sizes, sha256 digests, a fresh version id) is
    written, last; readers (`get_dir`, `local_path`) check the files against it. Replacing a key
    is not atomic for a reader copying it at that moment: give each run its own key (e.g.
    `<experiment>/checkpoints/<stage>/<run_id>`).
    """

    location: StorageLocation
    cache_dir: str | None = Field(
        default=None,
        description="Where `local_path` downloads remote artifacts; default <tmp>/mobileforge.")

    def _path(self, key: str) -> str:
        _, base = self.location.filesystem()
        parts = [check_segment(p, "artifact key part") for p in key.strip("/").split("/")]
        return "/".join([base, ARTIFACTS_DIR, *parts])

    def uri_for(self, key: str) -> str:
        """The URI a directory stored under `key` has (or will have)."""
        return self.location.uri(self._path(key))

    def exists(self, key_or_uri: str) -> bool:
        fs, _ = self.location.filesystem()
        return exists(fs, f"{self._resolve(key_or_uri)}/{ARTIFACT_MARKER}")

    def _resolve(self, key_or_uri: str) -> str:
        if key_or_uri.startswith("s3://") or key_or_uri.startswith("/"):
            return self.location.path_of(key_or_uri)
        return self._path(key_or_uri)

    def put_dir(self, local_dir: str | os.PathLike[str], key: str) -> str:
        """Copy a local directory to `key` (replacing what was there); returns its URI."""
        source = Path(local_dir).resolve()
        if not source.is_dir():
            raise NotADirectoryError(f"artifact source {source} is not a directory")
        fs, _ = self.location.filesystem()
        target = self._path(key)
        if exists(fs, target):
            fs.delete_dir(target)
        fs.create_dir(target, recursive=True)
        local = pafs.LocalFileSystem()
        paths = {str(p.relative_to(source)): p for p in sorted(source.rglob("*")) if p.is_file()}
        files = {rel: p.stat().st_size for rel, p in paths.items()}
        digests = {rel: file_sha256(local, str(p)) for rel, p in paths.items()}
        pafs.copy_files(str(source), target, source_filesystem=local, destination_filesystem=fs)
        write_bytes_atomic(fs, f"{target}/{ARTIFACT_MARKER}",
                           json.dumps({"files": files, "sha256": digests, "version": uuid.uuid4().hex,
                                       "written_at": datetime.now(timezone.utc).isoformat()},
                                      sort_keys=True).encode())
        return self.location.uri(target)

    def _marker(self, uri: str) -> bytes:
        fs, _ = self.location.filesystem()
        source = self._resolve(uri)
        if not exists(fs, f"{source}/{ARTIFACT_MARKER}"):
            raise FileNotFoundError(f"artifact {uri} is missing or incomplete (no marker)")
        return read_bytes(fs, f"{source}/{ARTIFACT_MARKER}")

    def get_dir(self, uri: str, local_dir: str | os.PathLike[str]) -> Path:
        """Copy a stored directory to `local_dir`, checked against its marker's digests; raises if
        it is missing, incomplete or damaged."""
        fs, _ = self.location.filesystem()
        source = self._resolve(uri)
        marker = self._marker(uri)
        dest = Path(local_dir)
        for rel in json.loads(marker)["files"]:
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            pafs.copy_files(f"{source}/{rel}", str((dest / rel).resolve()),
                            source_filesystem=fs, destination_filesystem=pafs.LocalFileSystem())
        verify_artifact_dir(dest, marker, uri)
        return dest

    def local_path(self, uri: str) -> Path:
        """A local directory holding the artifact, checked against its marker's digests: itself
        when local, else a download cached under `cache_dir` (refreshed when the stored directory's
        marker changes). A `file://` URI names a directory outside the store (weights read in
        place) and is returned as it is."""
        if uri.startswith("file://"):
            path = Path(uri.removeprefix("file://"))
            if not path.is_dir():
                raise FileNotFoundError(f"{uri}: no such directory")
            return path
        marker = self._marker(uri)
        source = self._resolve(uri)
        if not self.location.is_s3:
            return verify_artifact_dir(Path(source), marker, uri)
        cache = Path(self.cache_dir or Path(tempfile.gettempdir()) / "mobileforge-artifacts")
        dest = cache / source
        cached = dest / ARTIFACT_MARKER
        if cached.exists() and cached.read_bytes() == marker:
            return verify_artifact_dir(dest, marker, uri)
        if dest.exists():
            shutil.rmtree(dest)
        self.get_dir(uri, dest)
        cached.write_bytes(marker)  # written last: a cache without it is re-downloaded
        return dest

    def put_hf_dataset(self, dataset: Any, key: str, scratch_dir: str | os.PathLike[str]) -> str:
        """`dataset.save_to_disk` into `scratch_dir`, then store it under `key`; returns URI."""
        dataset.save_to_disk(str(scratch_dir))
        return self.put_dir(scratch_dir, key)

    def load_hf_dataset(self, uri: str) -> Any:
        """`datasets.load_from_disk` of a stored dataset (downloaded first when on S3)."""
        import datasets  # heavy import, only where datasets are used

        return datasets.load_from_disk(str(self.local_path(uri)))
