"""`mobileforge run`: materialize the whole graph for one experiment on the active profile."""

import json
import os
from datetime import datetime, timezone
from pathlib import Path

import click

from mobileforge.cli.run_config import experiment_config, parse_overrides, read_config_file


def print_benchmark(io_manager, experiment: str, k: int) -> None:
    """The Pass@k comparison of the experiment's stored benchmark_results."""
    import dagster as dg
    import polars as pl

    from ops.evaluation.benchmark import USER_SPLIT, pass_at_k, pass_at_k_by_split, versus_baseline
    from phonesim.tasks import templates
    from resources.experiment import UNPARTITIONED, PartitionAddress

    results = io_manager.load(dg.AssetKey("benchmark_results"), PartitionAddress(experiment, UNPARTITIONED))
    table = pass_at_k(results, k).filter(pl.col("difficulty") == "all").drop("difficulty")
    by_split = pass_at_k_by_split(results, k).pivot("split", index="policy_id", values=f"pass@{k}")
    splits = [s for s in ("test", "ood", "train", USER_SPLIT) if s in by_split.columns]
    table = table.join(by_split.select("policy_id", *[pl.col(s).alias(f"{s}@{k}") for s in splits]),
                       on="policy_id", how="left")  # the splits side by side (MobileForge reports two suites)
    with pl.Config(tbl_rows=20, tbl_cols=20, float_precision=3, tbl_hide_dataframe_shape=True, tbl_width_chars=250):
        held_out = {t.id for split in ("test", "ood") for t in templates(split=split)}
        what = ("Held-out benchmark" if set(results["template_id"]) <= held_out
                else "Benchmark on your task file" if splits == [USER_SPLIT]
                else "Benchmark on unseen instances of the curriculum's templates")
        click.echo(f"\n{what} ({results['task_id'].n_unique()} tasks, {k} attempts each):")
        click.echo(table)
        paired = versus_baseline(results, k).filter(pl.col("policy_id") != "base")
        if paired.height:
            click.echo(f"Paired with the base, task by task (gained / lost: tasks only one of the two passes at "
                       f"k={k}; p: two-sided exact sign test; CI: 95% Wilson):")
            click.echo(paired)


def print_costs(instance, experiment: str) -> None:
    """CPU and wall seconds of each training method and each policy's benchmark episodes, from the
    metadata of the experiment's latest materializations (CPU time compares methods fairly on a
    loaded machine; wall time is what the run took)."""
    import dagster as dg

    from resources.experiment import latest_materialization
    from training.methods.registry import METHODS

    def latest(asset: str) -> dict:
        record = latest_materialization(instance, dg.AssetKey(asset), experiment)
        return {k: v.value for k, v in record.asset_materialization.metadata.items()} if record else {}

    def figures(meta: dict) -> str:
        return f"{meta['cpu_seconds']:.0f} CPU s / {meta['wall_seconds']:.0f} s"

    trained = {method.name: latest(method.asset) for method in METHODS}
    parts = [f"{name} {figures(meta)}" for name, meta in trained.items()
             if "cpu_seconds" in meta and not meta.get("disabled")]
    if parts:
        click.echo("Training cost: " + ", ".join(parts))
    cost = latest("benchmark_results").get("cost_by_policy") or {}
    if cost:
        click.echo("Benchmark cost: " + ", ".join(f"{p} {figures(c)} ({c['episodes_run']} episodes run)"
                                                 for p, c in cost.items()))


def refuse_busy(experiment: str, fork: str | None) -> None:
    """Refuse, before the asset graph is imported (seconds; minutes on a loaded machine), a run of an
    experiment (or a fork of a parent) that a live `mobileforge run` holds; the lock taken later is
    the check that counts (`resources.experiment_lock`)."""
    from resources.experiment_lock import ExperimentBusy, refuse_if_held
    from resources.storage_root import configured_storage_root

    for name, prefix in [(experiment, ""), *([(fork, f"--fork {fork}: ")] if fork else [])]:
        try:
            refuse_if_held(configured_storage_root(), name)
        except ExperimentBusy as error:
            raise click.ClickException(f"{prefix}{error}") from None


# Not $DAGSTER_HOME/logs: that is Dagster's telemetry folder, which dagster-webserver and the daemon
# move to .logs_queue and post to Dagster's telemetry server whatever `telemetry.enabled` says
# (dagster._core.telemetry_upload, Dagster 1.13); a run's log holds prompts, config and hosts.
RUN_LOG_DIR = "mobileforge_logs"


def run_log_path(experiment: str) -> Path:
    """Where this run's full log goes: $DAGSTER_HOME/mobileforge_logs/<experiment>-<UTC time>-<pid>.log
    (two commands started in the same second get their own)."""
    stamp = datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S")
    return Path(os.environ["DAGSTER_HOME"]) / RUN_LOG_DIR / f"{experiment}-{stamp}-{os.getpid()}.log"


@click.command()
@click.option("--experiment", default="default", show_default=True,
              help="Experiment partition; different experiments are stored side by side.")
@click.option("--config", "config_file", type=click.Path(exists=True, dir_okay=False), default=None,
              help="YAML/JSON mapping asset -> config fields.")
@click.option("--set", "overrides", multiple=True, metavar="ASSET.FIELD=VALUE",
              help="Override one config field, e.g. --set rollouts.attempts=2 (repeatable).")
