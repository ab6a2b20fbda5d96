"""Two `mobileforge run` on one store and experiment, started together: one refuses at once naming
the run that holds the experiment, the other completes, and everything stored verifies against
its digests (manifests, artifact markers, staged attempts)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import dagster as dg
import pytest
import yaml

from ops.data.attempt_store import ParquetAttemptStore
from resources.experiment import PartitionAddress
from resources.storage import ARTIFACT_MARKER, MANIFEST, ArtifactStore, ParquetIOManager, StorageLocation
from tests.pipelines.test_end_to_end import FAST

# every stage of the end-to-end test's small run, smaller still: what this test checks is the lock
# and what is stored, which every stage still writes (tables, checkpoints, staged attempts)
SMALLEST = {**FAST, "rollouts": {"max_tasks": 2, "attempts": 1},
            "remedial_trajectories": {"max_attempts": 1},
            "hifpo_checkpoint": {"overrides": {"max_steps": 1}},
            "rft_checkpoint": {"rounds": 1, "overrides": {"max_steps": 1}},
            "grsd_checkpoint": {"overrides": {"max_steps": 1}},
            "benchmark_results": {"max_templates": 1, "seeds_per_template": 1, "k": 1, "policies": ["base"]}}

# a whole graph runs in this module's fixture: minutes on an idle 2-core machine, far more on a loaded one
pytestmark = pytest.mark.timeout(1800)


REPO = Path(__file__).resolve().parents[2]


def _verify_everything_stored(root: Path) -> dict[str, int]:
    location = StorageLocation(root=str(root))
    io_manager, artifacts = ParquetIOManager(location=location), ArtifactStore(location=location)
    counts = {"partitions": 0, "artifacts": 0, "staged attempts": 0}
    for manifest_path in root.rglob(MANIFEST):
        manifest = json.loads(manifest_path.read_text())
        io_manager.load(dg.AssetKey.from_user_string(manifest["asset_key"]),
                        PartitionAddress(manifest["experiment"], manifest["partition"]))
        counts["partitions"] += 1
    for marker in root.rglob(ARTIFACT_MARKER):
        artifacts.local_path(str(marker.parent))
        counts["artifacts"] += 1
    for summary in root.rglob("attempt_*.json"):
        store = ParquetAttemptStore.from_uri(str(summary.parents[2]))
        store.verified_summary(str(summary), "")
        counts["staged attempts"] += 1
    return counts


@pytest.mark.timeout(1800)
def test_two_runs_on_one_experiment_one_refuses_the_other_completes(tmp_path):
    (tmp_path / "ci.yaml").write_text(yaml.safe_dump(SMALLEST))
    env = {key: value for key, value in os.environ.items() if not key.startswith("MOBILEFORGE_")}
    env.update(DAGSTER_HOME=str(tmp_path / "dagster_home"), MOBILEFORGE_STORAGE_ROOT=str(tmp_path / "storage"),
               OMP_NUM_THREADS="1")
    command = [sys.executable, "-m", "mobileforge.cli.main", "run", "--experiment", "ci",
               "--config", str(tmp_path / "ci.yaml")]
    start = time.perf_counter()
    runs = [subprocess.Popen(command, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for _ in range(2)]
    finished: list[tuple[int, str, str, float]] = []
    while len(finished) < 2 and time.perf_counter() - start < 1700:
        for run in list(runs):
            if run.poll() is not None:
                out, err = run.communicate()
                finished.append((run.returncode, out, err, time.perf_counter() - start))
                runs.remove(run)
        time.sleep(0.5)
    for run in runs:
        run.kill()
    assert len(finished) == 2, "a run did not finish in time"
    (refused_code, _, refused_err, refused_at), (done_code, done_out, done_err, done_at) = finished
    print(f"\nrefused after {refused_at:.1f} s; completed after {done_at:.1f} s")
    assert refused_code == 1 and done_code == 0, done_out + done_err
    assert "experiment 'ci' is being materialized by run " in refused_err
    assert "wait for it to finish or use another --experiment" in refused_err
    assert "Traceback" not in refused_err
    assert refused_at < 120
    counts = _verify_everything_stored(tmp_path / "storage")
    print(f"verified: {counts}")
    assert counts["partitions"] > 10 and counts["artifacts"] >= 1 and counts["staged attempts"] > 0
    with dg.DagsterInstance.from_config(str(tmp_path / "dagster_home")) as instance:
        launchers = {run.tags.get("mobileforge/run") for run in instance.get_runs()}
    assert len(launchers) == 1  # every Dagster run came from the run that held the lock
