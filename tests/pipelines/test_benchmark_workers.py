"""The benchmark's policies in worker processes: the same episodes as one after another, progress
relayed, and a failing policy failing the call only after the others staged their episodes."""

from __future__ import annotations

import polars as pl
import pytest

from assets.benchmark_workers import PolicyEpisodes, evaluate_all
from ops.evaluation.benchmark import first_apps, held_out_tasks
from training.methods.checkpoint import Checkpoint
from resources.environment import SimulatorResource
from resources.policy import PolicyResource
from resources.storage import ArtifactStore, StorageLocation
from training.base.bundled import BUNDLED_DIR
from ops.agent.episode import SIMULATOR_JUDGE
from ops.judging.judges import EnvironmentJudge, VerdictCritic

SIMULATOR = SimulatorResource(screen_width=270, screen_height=600)


@pytest.fixture(scope="module")
def setting(tmp_path_factory):
    root = tmp_path_factory.mktemp("bench")
    storage = StorageLocation(root=str(root / "storage"))
    artifacts = ArtifactStore(location=storage)
    uri = artifacts.put_dir(BUNDLED_DIR, "base_policy/test")
    base = Checkpoint(version="base", uri=uri, prompt_style="elements", method="base")
    tasks = held_out_tasks(1, max_templates=1)
    known: dict[str, str] = {}
    first_apps([t for t, _ in tasks], 0, known)
    return storage, artifacts, base, tasks, known


def _jobs(storage, base, tasks, apps, experiment, names=("base", "rft")):
    checkpoints = {"base": base, "rft": base.model_copy(update={"version": "rft", "method": "rft"}),
                   "hifpo": base.model_copy(update={"version": "hifpo", "method": "hifpo", "uri": None})}
    return [PolicyEpisodes(name, checkpoints[name], storage.attempt_store(experiment, f"benchmark/{name}"), tasks,
                           apps, VerdictCritic(EnvironmentJudge(SIMULATOR_JUDGE)), 0, 1, 0.7, 0, 64) for name in names]


def test_workers_run_the_same_episodes_as_one_process(setting):
    storage, artifacts, base, tasks, apps = setting
    lines: list[str] = []
    sequential = evaluate_all(_jobs(storage, base, tasks, apps, "one"), PolicyResource(), artifacts,
                              SIMULATOR.env_factory(), 1, lines.append)
    parallel_lines: list[str] = []
    parallel = evaluate_all(_jobs(storage, base, tasks, apps, "two"), PolicyResource(), artifacts,
                            SIMULATOR.env_factory(), 2, parallel_lines.append)
    assert set(parallel) == {"base", "rft"}
    for name in parallel:
        assert parallel[name].attempts_run == len(tasks) and parallel[name].attempts_resumed == 0
        assert parallel[name].cost["cpu_seconds"] > 0  # the worker's own process
        order = ["task_id", "attempt"]
        assert parallel[name].results.sort(order).equals(sequential[name].results.sort(order))
    def counts(log):  # "benchmark rft episodes: 1/4 (25%), ETA 2s" without its ETA
        return sorted(line.split(", ETA")[0] for line in log)
    assert counts(parallel_lines) == counts(lines)
    assert any(line.startswith("benchmark rft episodes: ") for line in parallel_lines)


def test_a_failing_policy_fails_after_the_others_are_staged(setting):
    storage, artifacts, base, tasks, apps = setting
    jobs = _jobs(storage, base, tasks, apps, "fail", names=("hifpo", "base"))
    with pytest.raises(ValueError, match="checkpoint hifpo: no weights to load"):
        evaluate_all(jobs, PolicyResource(), artifacts, SIMULATOR.env_factory(), 2, lambda line: None)
    resumed = evaluate_all(jobs[1:], PolicyResource(), artifacts, SIMULATOR.env_factory(), 2, lambda line: None)
    assert resumed["base"].attempts_run == 0 and resumed["base"].attempts_resumed == len(tasks)
    assert isinstance(resumed["base"].results, pl.DataFrame) and resumed["base"].results.height == len(tasks)
