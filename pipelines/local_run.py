"""Run every stage of one experiment as runs of the workspace's code location.

Each stage is a named job of `pipelines.definitions.STAGES` (policy, discovery, interaction,
training, evaluation). Runs are created from the code location that workspace.yaml defines — the
one `dagster dev` loads — and started by the instance's run launcher, so they carry that
location's origin: the UI lists them on the timeline and the Jobs page and re-executes them.
Stages run in order; a per-app stage runs one run per app partition, two at a time; a stage of
unpartitioned (shared) assets is skipped while its stored materialization is current. One run at
a time per experiment (resources.experiment_lock); runs a killed predecessor left unfinished are
marked failed when the next one starts.
"""

from __future__ import annotations

import fcntl
import logging
import os
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import dagster as dg
import psutil
from dagster._config import validate_config
from dagster._core.definitions.data_version import INPUT_EVENT_POINTER_TAG_PREFIX
from dagster._core.definitions.decorators.op_decorator import DecoratedOpFunction
from dagster._core.definitions.selector import JobSubsetSelector
from dagster._core.errors import DagsterUserCodeProcessError
from dagster._core.storage.dagster_run import DagsterRun, DagsterRunStatus
from dagster._core.storage.tags import PARTITION_NAME_TAG, get_multidimensional_partition_tag
from dagster._core.workspace.context import WorkspaceProcessContext
from dagster._core.workspace.load_target import WorkspaceFileTarget
from dagster.version import __version__ as dagster_version
from pydantic import BaseModel, ValidationError

from ops.data.stored_files import DamagedFileError
from pipelines.start_point import ConfigError, StagePart, split_at
from resources.experiment import (
    APP_DIMENSION,
    EXPERIMENT_DIMENSION,
    PartitionAddress,
    latest_materialization,
    register_experiment,
)
from resources.experiment_names import check_experiment_name, check_fork
from resources.stage_config import config_problems, constraints_only
from resources.experiment_lock import ExperimentBusy, experiment_lock
from resources.storage import ParquetIOManager, StorageLocation
from resources.validation_messages import validation_problems

CODE_VERSION_TAG = "dagster/code_version"  # Dagster tags every materialization with its asset's code version
REPO = Path(__file__).resolve().parents[1]
WORKSPACE_FILE = REPO / "workspace.yaml"
LOCATION = "mobileforge"  # the code location workspace.yaml names
MAX_CONCURRENT_RUNS = 2  # runs of one stage at once (one per core)
POLL_SECONDS = 0.5
FINISHED = {DagsterRunStatus.SUCCESS, DagsterRunStatus.FAILURE, DagsterRunStatus.CANCELED}
UNFINISHED = [DagsterRunStatus.NOT_STARTED, DagsterRunStatus.STARTING, DagsterRunStatus.STARTED,
              DagsterRunStatus.CANCELING]
EXPERIMENT_TAG = "mobileforge/experiment"  # on every run run_experiment launches, with the host it ran on
HOST_TAG = "mobileforge/host"
LOCK_RUN_TAG = "mobileforge/run"  # the run of `mobileforge run` (its lock owner id) that launched it
FORKED_FROM = "forked_from"  # metadata of a partition `--fork` copied: the experiment it was copied from

log = logging.getLogger(__name__)


