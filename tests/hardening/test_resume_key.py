"""Staged attempts resume by policy version, and a version names how its policy samples: episodes
drawn with one sampling seed are never resumed for another (a fork re-benchmarked with
`--set benchmark_results.seed=7` runs its episodes instead of resuming the parent's "0 episodes
run"), while greedy episodes, which no seed changes, still resume."""

from __future__ import annotations

from dataclasses import replace

from ops.rollout.engine import attempts_to_run
from resources.policy import PolicyResource
from resources.storage import StorageLocation
from tests.resources.storage.test_storage_integrity import _attempt


def test_a_changed_sampling_seed_resumes_none_of_the_episodes_a_greedy_policy_resumes_all(tmp_path):
    policy = PolicyResource(kind="local")
    store = StorageLocation(root=str(tmp_path)).attempt_store("fork", "benchmark/base")
    versions = {(temperature, seed): "base" + policy.decoding_tag(temperature, seed)
                for temperature in (0.0, 0.7) for seed in (0, 7)}
    for (temperature, seed), version in versions.items():
        if seed == 0:  # what the parent staged (and the fork copied): sampled and greedy, seed 0
            for attempt in (1, 2, 3):
                store.save(replace(_attempt(attempt), policy_version=version))
    task = _attempt(1).task
    left = {key: attempts_to_run(store, [task], version, 3) for key, version in versions.items()}
    assert left == {(0.0, 0): 0, (0.0, 7): 0, (0.7, 0): 0, (0.7, 7): 3}
