"""The one place that assembles assets, checks, jobs, schedules, sensors and resources per profile."""

import dagster as dg

from assets.base_policy import base_policy
from assets.benchmark_shards import benchmark_for
from assets.critic_calibration import critic_calibration
from assets.curriculum import curriculum_tasks
from assets.exploration import exploration_traces
from assets.learning import fork_pairs, step_datasets
from assets.methods import METHOD_ASSETS
from assets.remedial import remedial_trajectories
from assets.rollout_shards import rollouts_for
from assets.placement import DEPLOYMENT
from pipelines.checks import schema_check
from pipelines.lost_work import WORK_COUNTS, lost_work_check
from pipelines.resources import names_llm_endpoints, resources_for
from pipelines.run_tags import FORKS_TAG
from pipelines.sensors import app_updates
from pipelines.ui_runs import experiment_tag_of_ui_runs
from resources.deployment import Deployment
from resources.experiment import (
    APP_DIMENSION,
    DEFAULT_EXPERIMENT,
    EXPERIMENT_DIMENSION,
    experiment_partitions,
)
from training.methods.registry import METHODS

# What every process a run forks from its forkserver (a training step process; a rollout or benchmark worker,
# assets/worker_pool.py) would otherwise import afresh: the graph, and the trainers with torch, transformers,
# datasets and TRL (benchmarks/import_cost.py), matplotlib's pyplot (~0.9 CPU s in each step that draws a chart),
# litellm (~3 CPU s with openai; after `ops.agent.llm`, which keeps it from fetching its cost map) where the
# deployment names LLM endpoints (an embedded run never calls one), and the storage of the instance each step
# process opens (Dagster's SQLite storage with SQLAlchemy and Alembic: ~0.6 CPU s a step; a module of Dagster's
# own, not of its public API). Forking after these imports is safe: importing starts no threads, and the server
# process itself never trains. A name that fails to import is skipped by multiprocessing without a word
# (tests/layout keeps them importable). Declared here, the name makes the runs of a `mobileforge run` share one
# such server, forked by their zygote once it has imported them (pipelines/run/shared_forkserver.py).
INSTANCE_STORAGE_MODULE = "dagster._core.storage.sqlite_storage"
FORKSERVER_PRELOAD = ["pipelines.definitions", INSTANCE_STORAGE_MODULE,
                      *dict.fromkeys(module for method in METHODS for module in method.preload),
                      "training.inference.local_policy", "ops.evaluation.agg_pyplot", "ops.agent.llm",
                      *(["litellm"] if names_llm_endpoints() else []), "pipelines.run.frozen_preload"]
# steps in processes forked from a server that has imported FORKSERVER_PRELOAD
FORKED_STEPS = {"start_method": {"forkserver": {"preload_modules": FORKSERVER_PRELOAD}}}

# One step each, or the deployment's `shards` steps side by side and a merge (assets.sharding)
rollouts, benchmark_results = rollouts_for(DEPLOYMENT.shards), benchmark_for(DEPLOYMENT.shards)
# sharded stages run their steps side by side on one machine, a forked process each
SHARDED_STAGE_EXECUTOR = (dg.multiprocess_executor.configured(FORKED_STEPS) if DEPLOYMENT.shards > 1
                          else dg.in_process_executor)
TRAINING_DATA = [step_datasets, fork_pairs, remedial_trajectories]
ASSETS = [exploration_traces, curriculum_tasks, rollouts, critic_calibration, base_policy, *TRAINING_DATA,
          *METHOD_ASSETS, benchmark_results]

CHECKS = [
    schema_check(exploration_traces, "exploration_transitions"),
    schema_check(curriculum_tasks, "curriculum_tasks"),
    schema_check("rollout_attempts", "attempts", experiment_partitions),
    schema_check("rollout_steps", "steps", experiment_partitions),
    schema_check("critic_feedback", "critic_feedback", experiment_partitions),
    schema_check(step_datasets, "training_samples"),
    schema_check(fork_pairs, "fork_pairs"),
    schema_check(remedial_trajectories, "training_samples"),
    schema_check(benchmark_results, "benchmark_results"),
    *[lost_work_check(count, experiment_partitions) for count in WORK_COUNTS],
]




def _stage_job(name: str, assets: list[dg.AssetsDefinition], description: str,
               executor: dg.ExecutorDefinition = dg.in_process_executor, forks: bool = False):
    """A job over `assets` and their checks. Locally in-process by default: their steps run one after the
    other anyway, and a process per step would re-import torch for each. In a cluster (the deployment's
    `executor`), a pod or task per step. `forks`: its steps start processes from a forkserver (worker pools,
    the multiprocess executor), which the runs of a `mobileforge run` share (FORKSERVER_PRELOAD)."""
    return dg.define_asset_job(name, selection=dg.AssetSelection.assets(*assets), description=description,
                               executor_def=cluster_executor(DEPLOYMENT) or executor,
                               tags={FORKS_TAG: "true"} if forks else None)


