"""DuckDB over the stored assets, for ad-hoc SQL.

`open_catalog(root)` returns a connection with, for every stored Parquet asset:
  - a view `"<experiment>__<asset>"` over all its partitions in that experiment, and
  - a view `"<asset>"` that unions every experiment and adds an `experiment` column.
`<asset>` is the asset key path joined with `__`; assets without an experiment dimension
appear under experiment `_shared`.

Every partition is checked against the digest its `_manifest.json` recorded (the IO manager's
own check, `ParquetIOManager.verify`) when the catalog opens. A damaged one (a flipped byte, a
truncated file, no manifest) is left out with a `DamagedTableWarning` naming the file and both
digests; the rest stays queryable. The views read the partitions that passed, so they are a
snapshot of what was stored when the catalog opened: reopen it to see partitions written since.

Local roots: views read the checked Parquet files in place (`read_parquet` over their paths).
S3 roots: DuckDB's httpfs extension is a download that is not available offline here, so each
asset is read once through `pyarrow.dataset` and registered as an Arrow table.
"""

from __future__ import annotations

import warnings
from collections import defaultdict
from dataclasses import dataclass
from typing import TYPE_CHECKING

import dagster as dg
import pyarrow.fs as pafs

from ops.data.stored_files import DamagedFileError
from resources.experiment import PartitionAddress
from resources.storage import ARTIFACTS_DIR, DATA_PARQUET, ParquetIOManager, StorageLocation

if TYPE_CHECKING:
    import duckdb


@dataclass(frozen=True)
class StoredPartition:
    experiment: str
    asset: tuple[str, ...]  # asset key path
    partition: str
    path: str  # filesystem path of data.parquet


def stored_partitions(location: StorageLocation) -> list[StoredPartition]:
    """Every stored Parquet partition under the root, sorted by experiment, asset, partition."""
    fs, base = location.filesystem()
    if fs.get_file_info(base).type == pafs.FileType.NotFound:
        return []
    infos = fs.get_file_info(pafs.FileSelector(base, recursive=True))
    out = []
    for info in infos:
        if info.type != pafs.FileType.File or info.base_name != DATA_PARQUET:
            continue
        parts = info.path[len(base):].strip("/").split("/")
        if len(parts) < 4 or parts[0] == ARTIFACTS_DIR:
            continue
        out.append(StoredPartition(parts[0], tuple(parts[1:-2]), parts[-2], info.path))
    return sorted(out, key=lambda p: (p.experiment, p.asset, p.partition))


class DamagedTableWarning(UserWarning):
    """A stored partition the catalog left out: it differs from its manifest's digest, or has none."""


def verified_partitions(location: StorageLocation, partitions: list[StoredPartition]) -> list[StoredPartition]:
    """The partitions whose data file matches its manifest's digest; each other one is named in a
    `DamagedTableWarning` (file, recorded and actual digest, what to rematerialize) and left out."""
    io_manager = ParquetIOManager(location=location)
    intact = []
    for part in partitions:
        try:
            io_manager.verify(dg.AssetKey(list(part.asset)), PartitionAddress(part.experiment, part.partition))
        except DamagedFileError as exc:
            warnings.warn(DamagedTableWarning(f"left out of the catalog: {exc}"), stacklevel=3)
            continue
        intact.append(part)
    return intact


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def open_catalog(root: str | StorageLocation | None = None, *,
                 connection: duckdb.DuckDBPyConnection | None = None,
                 s3_endpoint_override: str | None = None,
                 s3_region: str | None = None) -> duckdb.DuckDBPyConnection:
    """A DuckDB connection (in-memory unless given) with one view per stored asset/experiment
    and one union view per asset; see the module docstring."""
    import duckdb  # here, not with the asset graph: only processes that open a catalog pay for it

    location = (root if isinstance(root, StorageLocation)
                else StorageLocation(root=root, s3_endpoint_override=s3_endpoint_override,
                                     s3_region=s3_region))
    con = connection or duckdb.connect()
    fs, _ = location.filesystem()
    groups: dict[tuple[str, ...], dict[str, list[StoredPartition]]] = defaultdict(
        lambda: defaultdict(list))
    for part in verified_partitions(location, stored_partitions(location)):
        groups[part.asset][part.experiment].append(part)
    per_experiment_views = {f"{e}__{'__'.join(a)}" for a, exps in groups.items() for e in exps}
    for asset, experiments in groups.items():
        name = "__".join(asset)
        if name in per_experiment_views:
            raise ValueError(f"asset view {name!r} collides with an experiment view of the "
                             "same name; rename the asset or the experiment")
        selects = []
        for experiment, parts in experiments.items():
            view = f"{experiment}__{name}"
            if location.is_s3:
                import pyarrow.dataset as pads  # loads pandas: over a second that local roots skip

                table = pads.dataset([p.path for p in parts], filesystem=fs,
                                     format="parquet").to_table()
                con.register(f"_arrow_{view}", table)
                source = _ident(f"_arrow_{view}")
            else:
                paths = ", ".join(_literal(p.path) for p in parts)
                source = f"read_parquet([{paths}], union_by_name = true)"
            con.execute(f"CREATE OR REPLACE VIEW {_ident(view)} AS SELECT * FROM {source}")
            selects.append(f"SELECT {_literal(experiment)} AS experiment, * FROM {_ident(view)}")
        con.execute(f"CREATE OR REPLACE VIEW {_ident(name)} AS "
                    + " UNION ALL BY NAME ".join(selects))
    return con


def catalog_views(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Names of the views `open_catalog` created, sorted."""
    rows = con.execute("SELECT view_name FROM duckdb_views() WHERE NOT internal "
                       "ORDER BY view_name").fetchall()
    return [r[0] for r in rows]


class DuckDBCatalog(dg.ConfigurableResource):
    """Resource form of `open_catalog` for assets and notebooks that query stored tables."""

    location: StorageLocation

    def connect(self) -> duckdb.DuckDBPyConnection:
        return open_catalog(self.location)

