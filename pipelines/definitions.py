"""The one place that assembles assets, checks, jobs, schedules and resources per profile."""

import dagster as dg

from assets.base_policy import base_policy
from assets.benchmark import benchmark_results
from assets.critic_calibration import critic_calibration
from assets.curriculum import curriculum_tasks
from assets.exploration import exploration_traces
from assets.learning import fork_pairs, grsd_checkpoint, hifpo_checkpoint, rft_checkpoint, step_datasets
from assets.rollouts import rollouts
from pipelines.checks import schema_check
from resources.experiment import experiment_partitions
from pipelines.resources import resources_for

ASSETS = [exploration_traces, curriculum_tasks, rollouts, critic_calibration, base_policy, step_datasets,
          hifpo_checkpoint, fork_pairs, grsd_checkpoint, rft_checkpoint, benchmark_results]

CHECKS = [
    schema_check(exploration_traces, "exploration_transitions"),
    schema_check(curriculum_tasks, "curriculum_tasks"),
    schema_check("rollout_attempts", "attempts", experiment_partitions),
    schema_check("rollout_steps", "steps", experiment_partitions),
    schema_check("critic_feedback", "critic_feedback", experiment_partitions),
    schema_check(step_datasets, "training_samples"),
    schema_check(fork_pairs, "fork_pairs"),
    schema_check(benchmark_results, "benchmark_results"),
]

# Nightly refresh of what the apps offer: re-explore every app of the default experiment; the
# curriculum follows by its eager automation condition (rollouts and training are launched
# deliberately, not on a clock).
discovery_job = dg.define_asset_job("discovery", selection=dg.AssetSelection.assets(exploration_traces))


@dg.schedule(job=discovery_job, cron_schedule="0 2 * * *", execution_timezone="UTC",
             default_status=dg.DefaultScheduleStatus.STOPPED)
def nightly_discovery(context: dg.ScheduleEvaluationContext):
    """Explore every app of the default experiment."""
    from assets.exploration import APPS

    for app in APPS:
        yield dg.RunRequest(run_key=f"{context.scheduled_execution_time:%Y%m%d}-{app}",
                            partition_key=dg.MultiPartitionKey({"experiment": "default", "app": app}),
                            asset_selection=[exploration_traces.key])


# The three training methods of one experiment read the same upstream data and each trains on
# one torch thread, so they run side by side, one process each (`mobileforge run` uses this job).
training_job = dg.define_asset_job(
    "training", selection=dg.AssetSelection.assets(hifpo_checkpoint, rft_checkpoint, grsd_checkpoint),
    partitions_def=experiment_partitions, executor_def=dg.multiprocess_executor.configured({"max_concurrent": 2}))

defs = dg.Definitions(assets=ASSETS, asset_checks=CHECKS, resources=resources_for(),
                      jobs=[discovery_job, training_job], schedules=[nightly_discovery])


def training_job_def() -> dg.JobDefinition:
    """The resolved training job: a module-level target for `dg.reconstructable` (its step
    processes import this module to rebuild it)."""
    return defs.get_job_def("training")
