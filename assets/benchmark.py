"""benchmark_results: Pass@k of the base and adapted policies on held-out tasks: the simulator's held-out
templates (judged by its judges), AndroidWorld's suite (its `is_successful`), or a user's own task file
(judged by the critic)."""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import dagster as dg
import polars as pl
from pydantic import Field, model_validator

from assets.benchmark_workers import Evaluated, PolicyEpisodes, evaluate, evaluate_all
from assets.metadata import chart_md, md_table, tidy
from assets.methods import asset_in
from assets.placement import pool_tags
from ops.evaluation.benchmark import (
    MINED_SEEDS,
    first_apps,
    held_out_tasks,
    instances_per_template,
    pass_at_k,
    pass_at_k_by_split,
    unseen_train_tasks,
    versus_baseline,
)
from ops.config_bounds import MAX_ATTEMPTS, MAX_COUNT, MAX_PARALLEL, MAX_SEED, MAX_TEMPERATURE, MAX_WORKERS
from training.methods.checkpoint import BASE, Checkpoint
from ops.agent.episode import TaskSpec
from training.methods.registry import METHODS
from ops.evaluation.androidworld import evaluate_on_androidworld
from ops.evaluation.plots import pass_at_k_chart
from ops.evaluation.user_suite import load_user_tasks
from ops.judging.judges import CriticJudge, Judge, verdict_critic
from resources.experiment import experiment_of, experiment_partitions
from resources.deployment import DEVICES
from resources.environment import SimulatorResource
from resources.judging import episode_judge, llm_critic
from resources.llm import LLMResource
from resources.policy import PolicyResource
from resources.storage import ArtifactStore, StorageLocation
from resources.viewer_links import BENCHMARK_PAGE, viewer_link


BENCHMARKED = [method for method in METHODS if method.benchmarked]
POLICY_NAMES: tuple[str, ...] = (BASE, *(method.name for method in BENCHMARKED))  # the policies it can evaluate


class BenchmarkConfig(dg.Config):
    split: Literal["test", "train"] = Field(default="test", description=(
        "'test': the held-out templates, never mined: the test split and the out-of-domain split (cross-app "
        "hand-offs, unseen functions), reported side by side; 'train': the curriculum's own templates at "
        "instances it "
        "never mined (seeds from first_seed up, minus instances whose parameters repeat a mined one), to tell "
        "'learned nothing' from 'does not transfer'. RFT rounds 2+ train on variants at seeds from "
        "rft_checkpoint.variant_seed_offset up: keep the seeds the benchmark draws from below it."))
    first_seed: int = Field(default=0, ge=0, le=MAX_SEED, description=(
        f"First template seed; with split 'train' at least {MINED_SEEDS} (the seeds the curriculum tries)."))
    k: int = Field(default=3, ge=1, le=MAX_ATTEMPTS, description="Attempts per task: reports Pass@1..k.")
    seeds_per_template: int = Field(default=1, ge=1, le=MAX_COUNT, description=(
        "Distinct instances per held-out template: seeds from first_seed up, skipping a seed whose instance "
        "(params and initial state) repeats an earlier one; metadata names templates that have fewer."))
    max_templates: int | None = Field(default=None, ge=1, le=MAX_COUNT, description=(
        "Evaluate only the first N templates of each split."))
    temperature: float = Field(default=0.7, ge=0, le=MAX_TEMPERATURE, description="Sampling temperature, so the k attempts differ.")
    seed: int = Field(default=0, ge=0, le=MAX_SEED, description="Sampling seed of the local policies.")
    suite: Literal["phonesim", "androidworld"] = Field(default="phonesim", description=(
        "'phonesim': the simulator's held-out templates (split above); 'androidworld': AndroidWorld's task suite on an "
        "emulator (needs android_world installed; seeds_per_template = n_task_combinations; docs/devices.md)."))
    task_file: str | None = Field(default=None, description=(
        "A user's own held-out suite: a YAML or JSONL task file (app, instruction, optional id, step_budget, "
        "difficulty, expected_answer, success; docs/devices.md), judged by the critic, reported in the same "
        "Pass@k tables. Set, it replaces the simulator's held-out templates; on devices it is required."))
    androidworld_family: str = Field(default="android_world", description="suite=androidworld: registry family.")
    androidworld_tasks: list[str] | None = Field(default=None, description=(
        "suite=androidworld: task names to run; None runs the whole family."))
    emulator_console_port: int = Field(default=5554, ge=1, le=65535, description="suite=androidworld: console port.")
    emulator_grpc_port: int = Field(default=8554, ge=1, le=65535, description="suite=androidworld: the emulator's gRPC port.")
    max_parallel_episodes: int = Field(default=64, ge=1, le=MAX_PARALLEL, description=(
        "Episodes stepped together (a local policy answers them in length-sorted chunks)."))
    workers: int = Field(default=2, ge=1, le=MAX_WORKERS, description=(
        "Policies evaluated at once on the embedded simulator, each in a worker process of its own (one torch "
        "thread each by default, policy.torch_threads); 1 evaluates them one after another in the step's process. "
        "On devices (adb) and the AndroidWorld suite, policies are evaluated one at a time in the step's process."))
    policies: list[str] | None = Field(default=None, description=(
        "Evaluate only these policies (the base always, for the paired comparison), e.g. ['base', 'rft'] for a "
        "ten-seed table of one method; None evaluates the base and every method the run trained (enabled)."))

    @model_validator(mode="after")
    def _base_evaluated(self) -> "BenchmarkConfig":
        unknown = sorted(set(self.policies or ()) - set(POLICY_NAMES))
        if unknown:
            raise ValueError(f"benchmark_results.policies: {', '.join(unknown)} not among {', '.join(POLICY_NAMES)}")
        if self.policies is not None and "base" not in self.policies:
            raise ValueError("benchmark_results.policies: include 'base': every adapted policy is paired with it")
        return self

    @model_validator(mode="after")
    def _unseen_instances(self) -> "BenchmarkConfig":
        if self.split == "train" and self.first_seed < MINED_SEEDS:
            raise ValueError(f"benchmark_results.first_seed: {self.first_seed} with split 'train' would evaluate "
                             f"instances the curriculum mines; use {MINED_SEEDS} or more")
        return self


