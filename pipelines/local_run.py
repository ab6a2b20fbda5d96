"""Materialize the whole asset graph for one experiment on a persistent instance.

Runs land in $DAGSTER_HOME (default `.mobileforge/dagster_home`), so `dagster dev` started
with the same DAGSTER_HOME shows them. Order: shared assets that are missing (the reusable
base policy), then every app partition of the per-app assets, then the experiment-level
assets with their checks in one in-process run. Given a reconstructable training job, that
last run is split in three: what training reads, the job's assets in parallel processes, and
what reads the trained checkpoints.
"""

import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

import dagster as dg

if TYPE_CHECKING:
    from dagster._core.definitions.reconstruct import ReconstructableJob  # what dg.reconstructable returns

from resources.experiment import APP_DIMENSION, EXPERIMENT_DIMENSION, PartitionAddress, register_experiment
from resources.storage import ParquetIOManager

CODE_VERSION_TAG = "dagster/code_version"  # Dagster tags every materialization with its asset's code version

REPO = Path(__file__).resolve().parents[1]


def default_instance() -> dg.DagsterInstance:
    """The persistent instance under $DAGSTER_HOME, defaulting to the project's own folder."""
    home = Path(os.environ.setdefault("DAGSTER_HOME", str(REPO / ".mobileforge" / "dagster_home")))
    home.mkdir(parents=True, exist_ok=True)
    settings = home / "dagster.yaml"
    if not settings.exists():  # the project's own home runs offline: no usage telemetry
        settings.write_text("telemetry:\n  enabled: false\n")
    return dg.DagsterInstance.get()


def _kind(asset: dg.AssetsDefinition) -> str:
    pd = asset.partitions_def
    if pd is None:
        return "shared"
    if isinstance(pd, dg.MultiPartitionsDefinition):
        return "per_app"
    return "per_experiment"


def _apps(asset: dg.AssetsDefinition) -> list[str]:
    pd = asset.partitions_def
    assert isinstance(pd, dg.MultiPartitionsDefinition)
    dim = next(d for d in pd.partitions_defs if d.name == APP_DIMENSION)
    return list(dim.partitions_def.get_partition_keys())


def _run_config(config: dict[str, dict[str, Any]], selected: list[dg.AssetsDefinition]) -> dict:
    ops = {}
    for asset in selected:
        name = asset.node_def.name
        if name in config:
            ops[name] = {"config": config[name]}
    # INFO keeps the assets' own progress lines and drops Dagster's per-event DEBUG lines
    return {"ops": ops, "loggers": {"console": {"config": {"log_level": "INFO"}}}}


def run_experiment(assets: list[dg.AssetsDefinition], checks: list[dg.AssetChecksDefinition],
                   resources: dict[str, Any], experiment: str = "default",
                   config: dict[str, dict[str, Any]] | None = None, rebuild_shared: bool = False,
                   instance: dg.DagsterInstance | None = None, log: Callable[[str], None] = print,
                   training_job: "ReconstructableJob | None" = None) -> dict[str, float]:
    """Materialize every asset for `experiment`; returns wall seconds per stage.

    `config` maps an asset's op name to its config. `training_job` (its assets run side by side
    in their own processes; needs a persistent `instance`) must build the same assets with the
    same resources as `assets` and `resources`.
    Raises when a run fails (finished runs stay stored and are reused by the next call).
    """
    instance = instance or default_instance()
    config = config or {}
    register_experiment(instance, experiment)
    timings: dict[str, float] = {}

    def materialize(selected: list[dg.AssetsDefinition], partition_key: str | None, label: str) -> None:
        keys = [k for a in selected for k in a.keys]
        selection = dg.AssetSelection.assets(*keys) | dg.AssetSelection.checks_for_assets(*keys)
        log(f"[{experiment}] {label}: {', '.join(k.to_user_string() for k in keys)}")
        start = time.perf_counter()
        result = dg.materialize([*assets, *checks], selection=selection, instance=instance, resources=resources,
                                partition_key=partition_key, run_config=_run_config(config, selected),
                                raise_on_error=True)
        report(result, label, start, len(keys) > 1)

    def report(result: Any, label: str, start: float, per_step: bool) -> None:  # in-process or job result
        timings[label] = time.perf_counter() - start
        for event in result.all_events:
            if event.event_type == dg.DagsterEventType.STEP_SUCCESS and per_step:
                log(f"  {event.step_key}: {event.event_specific_data.duration_ms / 1000:.1f}s")
        failed = [c for c in result.get_asset_check_evaluations() if not c.passed]
        for c in failed:
            log(f"  check failed: {c.asset_key.to_user_string()} {c.check_name}: {c.metadata}")
        log(f"  done in {timings[label]:.1f}s")

    def run_training_job(job: "ReconstructableJob", selected: list[dg.AssetsDefinition]) -> None:
        log(f"[{experiment}] training (parallel processes): "
            + ", ".join(k.to_user_string() for a in selected for k in a.keys))
        start = time.perf_counter()
        with dg.execute_job(job, instance, run_config=_run_config(config, selected), raise_on_error=True,
                            tags={"dagster/partition": experiment}) as result:
            report(result, "training", start, True)

    io_manager = resources.get("io_manager")

    def reusable(asset: dg.AssetsDefinition, key: dg.AssetKey) -> bool:
        """Materialized by the current code version, and its data still in storage."""
        event = instance.get_latest_materialization_event(key)
        if event is None or event.asset_materialization is None:
            return False
        if event.asset_materialization.tags.get(CODE_VERSION_TAG) != asset.code_versions_by_key.get(key):
            return False
        return not isinstance(io_manager, ParquetIOManager) or io_manager.stored(key, PartitionAddress.of(None, None))

    shared = [a for a in assets if _kind(a) == "shared"]
    missing = [a for a in shared if rebuild_shared or not all(reusable(a, k) for k in a.keys)]
    if missing:
        materialize(missing, None, "shared")
    per_app = [a for a in assets if _kind(a) == "per_app"]
    for asset in per_app:
        for app in _apps(asset):
            key = dg.MultiPartitionKey({EXPERIMENT_DIMENSION: experiment, APP_DIMENSION: app})
            materialize([asset], key, f"{asset.node_def.name}[{app}]")
    per_experiment = [a for a in assets if _kind(a) == "per_experiment"]
    if not per_experiment:
        return timings
    if training_job is None:
        materialize(per_experiment, experiment, "experiment")
        return timings
    trained = set(training_job.get_definition().asset_layer.executable_asset_keys)
    training = [a for a in per_experiment if set(a.keys) <= trained]
    after = [a for a in per_experiment if a not in training and a.dependency_keys & trained]
    before = [a for a in per_experiment if a not in training and a not in after]
    materialize(before, experiment, "experiment")
    run_training_job(training_job, training)
    if after:
        materialize(after, experiment, "evaluation")
    return timings
