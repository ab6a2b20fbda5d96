"""Runs of the workspace's code location: created with its origin (so the UI lists and re-executes
them), launched by the instance's run launcher, followed through the event log."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import dagster as dg
from dagster._core.definitions.selector import JobSubsetSelector
from dagster._core.errors import DagsterUserCodeProcessError
from dagster._core.storage.dagster_run import DagsterRun, DagsterRunStatus
from dagster._core.workspace.context import WorkspaceProcessContext
from dagster._core.workspace.load_target import WorkspaceFileTarget
from dagster._utils.error import SerializableErrorInfo
from dagster.version import __version__ as dagster_version

from pipelines.run.forked_runs import ZygoteFailed, forked_runs
from pipelines.run.instance import REPO
from pipelines.run.monitored_launcher import MonitoredRunLauncher
from pipelines.run.observer import Observer
from pipelines.start_point import StagePart
from resources.deployment import load_deployment

WORKSPACE_FILE = REPO / "workspace.yaml"


LOCATION = "mobileforge"  # the code location workspace.yaml names


# a finished run is seen (and the next one launched) this much later at most; a poll reads the run's new events
POLL_SECONDS = 0.2
# its status (a query costing several times a poll of events on SQLite) is read once its events show the run ended,
# and this often otherwise, in case the end came from elsewhere (a run marked failed after its worker died)
STATUS_SECONDS = 2.0
RUN_ENDED = {dg.DagsterEventType.RUN_SUCCESS, dg.DagsterEventType.RUN_FAILURE, dg.DagsterEventType.RUN_CANCELED}


MAX_CAUSES = 5  # links of an error's cause chain reported


FINISHED = {DagsterRunStatus.SUCCESS, DagsterRunStatus.FAILURE, DagsterRunStatus.CANCELED}


class StageFailed(RuntimeError):
    """A run of a stage failed; finished runs stay stored and are reused by the next call."""


@dataclass
class _Launched:
    stage: str
    run_id: str
    cursor: str | None = None
    failed_checks: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    ended: bool = False  # its events show the run's end
    status_read: float = field(default_factory=time.monotonic)


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
        if not launched.ended and time.monotonic() - launched.status_read < STATUS_SECONDS:
            return None
        launched.status_read = time.monotonic()
        run = self.instance.get_run_by_id(launched.run_id)
        return run if run is not None and run.status in FINISHED else None


def _read(entry: Any, launched: _Launched, observer: Observer) -> None:
    event = entry.dagster_event
    if event is None:
        if entry.user_message:
            observer.run_message(launched.stage, entry.user_message)
        return
    launched.ended |= event.event_type in RUN_ENDED
    if event.event_type == dg.DagsterEventType.ASSET_CHECK_EVALUATION:
        evaluation = event.event_specific_data
        if not evaluation.passed:
            launched.failed_checks.append(f"{evaluation.asset_key.to_user_string()} {evaluation.check_name}"
                                          + (f": {evaluation.description}" if evaluation.description else ""))
    elif event.event_type in (dg.DagsterEventType.STEP_FAILURE, dg.DagsterEventType.RUN_FAILURE):
        error = getattr(event.event_specific_data, "error", None)
        if error is not None and error.cls_name == "DagsterAssetCheckFailedError":
            return  # a blocking check failed: its evaluation (failed_checks) says why
        text = error_messages(error) if error else event.message
        if not any(recorded.endswith(f": {text}") for recorded in launched.errors):  # the run repeats its step's
            launched.errors.append(f"{event.step_key or 'run'}: {text}")


def error_messages(error: SerializableErrorInfo) -> str:
    """An error's message with those of its causes (Dagster wraps a step's exception, e.g. `Error
    occurred while loading input ...`, whose cause names the damaged file, its digests and rows)."""
    messages, seen = [], 0
    while error is not None and seen < MAX_CAUSES:
        message = error.message.strip()
        if message and message not in messages:
            messages.append(message)
        error, seen = error.cause or error.context, seen + 1
    return " <- caused by: ".join(messages)


@contextmanager
def code_location_runner(instance: dg.DagsterInstance, workspace_file: Path = WORKSPACE_FILE,
                         tags: dict[str, str] | None = None) -> Iterator[CodeLocationRunner]:
    """The workspace loaded as `dagster dev` loads it (a code server process for the location), its runs'
    workers forked from a zygote when the instance's launcher is the project's; `tags` go on every run it
    launches."""
    target = WorkspaceFileTarget(paths=[str(workspace_file)])
    origin = next((origin for origin in target.create_origins() if origin.location_name == LOCATION), None)
    forks = isinstance(instance.run_launcher, MonitoredRunLauncher)
    # the zygote imports while the code server does; the code server's own start/stop lines say nothing
    # a user acts on
    with forked_runs(origin if forks else None, instance), \
            WorkspaceProcessContext(instance, target, version=dagster_version, read_only=False,
                                    code_server_log_level="WARNING") as context:
        errors = context.create_request_context().get_code_location_error(LOCATION)
        if errors is not None:
            raise StageFailed(f"code location {LOCATION!r} of {workspace_file} does not load:\n{errors.message}")
        yield CodeLocationRunner(instance, context, tags)


def run_stage(runner: CodeLocationRunner, part: StagePart,
              partitions: list[str | dg.MultiPartitionKey | None], run_config: dict[str, Any],
              observer: Observer) -> None:
    """Launch one run of `part` per partition (at most the deployment's `runs` at once) and wait for all."""
    job = part.job
    max_concurrent_runs = load_deployment().runs
    pending, active = list(partitions), []
    failures: list[str] = []
    try:
        while pending or active:
            while pending and len(active) < max_concurrent_runs:
                try:
                    run_id = runner.launch(part, pending.pop(0), run_config)
                except DagsterUserCodeProcessError as error:  # e.g. config the code location rejects
                    raise StageFailed(f"stage {job.name} could not start: {str(error).split('Stack Trace')[0]}") \
                        from None
                except ZygoteFailed as error:
                    raise StageFailed(f"stage {job.name} could not start: {error}") from None
                active.append(_Launched(job.name, run_id))
            time.sleep(POLL_SECONDS)
            for launched in list(active):
                run = runner.follow(launched, observer)
                if run is None:
                    continue
                active.remove(launched)
                observer.run_finished(job.name, run, launched.failed_checks)
                if run.status != DagsterRunStatus.SUCCESS:
                    failures.append(f"run {run.run_id} ({run.status.value}): "
                                    + "; ".join([*launched.errors, *(f"check failed: {c}" for c in launched.failed_checks)]))
                    pending.clear()  # let the running ones finish; launch nothing new
    except KeyboardInterrupt:
        for launched in active:
            runner.instance.run_launcher.terminate(launched.run_id)
        raise
    if failures:
        raise StageFailed(f"stage {job.name} failed: " + " | ".join(failures))