@click.option("--rebuild-shared", is_flag=True, help="Rebuild shared assets (the base policy) even if stored.")
@click.option("--from", "from_stage", default=None, metavar="STAGE|ASSET",
              help="Start at this stage (policy, discovery, interaction, training, evaluation), reading what "
                   "the experiment stored from the earlier ones, e.g. --from evaluation to re-benchmark; or at "
                   "an asset of a stage, which runs it and what it feeds, e.g. --from adagrpo_checkpoint "
                   "retrains AdaGRPO alone and re-benchmarks.")
@click.option("--fork", "fork", default=None, metavar="PARENT",
              help="With --from: first copy into EXPERIMENT what experiment PARENT stored for what the run "
                   "reads, and its staged episodes (resumed where still valid), e.g. an ablation of training.")
@click.option("--resource", "resource_overrides", multiple=True, metavar="RESOURCE.FIELD=VALUE",
              help="Set one field of a resource for this run, e.g. --resource policy.device=cuda:0 or "
                   "--resource policy.engine=vllm (repeatable; MOBILEFORGE_POLICY_DEVICE does the first too).")
@click.option("--deployment", type=click.Path(exists=True, dir_okay=False), default=None,
              help="Deployment settings (YAML, resources/deployment.py): run concurrency, pool limits, GPUs and "
                   "accelerate configs per training method; default $MOBILEFORGE_DEPLOYMENT, else the local ones.")
def run(experiment: str, config_file: str | None, overrides: tuple[str, ...], rebuild_shared: bool, from_stage: str | None,
        fork: str | None, resource_overrides: tuple[str, ...], deployment: str | None) -> None:
    """Materialize exploration → curriculum → rollouts → training → benchmark for EXPERIMENT.

    Each stage is a run of a named job of the `mobileforge` code location (policy, discovery,
    interaction, training, evaluation), visible in `dagster dev` with the same DAGSTER_HOME.
    """
    from resources.experiment_names import ablation_resources, check_experiment_name, check_fork
    from resources.stage_config import config_problems, load_snapshot

    try:  # before anything is registered or written under its name
        check_experiment_name(experiment)
    except ValueError as error:
        raise click.BadParameter(str(error), param_hint="--experiment") from None
    if fork is not None:
        try:
            check_fork(fork, experiment, from_stage)
        except ValueError as error:
            raise click.BadParameter(str(error), param_hint="--fork") from None
    config, applied = experiment_config(experiment, read_config_file(config_file), overrides)
    if deployment is not None:  # before the graph loads here and in the code location, which inherit it
        os.environ["MOBILEFORGE_DEPLOYMENT"] = str(Path(deployment).resolve())
    resources = ablation_resources(experiment)  # resource settings (e.g. the policy's prompt style)
    for name, fields in parse_overrides(resource_overrides, "--resource").items():
        resources.setdefault(name, {}).update(fields)
    applied += [f"{name}.{field}={json.dumps(value)}" for name, fields in resources.items()
                for field, value in fields.items()]
    problems = config_problems(config, load_snapshot())  # without importing the graph: well under a second
    if problems:
        raise click.UsageError("invalid run config:\n  " + "\n  ".join(problems))
    refuse_busy(experiment, fork)

    from mobileforge.cli.progress import output_to_log, stage_progress
    from pipelines.definitions import defs
    from pipelines.run.config_check import check_config, resource_run_config, stage_jobs
    from pipelines.run.experiment import refuse_missing_inputs, run_experiment
    from pipelines.run.instance import default_instance, instance_exists
    from pipelines.run.launcher import StageFailed
    from pipelines.start_point import ConfigError, split_at
    from resources.experiment_lock import ExperimentBusy

    try:  # before any stage starts: also the Config classes' cross-field rules
        check_config(config, stage_jobs(defs))
        resource_run_config(defs, resources)
        split_at(stage_jobs(defs), config, from_stage)
    except ConfigError as error:
        raise click.UsageError(str(error)) from None
    if from_stage is not None and not instance_exists():  # refused without creating one
        raise click.UsageError(f"--from {from_stage}: nothing is stored under DAGSTER_HOME="
                               f"{os.environ['DAGSTER_HOME']} yet; run experiment {fork or experiment!r} first "
                               "(without --from)")
    instance = default_instance()
    try:  # read only: a refusal writes no log, lock or record
        refuse_missing_inputs(experiment, config, from_stage, fork, instance, defs)
    except ConfigError as error:
        raise click.UsageError(str(error)) from None
    if applied:
        click.echo(f"experiment {experiment!r} is a named ablation; applying {' '.join(applied)} "
                   "(explicit --config/--set values win)")
    log_path = run_log_path(experiment)
    click.echo(f"Experiment {experiment!r}; full log: {log_path}")
    try:
        with output_to_log(log_path) as terminal, stage_progress(terminal) as progress:
            timings = run_experiment(experiment, config, rebuild_shared, instance=instance, observer=progress,
                                     defs=defs, from_stage=from_stage, resources=resources, fork=fork)
    except (StageFailed, ExperimentBusy, ConfigError) as error:
        raise click.ClickException(f"{error}\nFull log: {log_path}") from None
    print_benchmark(defs.resources["io_manager"], experiment, config.get("benchmark_results", {}).get("k", 3))
    print_costs(instance, experiment)
    click.echo("\nStage seconds: " + ", ".join(f"{stage} {seconds:.0f}" for stage, seconds in timings.items())
               + f" (total {sum(timings.values()):.0f}). Full log: {log_path}")