def versus_md(versus: pl.DataFrame, k: int) -> dg.MetadataValue:
    """The paired comparison with the base (`versus_baseline` at Pass@k) as a markdown table."""
    k_col = f"pass@{k}"
    return md_table(["policy", "tasks passed", k_col, "95% CI", "gained", "lost", "sign test p"],
                    [(r["policy_id"], r["passed"], r[k_col], f"{r['ci_low']:.2f}-{r['ci_high']:.2f}",
                      r["gained"], r["lost"], r["p_value"]) for r in versus.iter_rows(named=True)])


RATE_HEADERS = {"progress": "progress", "false_complete": "false complete", "side_effects": "side effects",
                "overdue": "overdue", "mean_steps": "steps", "first_app_right": "first app right"}


def _androidworld(config: BenchmarkConfig):
    """AndroidWorld's suite settings and its emulator, loaded once for every policy."""
    from ops.evaluation.androidworld import AndroidWorldConfig, available, load_env

    if not available():
        raise ValueError("benchmark_results.suite: 'androidworld' needs the android_world package (installed from its "
                         "repository) and a running emulator; see docs/devices.md")
    aw_config = AndroidWorldConfig(family=config.androidworld_family, n_task_combinations=config.seeds_per_template,
                                   tasks=tuple(config.androidworld_tasks) if config.androidworld_tasks else None,
                                   console_port=config.emulator_console_port, grpc_port=config.emulator_grpc_port)
    return aw_config, load_env(aw_config)


def _first_apps(templated: list, world_seed: int, storage: StorageLocation, warn) -> tuple[dict[str, str], int]:
    """The first app of each simulator task (`first_apps`), read from and added to the simulator's cache; and
    how many were searched now. No simulator task (a user's task file): nothing to search."""
    if not templated:
        return {}, 0
    from resources.simulator_cache import SimulatorCache

    cache = SimulatorCache(storage, "first_apps")
    known = cache.load(warn)
    cached = len(known)
    first_apps(templated, world_seed, known)  # searches the instances not cached yet
    if len(known) > cached:
        cache.save(known)
    return known, len(known) - cached


