"""Run every stage of one experiment as runs of the workspace's code location.

Each stage is a named job of `pipelines.definitions.STAGES` (policy, discovery, interaction,
training, evaluation). Runs are created from the code location that workspace.yaml defines — the
one `dagster dev` loads — and started by the instance's run launcher, so they carry that
location's origin: the UI lists them on the timeline and the Jobs page and re-executes them.
Stages run in order; a per-app stage runs one run per app partition, two at a time; a stage of
unpartitioned (shared) assets is skipped while its stored materialization is current. One run at
a time per experiment (resources.experiment_lock); runs a killed predecessor left unfinished are
marked failed by Dagster's run monitoring where its daemon runs (`pipelines.run.monitored_launcher`),
and in any case when the next one starts.
"""

from __future__ import annotations

import socket
import time
from pathlib import Path
from typing import Any

import dagster as dg

from pipelines.run.config_check import check_config, resource_run_config, stage_jobs, stage_run_config
from pipelines.run.fork import fork_experiment
from pipelines.run.instance import default_instance
from pipelines.run.launcher import WORKSPACE_FILE, code_location_runner, run_stage
from pipelines.run.observer import LineObserver, Observer
from pipelines.run.stored import missing_inputs, stage_partitions
from pipelines.run.sweep import sweep_abandoned_runs
from pipelines.run_tags import EXPERIMENT_TAG, HOST_TAG, LOCK_RUN_TAG
from pipelines.start_point import ConfigError, split_at
from resources.experiment import register_experiment, sync_app_partitions
from resources.experiment_lock import experiment_lock
from resources.experiment_names import check_experiment_name, check_fork


def _missing_message(from_stage: str | None, experiment: str, missing: list[str]) -> str:
    return (f"--from {from_stage}: experiment {experiment!r} has not stored what the run reads: {', '.join(missing)}; "
            "run them first (without --from)")


def refuse_missing_inputs(experiment: str, config: dict[str, dict[str, Any]], from_stage: str | None,
                          fork: str | None, instance: dg.DagsterInstance, defs: dg.Definitions) -> None:
    """ConfigError when a run from `from_stage` would read what `experiment` (or, forking, its parent
    `fork`) has not stored. Reads only, takes no lock: a refusal writes nothing. `run_experiment`
    checks again holding the lock."""
    skipped, _ = split_at(stage_jobs(defs), config, from_stage)
    source = fork or experiment
    missing = missing_inputs(skipped, instance, source, defs.resources.get("io_manager"))
    if missing:
        raise ConfigError(_missing_message(from_stage, source, missing)
                          + (", or fork from an earlier stage" if fork else ""))


def run_experiment(experiment: str = "default", config: dict[str, dict[str, Any]] | None = None,
                   rebuild_shared: bool = False, instance: dg.DagsterInstance | None = None,
                   observer: Observer | None = None, defs: dg.Definitions | None = None,
                   workspace_file: Path = WORKSPACE_FILE, from_stage: str | None = None,
                   resources: dict[str, dict[str, Any]] | None = None, fork: str | None = None
                   ) -> dict[str, float]:
    """Run every stage of `experiment` through the code location; returns wall seconds per stage.
    With `from_stage` (a stage, or an asset of one: `pipelines.start_point.split_at`), the stages
    before it, and for an asset the assets of its stage it does not feed, are not run: their stored
    outputs for `experiment` are read (ConfigError naming what is missing, before anything runs).
    With `fork` too, they are first copied from experiment `fork` (`fork_experiment`), whose staged
    attempts the stages then resume where they are still valid.

    `config` maps an asset's op name to its config, `resources` a resource's name to settings of it
    that every stage's runs use instead of the configured ones (`resource_run_config`); `defs`
    (default: pipelines.definitions.defs, what workspace.yaml loads) supplies the stage jobs, the storage root and the IO manager the
    reuse check reads. The experiment's name and config are checked first (ConfigError), then its
    lock is held for the whole run (ExperimentBusy when another run holds it) and runs a killed
    predecessor left unfinished are marked failed, with what the rerun resumes. Raises
    StageFailed when a run fails.
    """
    if defs is None:
        from pipelines.definitions import defs
    config = config or {}
    check_experiment_name(experiment)
    if fork is not None:
        try:
            check_fork(fork, experiment, from_stage)
        except ValueError as error:
            raise ConfigError(str(error)) from None
    check_config(config, stage_jobs(defs))
    resource_config = resource_run_config(defs, resources or {})
    skipped, parts = split_at(stage_jobs(defs), config, from_stage)
    instance = instance or default_instance()
    refuse_missing_inputs(experiment, config, from_stage, fork, instance, defs)
    observer = observer or LineObserver()
    storage = defs.resources["storage"]
    io_manager = defs.resources.get("io_manager")
    timings: dict[str, float] = {}
    with experiment_lock(storage.root_uri, experiment, report=observer.notice) as owner:
        if fork is not None:
            fork_experiment(fork, experiment, skipped, from_stage, instance, storage, io_manager, observer)
        missing = missing_inputs(skipped, instance, experiment, io_manager)
        if missing:
            raise ConfigError(_missing_message(from_stage, experiment, missing))
        register_experiment(instance, experiment)
        apps = defs.resources["simulator"].apps()
        added, removed = sync_app_partitions(instance, apps)
        if added and len(added) < len(apps):  # not the first run: say which apps are new
            observer.notice(f"target apps added, explored from this run on: {', '.join(added)}")
        if removed:
            observer.notice(f"target apps removed, no longer explored (their stored traces stay): {', '.join(removed)}")
        abandoned = sweep_abandoned_runs(instance, experiment)
        for line in abandoned:
            observer.notice(line)
        if abandoned:
            staged = storage.staged_attempts(experiment)
            observer.notice(f"resuming experiment {experiment!r}: finished attempts staged before the interruption: "
                            + (", ".join(f"{stage} {n}" for stage, n in sorted(staged.items())) or "none")
                            + "; the stages run again and resume those made under the same settings")
        tags = {EXPERIMENT_TAG: experiment, HOST_TAG: socket.gethostname(), LOCK_RUN_TAG: owner.run}
        with code_location_runner(instance, workspace_file, tags) as runner:
            for part in parts:
                job = part.job
                partitions = stage_partitions(part, instance, experiment, rebuild_shared, io_manager)
                if not partitions:
                    continue
                if not part.is_whole:
                    observer.notice(f"stage {job.name} runs {part.describe()} only; the rest of it is read as stored")
                observer.stage_started(job.name, len(partitions))
                start = time.perf_counter()
                run_stage(runner, part, partitions, stage_run_config(job, config, resource_config), observer)
                timings[job.name] = time.perf_counter() - start
                observer.stage_finished(job.name, timings[job.name])
    return timings
