"""Warnings this project knows and accepts, filtered once here (each with its reason) so the run
log shows only news. The `pipelines` package imports it first, so the code location, every run
worker and every step process install the same filters."""

import warnings

import dagster as dg

# (category, message regex, why it is accepted)
ACCEPTED: list[tuple[type[Warning], str, str]] = [
    (dg.BetaWarning, "Class `MultiToSingleDimensionPartitionMapping`",
     "maps an experiment to its per-app partitions; the documented mapping for multi-partitions, used as documented"),
    (dg.PreviewWarning, "Specifying a partitions_def on an AssetCheckSpec",
     "schema checks validate the partition just materialized, which needs partitioned checks"),
    (FutureWarning, "`is_gradient_checkpointing` is deprecated",
     "TRL 1.16's trainers read this transformers 5.23 property; nothing in this project calls it"),
]


def install() -> None:
    """Filter every accepted warning (idempotent)."""
    for category, message, _reason in ACCEPTED:
        warnings.filterwarnings("ignore", message=message, category=category)


install()