@dataclass(frozen=True)
class BenchmarkPlan:
    """What a benchmark step (the single one, a shard or the merge) derives alike from the config and inputs."""

    experiment: str
    tasks: list[tuple[TaskSpec, str]]  # (task, difficulty)
    templated: list[TaskSpec]  # the simulator's tasks among them
    short: dict[str, int]  # templates with fewer distinct instances than asked
    judge: Judge
    candidates: dict[str, Checkpoint]  # the policies to evaluate, by name

    def job_names(self) -> dict[str, str]:
        """Policy name -> the name of the job evaluating its checkpoint: untrained methods reuse the base's episodes."""
        first: dict[str, str] = {}
        return {name: first.setdefault(checkpoint.uri or checkpoint.version, name)
                for name, checkpoint in self.candidates.items()}


@dataclass(frozen=True)
class BenchmarkDone:
    """Evaluated episodes by job name, and how many first apps were searched (not read from the cache)."""

    evaluated: dict[str, Evaluated]
    first_apps_searched: int


def plan_benchmark(experiment: str, config: BenchmarkConfig, checkpoints: dict[str, Checkpoint],
                   simulator: SimulatorResource, llm: LLMResource, warn: Callable[[str], None]) -> BenchmarkPlan:
    if config.task_file is not None:
        tasks, judge = load_user_tasks(config.task_file, simulator.apps()), CriticJudge(llm_critic(llm))
    elif config.suite == "phonesim" and not simulator.judge_name:
        raise ValueError("benchmark_results.task_file: on devices the benchmark is a task file of your own (the "
                         "simulator's held-out templates need the simulator); see docs/devices.md")
    else:
        tasks = (held_out_tasks(config.seeds_per_template, config.max_templates, simulator.world_seed, config.first_seed)
                 if config.split == "test" else
                 unseen_train_tasks(config.seeds_per_template, config.first_seed, config.max_templates,
                                    simulator.world_seed))
        judge = episode_judge(simulator, llm)
    templated = [t for t, _ in tasks if t.template_id]
    short = {template: n for template, n in instances_per_template(templated).items() if n < config.seeds_per_template}
    if short:
        warn(f"benchmark: {len(short)} templates have fewer than {config.seeds_per_template} distinct "
             f"instances, so fewer tasks: {short}")
    by_name = {BASE: checkpoints["base_policy"], **{method.name: checkpoints[method.asset] for method in BENCHMARKED}}
    candidates = {name: checkpoint for name, checkpoint in by_name.items()
                  if not checkpoint.disabled and (config.policies is None or name in config.policies)}
    switched_off = sorted(name for name in config.policies or () if by_name[name].disabled)
    if switched_off:
        warn(f"benchmark: {', '.join(switched_off)} asked for but switched off in this run "
             f"(<method>_checkpoint.enabled=false): not evaluated")
    return BenchmarkPlan(experiment, tasks, templated, short, judge, candidates)


def evaluate_benchmark(plan: BenchmarkPlan, tasks: list[tuple[TaskSpec, str]], config: BenchmarkConfig,
                       simulator: SimulatorResource, policy: PolicyResource, storage: StorageLocation,
                       artifact_store: ArtifactStore, log: Callable[[str], None],
                       warn: Callable[[str], None]) -> BenchmarkDone:
    """Run (or resume) every candidate policy's episodes of `tasks` (AndroidWorld's suite: all of its own)."""
    templated = [t for t, _ in tasks if t.template_id]
    known, searched = _first_apps(templated, simulator.world_seed, storage, warn)
    names = plan.job_names()
    jobs = [PolicyEpisodes(name, plan.candidates[name], storage.attempt_store(plan.experiment, f"benchmark/{name}"),
                           tasks, known, verdict_critic(plan.judge), simulator.world_seed, config.k, config.temperature,
                           config.seed, config.max_parallel_episodes) for name in dict.fromkeys(names.values())]
    if config.suite == "androidworld":
        aw_config, env = _androidworld(config)  # one emulator: one policy at a time, in this process
        evaluated = {job.name: evaluate(job, policy, artifact_store, lambda job, agent: evaluate_on_androidworld(
            job.name, agent, aw_config, job.store, job.k, env)) for job in jobs}
    else:
        # the simulator in `config.workers` processes; devices (MOBILEFORGE_ENV=adb...) in this one, whose
        # device pool serves every policy in turn
        make_env, workers = (simulator.env_factory(), config.workers) if isinstance(simulator, SimulatorResource) \
            else (simulator.make_env, 1)
        # trained policies first: their episodes run longer than the base's (which stops early), so the
        # workers finish closer together (measured: base 58 s against 61-107 s for the four methods)
        evaluated = evaluate_all(jobs[::-1], policy, artifact_store, make_env, workers, log)
    for name, done in evaluated.items():
        log(f"benchmark {name}: {done.attempts_run} episodes run, {done.attempts_resumed} resumed")
    return BenchmarkDone(evaluated, searched)