def cluster_executor(deployment: Deployment) -> dg.ExecutorDefinition | None:
    """The executor of every stage in a cluster: dagster-k8s's (a pod per step, the step's op tags adding
    GPUs and labels) or dagster-aws's ECS one (a task per step); None on one machine."""
    if deployment.executor == "k8s":
        from dagster_k8s import k8s_job_executor

        k8s = deployment.k8s
        return k8s_job_executor.configured({
            "job_namespace": k8s.namespace, "env_secrets": list(k8s.env_secrets),
            "env_config_maps": list(k8s.env_config_maps), "service_account_name": k8s.service_account,
            "image_pull_policy": k8s.image_pull_policy}, name="k8s_job_executor")
    if deployment.executor == "ecs":
        from dagster_aws.ecs import ecs_executor

        return ecs_executor
    return None


# The stages of an experiment, in data-flow order; `mobileforge run` launches them in this order
# (pipelines/run/experiment.py) and each shows on the UI's Jobs page under its name. An asset job holds
# one partitioning, so the per-app exploration is its own stage and the curriculum, mined per
# experiment from every app's traces, opens the interaction stage.
STAGES = [
    _stage_job("policy", [base_policy], "The base policy the experiment adapts (the bundled tiny model by default)."),
    _stage_job("discovery", [exploration_traces], "Explore the target apps: one run per app partition."),
    _stage_job("interaction", [curriculum_tasks, rollouts, critic_calibration],
               "Mine the curriculum, roll out K hint-guided attempts per task, judge them, calibrate the critic.",
               SHARDED_STAGE_EXECUTOR, forks=True),
    # The training methods read the same upstream data and each trains on one torch thread,
    # so they run side by side, one process each, forked from a server that has imported the
    # graph and the trainers once (FORKSERVER_PRELOAD).
    _stage_job("training", [*TRAINING_DATA, *METHOD_ASSETS],
               "Filter the step dataset, find fork pairs, repair failed attempts with a teacher (remedial "
               "trajectories), then train every enabled method of the registry side by side ("
               + ", ".join(method.title for method in METHODS if method.enabled) + "; AdaGRPO after RFT, from the RFT "
               "checkpoint: MobileRL §2.1's order).",
               dg.multiprocess_executor.configured({"max_concurrent": 2, **FORKED_STEPS}), forks=True),
    _stage_job("evaluation", [benchmark_results], "Benchmark the base and every trained policy: Pass@k.",
               SHARDED_STAGE_EXECUTOR, forks=True),
]
discovery_job = next(job for job in STAGES if job.name == "discovery")


@dg.schedule(job=discovery_job, cron_schedule="0 2 * * *", execution_timezone="UTC",
             default_status=dg.DefaultScheduleStatus.RUNNING)
def nightly_discovery(context: dg.ScheduleEvaluationContext):
    """Nightly at 02:00 UTC: re-explore every target app (the app partitions the last run registered) of the
    default experiment; the curriculum follows (sensor `curriculum_refresh`). Rollouts and training are
    launched deliberately, not on a clock."""
    if not context.instance.has_dynamic_partition(EXPERIMENT_DIMENSION, DEFAULT_EXPERIMENT):
        return dg.SkipReason(f"experiment {DEFAULT_EXPERIMENT!r} does not exist yet: run `mobileforge run` once")
    return [dg.RunRequest(run_key=f"{context.scheduled_execution_time:%Y%m%d}-{app}",
                          partition_key=dg.MultiPartitionKey({EXPERIMENT_DIMENSION: DEFAULT_EXPERIMENT,
                                                              APP_DIMENSION: app}))
            for app in context.instance.get_dynamic_partitions(APP_DIMENSION)]


# curriculum_tasks is eager: once explorations of an experiment land, this sensor re-mines its
# curriculum. Running by default, so the nightly refresh reaches the curriculum without a click.
curriculum_refresh = dg.AutomationConditionSensorDefinition(
    "curriculum_refresh", target=dg.AssetSelection.assets(curriculum_tasks),
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="Re-mines an experiment's curriculum after its apps were explored again (e.g. by nightly_discovery).")

defs = dg.Definitions(assets=ASSETS, asset_checks=CHECKS, resources=resources_for(), jobs=STAGES,
                      schedules=[nightly_discovery], sensors=[curriculum_refresh, app_updates, experiment_tag_of_ui_runs])
