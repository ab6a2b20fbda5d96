"""Wall time of the rollouts stage as one step against the deployment's `shards` steps side by side
(assets.sharding), at the same tiny budget, each in a fresh storage root (nothing resumed):

  one step, workers 2   today's local default: one step, its tasks split over two worker processes
  one step, workers 1   one step, one process (the baseline of the ratios)
  2 shards, workers 1   two shard steps in processes of the multiprocess executor, then a merge step

Every variant rolls out the same greedy attempts (the stage's tables are equal; tests/assets check it),
so the times compare the same work. Wall times depend on the machine's load (run it on a quiet one); the
CPU seconds (this process and its ended children: step and worker processes) show what the extra processes
cost.

    python benchmarks/shard_bench.py [--templates 8 --attempts 2]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.support is not an installed package

import dagster as dg  # noqa: E402
import polars as pl  # noqa: E402

from assets.base_policy import base_policy  # noqa: E402
from assets.rollout_shards import rollouts_for  # noqa: E402
from ops.evaluation.benchmark import template_tasks  # noqa: E402
from ops.evaluation.cpu_clock import CpuClock  # noqa: E402
from pipelines.resources import resources_for  # noqa: E402
from resources.experiment import experiment_partitions, register_experiment  # noqa: E402
from tests.support.curriculum import template_task_rows  # noqa: E402

EXPERIMENT = "bench"
TEMPLATES_ENV = "SHARD_BENCH_TEMPLATES"  # how many train templates the curriculum holds (the step processes read it)


@dg.asset(partitions_def=experiment_partitions, name="curriculum_tasks")
def curriculum() -> pl.DataFrame:
    """The first train templates, one instance each, as the curriculum mines them."""
    count = int(os.environ[TEMPLATES_ENV])
    return pl.DataFrame(template_task_rows([task.template_id for task, _ in template_tasks("train", 1, count)]))


def _job(shards: int, executor: dg.ExecutorDefinition) -> dg.JobDefinition:
    stage = rollouts_for(shards)
    job = dg.define_asset_job(f"rollouts_{shards}", selection=dg.AssetSelection.assets(stage), executor_def=executor,
                              partitions_def=experiment_partitions)
    return dg.Definitions(assets=[curriculum, base_policy, stage], jobs=[job],
                          resources=resources_for("local")).resolve_job_def(job.name)


# one job function per variant: a process loads a reconstructable job once, with the storage root of then
def one_step() -> dg.JobDefinition:
    return _job(1, dg.in_process_executor)  # the interaction stage's executor on one machine


def one_step_again() -> dg.JobDefinition:
    return _job(1, dg.in_process_executor)


def two_shards() -> dg.JobDefinition:
    return _job(2, dg.multiprocess_executor)  # what the stage gets with shards > 1


def _timed(job, workers: int, attempts: int, workdir: Path, name: str) -> tuple[float, float, int]:
    """Wall and CPU seconds the rollouts run took, and the attempts it ran."""
    os.environ["MOBILEFORGE_STORAGE_ROOT"] = str(workdir / name)
    (workdir / f"{name}_home").mkdir()
    instance = dg.DagsterInstance.local_temp(str(workdir / f"{name}_home"))
    register_experiment(instance, EXPERIMENT)
    dg.materialize([curriculum, base_policy], instance=instance, resources=resources_for("local"),
                   partition_key=EXPERIMENT)
    clock = CpuClock()
    result = dg.execute_job(dg.reconstructable(job), instance=instance, tags={"dagster/partition": EXPERIMENT},
                            run_config={"ops": {"rollouts": {"config": {"attempts": attempts, "workers": workers}}}})
    seconds, cpu = clock.wall_seconds(), clock.cpu_seconds()
    assert result.success, name
    [event] = [e for e in instance.all_logs(result.run_id, of_type=dg.DagsterEventType.ASSET_MATERIALIZATION)
               if e.dagster_event.asset_key == dg.AssetKey("rollout_attempts")]
    ran = event.asset_materialization.metadata["attempts_run"].value
    assert ran > 0, f"{name}: every attempt resumed, nothing measured"
    return seconds, cpu, ran


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--templates", type=int, default=8)
    parser.add_argument("--attempts", type=int, default=2)
    args = parser.parse_args()
    os.environ[TEMPLATES_ENV] = str(args.templates)
    variants = [("one step, workers 1", one_step, 1), ("one step, workers 2", one_step_again, 2),
                ("2 shards, workers 1", two_shards, 1)]
    with tempfile.TemporaryDirectory() as tmp:
        timed = {name: _timed(job, workers, args.attempts, Path(tmp), f"v{i}")
                 for i, (name, job, workers) in enumerate(variants)}
    print(f"rollouts stage, {args.templates} tasks x {args.attempts} attempts, {os.cpu_count()} cores")
    print("\n".join(_row(name, *figures, baseline=timed[variants[0][0]][0]) for name, figures in timed.items()))


def _row(name: str, seconds: float, cpu: float, attempts: int, baseline: float) -> str:
    return (f"  {name:22s} {seconds:6.1f} s wall ({baseline / seconds:4.2f}x the one-process speed), "
            f"{cpu:6.1f} s CPU, {attempts} attempts run")


if __name__ == "__main__":
    main()
