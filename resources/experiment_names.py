"""Experiment names and named ablations: plain data and checks, no Dagster, so the CLI can refuse
a bad name or apply an ablation before it imports the asset graph (`resources.experiment` holds
what the experiment concept means to Dagster: partitions, storage layout, lineage)."""

from __future__ import annotations

import re
from typing import Any

MAX_NAME_LENGTH = 64

_SEGMENT = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.=|-]*$")
_EXPERIMENT_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


def check_segment(value: str, what: str) -> str:
    """Reject names that would escape or split a storage path."""
    if not _SEGMENT.match(value) or ".." in value:
        raise ValueError(f"{what} {value!r} is not usable as a storage path segment "
                         "(letters, digits, _ . = | -; not starting with . or -)")
    return value


def check_experiment_name(name: str) -> str:
    """An experiment name: letters, digits, `_ . -`, starting with a letter or digit, at most
    64 characters (it names a directory and a Dagster partition)."""
    if len(name) > MAX_NAME_LENGTH or not _EXPERIMENT_NAME.match(name) or ".." in name:
        raise ValueError(f"experiment {name[:80]!r}: use letters, digits, '_', '.', '-', starting with a "
                         f"letter or digit, at most {MAX_NAME_LENGTH} characters")
    return name


# Experiment name -> config overrides ({asset: {field: value}}) that `mobileforge run --experiment
# NAME` applies under any explicit --config/--set value. Help a real deployment would not have
# runs only under such a name, reported beside the faithful default.
NAMED_ABLATIONS: dict[str, dict[str, dict[str, Any]]] = {
    # the programmatic critic's hint is the solver's whole shortest plan from the attempt's start, an
    # oracle demonstration, instead of MobileForge §2.3.2's corrective hint at the first wrong step
    "oracle-plans": {"rollouts": {"hint_steps": 12, "direct_plans": True, "hint_from_start": True}},
}


def ablation_overrides(experiment: str) -> dict[str, dict[str, Any]]:
    """The config overrides of named ablation `experiment`; {} for any other name."""
    return {asset: dict(fields) for asset, fields in NAMED_ABLATIONS.get(experiment, {}).items()}
