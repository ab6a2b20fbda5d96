"""The benchmark's policies evaluated side by side, each in a worker process of its own.

One policy's episodes are stepped in one process; on the tiny model a second torch thread gains
little (`PolicyResource.torch_threads`), so the benchmark spreads its policies over `workers`
processes instead (`assets.worker_pool`). Each worker builds its own policy, simulator and
attempt store from what the asset was given, and seeds its policy as the asset would: a policy's
episodes are the same however many workers run. A failing policy fails the asset after the others
finish; every finished episode is staged, so a rerun resumes them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial

import polars as pl

from assets.worker_pool import run_in_workers
from ops.data.attempt_store import ParquetAttemptStore
from ops.evaluation.benchmark import first_apps
from training.methods.checkpoint import Checkpoint
from ops.evaluation.cpu_clock import CpuClock
from ops.agent.episode import Critic, Environment, Policy, TaskSpec
from ops.evaluation.evaluate import Evaluation, evaluate_policy
from ops.rollout.progress import CountdownLog
from ops.rollout.engine import attempts_to_run
from resources.policy import PolicyResource
from resources.portable import PortableResource
from resources.storage import ArtifactStore


@dataclass(frozen=True)
class PolicyEpisodes:
    """One policy's benchmark: what to run, where its attempts are staged, how it decodes."""

    name: str
    checkpoint: Checkpoint
    store: ParquetAttemptStore
    tasks: Sequence[tuple[TaskSpec, str]]
    first_app_of: dict[str, str]  # `ops.evaluation.benchmark.first_apps`' cache, every simulator task searched (instances do not pickle)
    critic: Critic  # gives each episode the judge's verdict (`ops.judging.judges.verdict_critic`)
    world_seed: int
    k: int
    temperature: float
    seed: int
    max_parallel_episodes: int


@dataclass(frozen=True)
class Evaluated:
    """A policy's `benchmark_results` rows and what evaluating it cost (its own process's CPU)."""

    results: pl.DataFrame
    attempts_run: int
    attempts_resumed: int
    cost: dict[str, float]


def evaluate(job: PolicyEpisodes, policy: PolicyResource, artifact_store: ArtifactStore,
             episodes: Callable[[PolicyEpisodes, Policy], Evaluation]) -> Evaluated:
    """`job`'s policy acting in `episodes` (which runs or resumes them) in this process."""
    clock = CpuClock()
    with policy.acting_policy(job.checkpoint, artifact_store, temperature=job.temperature, seed=job.seed) as agent:
        evaluation = episodes(job, agent)
    summary = evaluation.summary
    return Evaluated(evaluation.results, summary.attempts_run, summary.attempts_resumed,
                     {**clock.figures(), "episodes_run": summary.attempts_run})


def simulator_episodes(job: PolicyEpisodes, agent: Policy, make_env: Callable[[], Environment],
                       log: Callable[[str], None]) -> Evaluation:
    """`job`'s episodes in its environment (the simulator's or a device's), progress to `log`."""
    specs = [t for t, _ in job.tasks]
    to_run = attempts_to_run(job.store, specs, agent.version, job.k)
    templated = [t for t in specs if t.template_id]
    expected_apps = first_apps(templated, job.world_seed, dict(job.first_app_of)) if templated else {}
    return evaluate_policy(job.name, agent, job.tasks, make_env, job.store, job.k, expected_apps,
                           job.max_parallel_episodes, CountdownLog(f"benchmark {job.name} episodes", to_run, log),
                           critic=job.critic)


def evaluate_on_simulator(job: PolicyEpisodes, policy: PortableResource[PolicyResource],
                          artifact_store: PortableResource[ArtifactStore], make_env: Callable[[], Environment],
                          log: Callable[[str], None]) -> Evaluated:
    """`evaluate` on the simulator with copies of the resources (in a worker, or in this process)."""
    return evaluate(job, policy.rebuild(), artifact_store.rebuild(),
                    partial(simulator_episodes, make_env=make_env, log=log))


def evaluate_all(jobs: Sequence[PolicyEpisodes], policy: PolicyResource, artifact_store: ArtifactStore,
                 make_env: Callable[[], Environment], workers: int,
                 log: Callable[[str], None]) -> dict[str, Evaluated]:
    """Every job's simulator episodes, by job name, in up to `workers` processes
    (`worker_pool.run_in_workers`; `make_env` must pickle when `workers` > 1: a class or partial, not
    a resource's bound method)."""
    done = run_in_workers(evaluate_on_simulator, jobs, workers, log, PortableResource.of(policy),
                          PortableResource.of(artifact_store), make_env)
    return {job.name: evaluated for job, evaluated in zip(jobs, done, strict=True)}
