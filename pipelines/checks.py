"""Asset checks generated from ops/data/schemas.py: stored tables are validated against their schema."""

import dagster as dg
import polars as pl

from ops.data.schemas import get_table, validate
from resources.experiment import UNPARTITIONED, PartitionAddress
from resources.storage import ParquetIOManager


def schema_check(asset: dg.AssetsDefinition | dg.AssetKey | str, table: str,
                 partitions_def: dg.PartitionsDefinition | None = None,
                 io_manager_key: str = "io_manager",
                 blocking: bool = False) -> dg.AssetChecksDefinition:
    """An `@asset_check` named `<table>_schema` that loads the stored partition of `asset`
    through the ParquetIOManager under `io_manager_key` and fails listing `validate` problems.

    Pass the AssetsDefinition (its partitions are used) or a key plus `partitions_def`; the
    check is partitioned like the asset, so it checks the partition just materialized.
    """
    schema = get_table(table)
    if isinstance(asset, dg.AssetsDefinition):
        key, partitions_def = asset.key, asset.partitions_def
    else:
        key = dg.AssetKey.from_coercible(asset)

    @dg.asset_check(asset=key, name=f"{schema.name}_schema", partitions_def=partitions_def,
                    required_resource_keys={io_manager_key}, blocking=blocking,
                    description=f"Stored frame matches the `{schema.name}` schema "
                                "(columns, dtypes, nulls, enums, ranges, JSON).")
    def _check(context: dg.AssetCheckExecutionContext) -> dg.AssetCheckResult:
        io_manager = getattr(context.resources, io_manager_key)
        if not isinstance(io_manager, ParquetIOManager):
            raise TypeError(f"resource {io_manager_key!r} is {type(io_manager).__name__}, "
                            "schema checks need a ParquetIOManager")
        partition = context.partition_key if context.has_partition_key else None
        address = PartitionAddress.of(partitions_def, partition)
        frame = io_manager.load(key, address)
        if not isinstance(frame, pl.DataFrame):
            raise TypeError(f"{key.to_user_string()} is stored as {type(frame).__name__}, "
                            f"not a table; it cannot be checked against {schema.name!r}")
        problems = validate(frame, schema)
        return dg.AssetCheckResult(
            passed=not problems,
            metadata={"rows": frame.height, "experiment": address.experiment,
                      **({"partition": address.partition} if address.partition != UNPARTITIONED else {}),
                      "problems": dg.MetadataValue.json(problems)},
        )

    return _check
