"""Runs launched from the Dagster UI (an asset page's Materialize runs Dagster's own `__ASSET_JOB`; the
Jobs page runs a named stage job) get the experiment tag `mobileforge run` puts on its runs, so the
Runs page filters by experiment whichever way a run was launched."""

import dagster as dg

from pipelines.run_tags import EXPERIMENT_TAG
from resources.experiment import EXPERIMENT_DIMENSION

PARTITION_TAG = "dagster/partition"


def experiment_of_run(tags: dict[str, str]) -> str | None:
    """The experiment a run's partition belongs to: the experiment dimension of a per-app partition, the
    partition of a per-experiment one; None for an unpartitioned run (e.g. base_policy)."""
    experiment = tags.get(f"{PARTITION_TAG}/{EXPERIMENT_DIMENSION}")
    if experiment is None and PARTITION_TAG in tags and "|" not in tags[PARTITION_TAG]:
        experiment = tags[PARTITION_TAG]
    return experiment


@dg.run_status_sensor(run_status=dg.DagsterRunStatus.STARTED, default_status=dg.DefaultSensorStatus.RUNNING,
                      description="Tags a run launched from the UI with the experiment of its partition "
                                  f"(`{EXPERIMENT_TAG}`), as `mobileforge run` tags the runs it launches.")
def experiment_tag_of_ui_runs(context: dg.RunStatusSensorContext) -> dg.SkipReason | None:
    run = context.dagster_run
    if EXPERIMENT_TAG in run.tags:
        return dg.SkipReason(f"run {run.run_id} already carries its experiment")
    experiment = experiment_of_run(run.tags)
    if experiment is None:
        return dg.SkipReason(f"run {run.run_id} ({run.job_name}) has no experiment partition")
    context.instance.add_run_tags(run.run_id, {EXPERIMENT_TAG: experiment})
    context.log.info(f"run {run.run_id} ({run.job_name}): tagged with experiment {experiment!r}")
    return None