def benchmark_output(plan: BenchmarkPlan, done: BenchmarkDone, config: BenchmarkConfig) -> dg.Output[pl.DataFrame]:
    """`benchmark_results` (policies in the plan's order) with the Pass@k tables as its metadata."""
    specs = [t for t, _ in plan.tasks]
    names = plan.job_names()
    cost = {name: evaluated.cost for name, evaluated in done.evaluated.items()}
    results = pl.concat([done.evaluated[names[name]].results.with_columns(pl.lit(name).alias("policy_id"))
                         for name in plan.candidates])
    table = pass_at_k(results, config.k)
    overall = table.filter(pl.col("difficulty") == "all")
    pass_cols = ["tasks", *[c for c in table.columns if c.startswith(("pass@", "grounded@"))]]
    rate_cols = [c for c in RATE_HEADERS if c in table.columns]
    return dg.Output(results, metadata=tidy({
        "episodes": results.height, "tasks": len(specs), "split": config.split if config.task_file is None else "user",
        "judge": plan.judge.name,
        "templates_short_of_instances": dg.MetadataValue.json(plan.short),
        "first_apps_searched": done.first_apps_searched,  # the rest were read from the simulator cache (resources.simulator_cache)
        # per policy evaluated here (not one reusing another's episodes); resumed episodes cost little
        "cost_by_policy": dg.MetadataValue.json(cost),
        f"pass@{config.k}_chart": chart_md(pass_at_k_chart(table, config.k)),
        "pass_at_k": md_table(["policy", *pass_cols], overall.select("policy_id", *pass_cols).rows()),
        "pass_at_k_by_split": md_table(["policy", "split", *pass_cols],
                                       pass_at_k_by_split(results, config.k, {} if plan.templated != specs else None)
                                       .select("policy_id", "split", *pass_cols).rows()),
        "versus_base": versus_md(versus_baseline(results, config.k), config.k),
        "viewer": viewer_link(plan.experiment, BENCHMARK_PAGE),  # per task, base against each policy, to the frames
        "episode_rates": md_table(["policy", *(RATE_HEADERS[c] for c in rate_cols)],
                                  overall.select("policy_id", *rate_cols).rows()),
        "by_difficulty": md_table(["policy", "difficulty", *pass_cols],
                                  table.filter(pl.col("difficulty") != "all")
                                  .select("policy_id", "difficulty", *pass_cols).rows()),
    }))


BENCHMARK_INS = {asset: asset_in(asset) for asset in ("base_policy", *(method.asset for method in BENCHMARKED))}
BENCHMARK_OUT = dg.AssetOut(code_version="benchmark-10", description=(
    "One row per benchmark episode (policy x task x attempt) on held-out templates (or unseen instances of the "
    "curriculum's): success, progress, false complete, side effects, overdue."))


@dg.asset(partitions_def=experiment_partitions, group_name="evaluation", code_version=BENCHMARK_OUT.code_version,
          pool=DEVICES, op_tags=pool_tags(DEVICES), ins=BENCHMARK_INS, description=BENCHMARK_OUT.description)
def benchmark_results(context: dg.AssetExecutionContext, config: BenchmarkConfig, simulator: SimulatorResource,
                      policy: PolicyResource, llm: LLMResource, storage: StorageLocation, artifact_store: ArtifactStore,
                      **checkpoints: Checkpoint) -> dg.Output[pl.DataFrame]:
    plan = plan_benchmark(experiment_of(context), config, checkpoints, simulator, llm, context.log.warning)
    done = evaluate_benchmark(plan, plan.tasks, config, simulator, policy, storage, artifact_store, context.log.info,
                              context.log.warning)
    return benchmark_output(plan, done, config)