def default_instance() -> dg.DagsterInstance:
    """The persistent instance under $DAGSTER_HOME, defaulting to the project's own folder."""
    home = Path(os.environ.setdefault("DAGSTER_HOME", str(REPO / ".mobileforge" / "dagster_home")))
    home.mkdir(parents=True, exist_ok=True)
    settings = home / "dagster.yaml"
    # two commands starting on a fresh home would both create its SQLite tables ("table already exists")
    with (home / ".instance.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not settings.exists():  # the project's own home runs offline: no usage telemetry
            settings.write_text("telemetry:\n  enabled: false\n")
        instance = dg.DagsterInstance.get()
        instance.get_runs(limit=1)  # storages create their tables on first use
        instance.get_dynamic_partitions(EXPERIMENT_DIMENSION)
        return instance


class StageFailed(RuntimeError):
    """A run of a stage failed; finished runs stay stored and are reused by the next call."""


class Observer(Protocol):
    """What `run_experiment` tells its caller while it works."""

    def stage_started(self, stage: str, runs: int) -> None: ...
    def run_message(self, stage: str, message: str) -> None: ...
    def run_finished(self, stage: str, run: DagsterRun, failed_checks: list[str]) -> None: ...
    def stage_finished(self, stage: str, seconds: float) -> None: ...
    def notice(self, message: str) -> None: ...


@dataclass
class LineObserver:
    """Reports as plain lines: one per stage start, failed check and stage end; a stage's latest
    run message at most every `status_every_s` seconds (None: messages dropped)."""

    log: Any = print
    status_every_s: float | None = None
    _last_status: dict[str, float] = field(default_factory=dict)

    def stage_started(self, stage: str, runs: int) -> None:
        self._last_status[stage] = time.monotonic()
        self.log(f"{stage}: {runs} run{'s' if runs != 1 else ''}")

    def run_message(self, stage: str, message: str) -> None:
        now = time.monotonic()
        if self.status_every_s is None or not message or now - self._last_status.get(stage, 0.0) < self.status_every_s:
            return
        self._last_status[stage] = now
        self.log(f"  {stage}: {message.splitlines()[0]}")

    def run_finished(self, stage: str, run: DagsterRun, failed_checks: list[str]) -> None:
        for check in failed_checks:
            self.log(f"  check failed: {check}")

    def stage_finished(self, stage: str, seconds: float) -> None:
        self.log(f"  {stage} done in {seconds:.1f}s")

    def notice(self, message: str) -> None:
        self.log(message)


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


@dataclass(frozen=True)
class PartitionCopy:
    """One stored partition that forking copies: `source` of the parent, `target` of the fork."""

    asset: dg.AssetKey
    partitions_def: dg.PartitionsDefinition
    source: str | dg.MultiPartitionKey
    target: str | dg.MultiPartitionKey

    def address(self, key: str | dg.MultiPartitionKey) -> PartitionAddress:
        return PartitionAddress.of(self.partitions_def, key)


def fork_copies(skipped: list[StagePart], instance: dg.DagsterInstance, parent: str, experiment: str
                ) -> list[PartitionCopy]:
    """Every per-experiment and per-app partition of the skipped stage parts' assets that forking
    `parent` into `experiment` copies, upstream before downstream (shared assets, without an
    experiment, are read by both as they are)."""
    copies = []
    for part in skipped:
        job = part.job
        if job.partitions_def is None:
            continue
        pairs = list(zip(experiment_partition_keys(job, instance, parent),
                         experiment_partition_keys(job, instance, experiment), strict=True))
        for asset in (k for k in job.asset_layer.asset_graph.toposorted_asset_keys if k in part.assets):
            copies += [PartitionCopy(asset, job.partitions_def, source, target) for source, target in pairs]
    return copies


def record_fork(instance: dg.DagsterInstance, copy: PartitionCopy, parent: str, uri: str,
                forked_events: dict[dg.AssetKey, int]) -> int:
    """Report `copy.target` materialized, as a copy of `copy.source`: the parent event's metadata
    and version tags (code, data and input data versions, which the UI's staleness reads) plus
    `forked_from`; its inputs point at the events this fork recorded for them (`forked_events`,
    storage id by asset), not at the parent's. Returns the new event's storage id."""
    source = latest_materialization(instance, copy.asset, str(copy.source))
    event = source.asset_materialization if source is not None else None
    tags = {tag: value for tag, value in (event.tags or {} if event is not None else {}).items()
            if not tag.startswith(PARTITION_NAME_TAG)}  # the parent's partition: the target's are set below
    if isinstance(copy.target, dg.MultiPartitionKey):
        tags.update({get_multidimensional_partition_tag(dimension): key
                     for dimension, key in copy.target.keys_by_dimension.items()})
    for tag in [t for t in tags if t.startswith(INPUT_EVENT_POINTER_TAG_PREFIX)]:
        upstream = dg.AssetKey.from_user_string(tag.split("/", 2)[-1])
        if upstream in forked_events:
            tags[tag] = str(forked_events[upstream])
    metadata = {**(event.metadata if event is not None else {}), "uri": uri,
                "experiment": copy.address(copy.target).experiment, FORKED_FROM: parent,
                "forked_from_run": source.run_id if source is not None else ""}
    instance.report_runless_asset_event(
        dg.AssetMaterialization(copy.asset, partition=str(copy.target), metadata=metadata, tags=tags))
    return latest_materialization(instance, copy.asset, str(copy.target)).storage_id


def _fork_refusals(skipped: list[StagePart], instance: dg.DagsterInstance, parent: str,
                   copies: list[PartitionCopy], io_manager: ParquetIOManager) -> list[str]:
    """What `parent` lacks (`missing_inputs`) or holds damaged of what forking copies."""
    problems = [f"not stored: {asset}" for asset in missing_inputs(skipped, instance, parent, io_manager)]
    for copy in ([] if problems else copies):
        try:
            io_manager.verify(copy.asset, copy.address(copy.source))
        except DamagedFileError as error:
            problems.append(str(error))
    return problems


def fork_experiment(parent: str, experiment: str, skipped: list[StagePart], from_stage: str,
                    instance: dg.DagsterInstance, storage: StorageLocation, io_manager: Any,
                    observer: Observer) -> None:
    """Copy into `experiment` what `parent` stored for the `skipped` stage parts, those a run from
    `from_stage` (a stage or an asset, `pipelines.start_point.split_at`) reads (`fork_copies`), and
    every attempt it staged, and record each copied partition in Dagster (`record_fork`).

    Call it holding `experiment`'s lock. `parent`'s lock is held while copying, and runs a killed
    `mobileforge run` of `parent` left behind are swept as its next run would (ExperimentBusy if one
    still writes), so what is copied is one finished state of `parent`. ConfigError before anything
    is copied when `experiment` already holds some of it (a fork never overwrites an experiment) or
    `parent` lacks some or holds a damaged copy.
    """
    if not isinstance(io_manager, ParquetIOManager):
        raise ConfigError(f"--fork {parent}: forking copies what the ParquetIOManager stored; this profile's IO "
                          f"manager is a {type(io_manager).__name__}")
    held = [asset.to_user_string() for job, asset, stored, _ in stored_counts(skipped, instance, experiment, io_manager)
            if stored and job.partitions_def is not None]
    held += [f"staged {stage} attempts" for stage in sorted(storage.staged_attempts(experiment))]
    if held:
        raise ConfigError(f"--fork {parent}: experiment {experiment!r} already holds {', '.join(held)}, and a fork "
                          f"never overwrites an experiment; fork into a new name (--experiment {experiment}-2), or "
                          f"continue this one without --fork (--experiment {experiment} --from {from_stage})")
    try:
        with experiment_lock(storage.root_uri, parent, report=observer.notice):
            for line in sweep_abandoned_runs(instance, parent):
                observer.notice(line)
            copies = fork_copies(skipped, instance, parent, experiment)
            problems = _fork_refusals(skipped, instance, parent, copies, io_manager)
            if problems:
                raise ConfigError(f"--fork {parent}: experiment {parent!r} has not stored intact what the stages "
                                  f"before {from_stage} make:\n  " + "\n  ".join(problems)
                                  + f"\nrun them for {parent!r} first, or fork from an earlier stage")
            register_experiment(instance, experiment)
            staged = storage.copy_staged_attempts(parent, experiment)
            forked_events: dict[dg.AssetKey, int] = {}
            for copy in copies:
                io_manager.copy_partition(copy.asset, copy.address(copy.source), copy.address(copy.target))
                uri = storage.uri(io_manager.partition_dir(copy.asset, copy.address(copy.target)))
                forked_events[copy.asset] = record_fork(instance, copy, parent, uri, forked_events)
    except ExperimentBusy as error:
        raise ExperimentBusy(f"--fork {parent}: {error}") from None
    assets = sorted({copy.asset.to_user_string() for copy in copies})
    observer.notice(f"forked {parent!r} into {experiment!r} before {from_stage}: {len(copies)} partitions of "
                    f"{', '.join(assets) or 'no asset'}; staged attempts copied: "
                    + (", ".join(f"{stage} {n}" for stage, n in sorted(staged.items())) or "none"))


def stage_jobs(defs: dg.Definitions) -> list[dg.JobDefinition]:
    """The stage jobs (pipelines.definitions.STAGES) of `defs`, in run order."""
    from pipelines.definitions import STAGES

    return [defs.resolve_job_def(stage.name) for stage in STAGES]


def config_classes(jobs: list[dg.JobDefinition]) -> dict[str, type[BaseModel]]:
    """The Config class of every asset (op) of `jobs` that takes config, by op name."""
    classes: dict[str, type[BaseModel]] = {}
    for job in jobs:
        for node in job.nodes:
            compute = getattr(node.definition, "compute_fn", None)
            if isinstance(compute, DecoratedOpFunction) and compute.has_config_arg():
                annotation = compute.get_config_arg().annotation
                if isinstance(annotation, type) and issubclass(annotation, BaseModel):
                    classes[node.name] = annotation
    return classes


def stage_config_schemas(jobs: list[dg.JobDefinition]) -> dict[str, dict[str, Any]]:
    """The JSON schema (constraints only) of every config-taking asset of `jobs`, by asset name:
    what `resources/stage_config_schema.json` stores for the CLI's check before the graph loads."""
    return {asset: constraints_only(cls.model_json_schema()) for asset, cls in sorted(config_classes(jobs).items())}


def check_config(config: dict[str, Any], jobs: list[dg.JobDefinition]) -> None:
    """Raise ConfigError naming `asset.field` for every unknown asset or field and every value the
    asset's Config class (its schema, its model validators) or Dagster's run config check at launch
    would reject: milliseconds once the graph is imported, so bad config fails before any stage."""
    classes = config_classes(jobs)
    problems = config_problems(config, stage_config_schemas(jobs))
    # the rules below assume known assets and well-typed fields: schema problems are reported first
    for asset, fields in ([] if problems else config.items()):
        try:
            classes[asset](**fields)
        except ValidationError as error:
            problems += validation_problems(error, asset)
            continue
        # what the schema admits and the launch would not (e.g. 2.0 for an int)
        schema = next(job for job in jobs if job.has_node_named(asset)).graph.node_named(asset).definition
        result = validate_config(schema.config_schema.config_type, fields)
        problems += [f"{asset}: {e.message}" for e in result.errors or []]
    if problems:
        raise ConfigError("invalid run config:\n  " + "\n  ".join(problems))


def stage_run_config(job: dg.JobDefinition, config: dict[str, dict[str, Any]],
                     resources: dict[str, dict[str, Any]] | None = None) -> dict[str, Any]:
    """The run config of `job`: each of its assets' config, the `resources` section
    (`resource_run_config`) if any, and INFO logs (the assets' progress lines without Dagster's
    per-event DEBUG lines)."""
    ops = {name: {"config": fields} for name, fields in config.items() if job.has_node_named(name)}
    run_config: dict[str, Any] = {"ops": ops, "loggers": {"console": {"config": {"log_level": "INFO"}}}}
    if resources:
        run_config["resources"] = resources
    return run_config


def resource_run_config(defs: dg.Definitions, overrides: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The run config's `resources` section that sets `overrides` ({resource: {field: value}}, e.g. a
    named ablation's `resources.experiment_names.ABLATION_RESOURCES`) on `defs`' resources: each named
    resource's whole configured value with the overrides on top, since a resource given some fields
    at launch takes its class defaults for the others. ConfigError naming `resource.field` for an
    unknown resource or field and for a value the resource refuses, before anything runs."""
    section, problems = {}, []
    for name, fields in overrides.items():
        resource = defs.resources.get(name)
        if not isinstance(resource, dg.ConfigurableResource):
            problems.append(f"{name}: no configurable resource by this name; these are: "
                            f"{', '.join(sorted(k for k, r in defs.resources.items() if isinstance(r, dg.ConfigurableResource)))}")
            continue
        unknown = sorted(set(fields) - set(type(resource).model_fields))
        if unknown:
            problems += [f"{name}.{field}: {type(resource).__name__} has no such field" for field in unknown]
            continue
        merged = {**resource.model_dump(), **fields}
        try:
            type(resource)(**merged)
        except ValidationError as error:
            problems += validation_problems(error, name)
            continue
        section[name] = {"config": merged}
    if problems:
        raise ConfigError("invalid resource settings:\n  " + "\n  ".join(problems))
    return section


@dataclass
class _Launched:
    stage: str
    run_id: str
    cursor: str | None = None
    failed_checks: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


class CodeLocationRunner:
    """Creates and launches runs of the workspace's `mobileforge` code location and follows them
    through the instance's event log."""

    def __init__(self, instance: dg.DagsterInstance, process_context: WorkspaceProcessContext,
                 tags: dict[str, str] | None = None):
        self.instance, self.process_context, self.tags = instance, process_context, tags or {}

    def launch(self, part: StagePart, partition: str | dg.MultiPartitionKey | None,
               run_config: dict[str, Any]) -> str:
        """Create a run of `part`'s job (one partition; only `part`'s assets and their checks when it
        is not the whole stage) with the code location's origin; launch it."""
        job = part.job
        selection = None if part.is_whole else part.assets
        workspace = self.process_context.create_request_context()
        location = workspace.get_code_location(LOCATION)
        (repository,) = location.get_repositories().values()
        remote_job = location.get_job(JobSubsetSelector(location_name=LOCATION, repository_name=repository.name,
                                                        job_name=job.name, op_selection=None,
                                                        asset_selection=selection))
        plan = location.get_execution_plan(remote_job, run_config, step_keys_to_execute=None, known_state=None,
                                           instance=self.instance)
        tags = {**remote_job.tags, **self.tags}
        if partition is not None:
            tags.update(job.partitions_def.get_tags_for_partition_key(str(partition)))
        run = self.instance.create_run(
            job_name=job.name, run_id=None, run_config=run_config, resolved_op_selection=None,
            step_keys_to_execute=None, op_selection=None, status=None, root_run_id=None, parent_run_id=None,
            tags=tags, job_snapshot=remote_job.job_snapshot,
            execution_plan_snapshot=plan.execution_plan_snapshot,
            parent_job_snapshot=remote_job.parent_job_snapshot, remote_job_origin=remote_job.get_remote_origin(),
            job_code_origin=remote_job.get_python_origin(), asset_selection=selection,
            asset_check_selection=remote_job.asset_check_selection if selection else None,
            asset_graph=repository.asset_graph)
        self.instance.launch_run(run.run_id, workspace)
        return run.run_id

    def follow(self, launched: _Launched, observer: Observer) -> DagsterRun | None:
        """Read the run's new events (log lines, check results, errors); the run once finished."""
        while True:
            connection = self.instance.get_records_for_run(launched.run_id, cursor=launched.cursor, limit=500)
            launched.cursor = connection.cursor
            for record in connection.records:
                _read(record.event_log_entry, launched, observer)
            if not connection.has_more:
                break
        run = self.instance.get_run_by_id(launched.run_id)
        return run if run is not None and run.status in FINISHED else None


def _read(entry: Any, launched: _Launched, observer: Observer) -> None:
    event = entry.dagster_event
    if event is None:
        if entry.user_message:
            observer.run_message(launched.stage, entry.user_message)
        return
    if event.event_type == dg.DagsterEventType.ASSET_CHECK_EVALUATION:
        evaluation = event.event_specific_data
        if not evaluation.passed:
            launched.failed_checks.append(f"{evaluation.asset_key.to_user_string()} {evaluation.check_name}")
    elif event.event_type in (dg.DagsterEventType.STEP_FAILURE, dg.DagsterEventType.RUN_FAILURE):
        error = getattr(event.event_specific_data, "error", None)
        launched.errors.append(f"{event.step_key or 'run'}: {error.message.strip() if error else event.message}")


@contextmanager
def code_location_runner(instance: dg.DagsterInstance, workspace_file: Path = WORKSPACE_FILE,
                         tags: dict[str, str] | None = None) -> Iterator[CodeLocationRunner]:
    """The workspace loaded as `dagster dev` loads it (a code server process for the location);
    `tags` go on every run it launches."""
    target = WorkspaceFileTarget(paths=[str(workspace_file)])
    # the code server's own start/stop lines say nothing a user acts on
    with WorkspaceProcessContext(instance, target, version=dagster_version, read_only=False,
                                 code_server_log_level="WARNING") as context:
        errors = context.create_request_context().get_code_location_error(LOCATION)
        if errors is not None:
            raise StageFailed(f"code location {LOCATION!r} of {workspace_file} does not load:\n{errors.message}")
        yield CodeLocationRunner(instance, context, tags)


def _worker(instance: dg.DagsterInstance, run_id: str) -> tuple[int, float] | None:
    """(pid, time it reported) of a run's worker process, from its "Started process" event."""
    records = instance.get_records_for_run(run_id, of_type=dg.DagsterEventType.ENGINE_EVENT, limit=50).records
    for record in records:
        metadata = getattr(record.event_log_entry.dagster_event.event_specific_data, "metadata", None) or {}
        if "pid" in metadata:
            return int(metadata["pid"].value), record.event_log_entry.timestamp
    return None


def _alive(pid: int, reported_at: float) -> bool:
    """Whether process `pid` of this host is the one that reported at `reported_at` and still runs
    (a pid reused by a later process does not count)."""
    try:
        process = psutil.Process(pid)
        return process.status() != psutil.STATUS_ZOMBIE and process.create_time() <= reported_at + 1
    except psutil.NoSuchProcess:
        return False


def sweep_abandoned_runs(instance: dg.DagsterInstance, experiment: str) -> list[str]:
    """Mark failed every unfinished run `mobileforge run` launched for `experiment` on this host
    whose process is gone (killed or crashed without cleanup: Dagster would show it STARTED
    forever); returns one line per run marked. Call it holding the experiment's lock: a run whose
    worker still runs then outlived its launcher, and raises ExperimentBusy rather than letting
    two runs write at once."""
    host = socket.gethostname()
    lines = []
    records = instance.get_run_records(dg.RunsFilter(statuses=UNFINISHED, tags={EXPERIMENT_TAG: experiment}))
    for record in records:
        run = record.dagster_run
        if run.tags.get(HOST_TAG) != host:
            continue
        worker = _worker(instance, run.run_id)
        partition = run.tags.get("dagster/partition", "")
        what = f"run {run.run_id} ({run.job_name}{' ' + partition if partition else ''})"
        if worker is not None and _alive(*worker):
            raise ExperimentBusy(f"{what} of experiment {experiment!r} still runs (pid {worker[0]}) though the command "
                                 "that launched it is gone; wait for it to finish or terminate it (dagster dev, Runs)")
        gone = f"its process (pid {worker[0]}) is gone" if worker else "it never started a process"
        instance.report_run_failed(run, f"marked failed by the next `mobileforge run` of {experiment!r}: {gone} "
                                        "(killed or crashed without cleanup)")
        lines.append(f"{what} was left {run.status.value} but {gone}: marked failed")
    return lines


def run_stage(runner: CodeLocationRunner, part: StagePart,
              partitions: list[str | dg.MultiPartitionKey | None], run_config: dict[str, Any],
              observer: Observer) -> None:
    """Launch one run of `part` per partition (at most MAX_CONCURRENT_RUNS at once) and wait for all."""
    job = part.job
    pending, active = list(partitions), []
    failures: list[str] = []
    try:
        while pending or active:
            while pending and len(active) < MAX_CONCURRENT_RUNS:
                try:
                    run_id = runner.launch(part, pending.pop(0), run_config)
                except DagsterUserCodeProcessError as error:  # e.g. config the code location rejects
                    raise StageFailed(f"stage {job.name} could not start: {str(error).split('Stack Trace')[0]}") \
                        from None
                active.append(_Launched(job.name, run_id))
            time.sleep(POLL_SECONDS)
            for launched in list(active):
                run = runner.follow(launched, observer)
                if run is None:
                    continue
                active.remove(launched)
                observer.run_finished(job.name, run, launched.failed_checks)
                if run.status != DagsterRunStatus.SUCCESS:
                    failures.append(f"run {run.run_id} ({run.status.value}): " + "; ".join(launched.errors))
                    pending.clear()  # let the running ones finish; launch nothing new
    except KeyboardInterrupt:
        for launched in active:
            runner.instance.run_launcher.terminate(launched.run_id)
        raise
    if failures:
        raise StageFailed(f"stage {job.name} failed: " + " | ".join(failures))


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
    observer = observer or LineObserver()
    storage = defs.resources["storage"]
    io_manager = defs.resources.get("io_manager")
    timings: dict[str, float] = {}
    with experiment_lock(storage.root_uri, experiment, report=observer.notice) as owner:
        if fork is not None:
            fork_experiment(fork, experiment, skipped, from_stage, instance, storage, io_manager, observer)
        missing = missing_inputs(skipped, instance, experiment, io_manager)
        if missing:
            raise ConfigError(f"--from {from_stage}: experiment {experiment!r} has not stored what the run "
                              f"reads: {', '.join(missing)}; "
                              "run them first (without --from)")
        register_experiment(instance, experiment)
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
