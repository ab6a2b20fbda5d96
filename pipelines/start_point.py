"""Where `mobileforge run --from` starts: a stage, or one asset of a stage.

From a stage, the stages before it are read as stored. From an asset, so are the other assets of its
stage that it does not feed: `--from adagrpo_checkpoint` retrains AdaGRPO alone, reads HiFPO, RFT and
GRSD as stored, then benchmarks. A stage's assets that run, or are read, form a `StagePart`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import dagster as dg


class ConfigError(ValueError):
    """Run config that the stages' assets would reject; raised before anything runs."""


@dataclass(frozen=True)
class StagePart:
    """Some assets of one stage job: all of them (`whole`) or those an asset-level start selects."""

    job: dg.JobDefinition
    assets: frozenset[dg.AssetKey]

    @classmethod
    def whole(cls, job: dg.JobDefinition) -> StagePart:
        return cls(job, frozenset(job.asset_layer.executable_asset_keys))

    @property
    def is_whole(self) -> bool:
        return self.assets == self.job.asset_layer.executable_asset_keys

    def runs_op(self, name: str) -> bool:
        """Whether this part materializes the asset op `name` (a config key)."""
        graph = self.job.asset_layer.asset_graph
        return any(graph.assets_def_for_key(key).node_def.name == name for key in self.assets)

    def describe(self) -> str:
        return ", ".join(sorted(key.to_user_string() for key in self.assets))


def _named_assets(job: dg.JobDefinition) -> dict[str, frozenset[dg.AssetKey]]:
    """Each name `--from` accepts in `job` (an asset, or the op of a multi-asset such as `rollouts`)
    -> the assets that start must materialize together (an op's whole execution set)."""
    graph = job.asset_layer.asset_graph
    names: dict[str, frozenset[dg.AssetKey]] = {}
    for key in job.asset_layer.executable_asset_keys:
        together = frozenset(graph.get(key).execution_set_asset_keys)
        names[key.to_user_string()] = together
        names[graph.assets_def_for_key(key).node_def.name] = together
    return names


def _fed_within(job: dg.JobDefinition, start: frozenset[dg.AssetKey]) -> frozenset[dg.AssetKey]:
    """`start` and every asset of `job` downstream of it (with their execution sets)."""
    graph, executable = job.asset_layer.asset_graph, job.asset_layer.executable_asset_keys
    selected, frontier = set(start), list(start)
    while frontier:
        for child in graph.get(frontier.pop()).child_keys:
            if child in executable and child not in selected:
                new = set(graph.get(child).execution_set_asset_keys) - selected
                selected |= new
                frontier += new
    return frozenset(selected)


def split_at(jobs: list[dg.JobDefinition], config: dict[str, Any], start: str | None
             ) -> tuple[list[StagePart], list[StagePart]]:
    """(what is read as stored, what runs) when the run starts at `start`: a stage name, or an asset
    (or multi-asset op) name of a stage, whose stage then runs that asset and what it feeds there.
    ConfigError for an unknown name, or for config of an asset that does not run (no effect)."""
    if start is None:
        return [], [StagePart.whole(job) for job in jobs]
    stage_names = [job.name for job in jobs]
    if start in stage_names:
        cut = stage_names.index(start)
        read, run = [StagePart.whole(job) for job in jobs[:cut]], [StagePart.whole(job) for job in jobs[cut:]]
    else:
        found = [(i, names[start]) for i, job in enumerate(jobs) if start in (names := _named_assets(job))]
        if not found:
            raise ConfigError(f"--from {start!r}: no such stage or asset; the stages are {', '.join(stage_names)}; "
                              "an asset of one (e.g. adagrpo_checkpoint) starts there and reads the rest of its "
                              "stage as stored")
        ((cut, keys),) = found
        job = jobs[cut]
        selected = _fed_within(job, keys)
        rest = frozenset(job.asset_layer.executable_asset_keys) - selected
        read = [StagePart.whole(j) for j in jobs[:cut]] + ([StagePart(job, rest)] if rest else [])
        run = [StagePart(job, selected)] + [StagePart.whole(j) for j in jobs[cut + 1:]]
    ignored = [name for name in config if not any(part.runs_op(name) for part in run)
               and any(part.runs_op(name) for part in read)]
    if ignored:
        raise ConfigError(f"--from {start}: config of {', '.join(ignored)} would have no effect, it does not run "
                          f"when the run starts at {start}; drop it or start from an earlier stage or asset")
    return read, run
