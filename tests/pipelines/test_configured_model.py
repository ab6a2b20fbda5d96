"""The model the user configures is the one rolled out, trained and benchmarked: here a tiny
checkpoint that is not the bundled one, served by `mobileforge serve` in the production profile
(an OpenAI-compatible endpoint plus the weights it serves), through the whole graph."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import dagster as dg
import pytest
import torch
from safetensors.torch import load_file, save_file

from training.methods.checkpoint import Checkpoint, weights_digest
from training.base.bundled import BUNDLED_DIR
from training.trainers.manifest import read_manifest

# a whole graph runs in this module's fixture: minutes on an idle 2-core machine, far more on a loaded one
pytestmark = pytest.mark.timeout(1800)


REPO = Path(__file__).resolve().parents[2]
# every stage, as small as the tests below allow (one held-out template per split, one attempt)
SMALL = {
    "exploration_traces": {"max_transitions": 6, "max_depth": 2},
    "curriculum_tasks": {"variants_per_template": 1},
    "rollouts": {"max_tasks": 4, "attempts": 2},
    "hifpo_checkpoint": {"overrides": {"max_steps": 2}},
    "rft_checkpoint": {"rounds": 1, "overrides": {"max_steps": 2}},
    "grsd_checkpoint": {"overrides": {"max_steps": 2}},
    "adagrpo_checkpoint": {"overrides": {"epochs": 1, "tasks_per_epoch": 2, "group_size": 2}},
    "benchmark_results": {"max_templates": 1, "seeds_per_template": 1, "k": 1},
}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _own_model(directory: Path) -> Path:
    """A copy of the bundled base with slightly different weights: another model of the same kind."""
    shutil.copytree(BUNDLED_DIR, directory)
    weights = load_file(directory / "model.safetensors")
    generator = torch.Generator().manual_seed(7)
    name = sorted(k for k, v in weights.items() if v.dtype.is_floating_point and v.dim() == 2)[0]
    weights[name] = weights[name] + 1e-3 * torch.randn(weights[name].shape, generator=generator)
    save_file(weights, directory / "model.safetensors", metadata={"format": "pt"})
    return directory


@pytest.fixture(scope="module")
def production_run(tmp_path_factory):
    from pipelines.definitions import ASSETS, CHECKS, STAGES
    from pipelines.run.experiment import run_experiment
    from pipelines.run.observer import LineObserver
    from pipelines.resources import resources_for

    model = _own_model(tmp_path_factory.mktemp("model") / "own-tiny")
    port = _free_port()
    server = subprocess.Popen([sys.executable, "-m", "mobileforge.cli.main", "serve", str(model), "--port",
                               str(port), "--model-name", "own-tiny"], cwd=REPO,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    mp = pytest.MonkeyPatch()
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=2).close()
                break
            except OSError:
                assert time.monotonic() < deadline and server.poll() is None, "mobileforge serve did not start"
                time.sleep(0.3)
        root = tmp_path_factory.mktemp("storage")
        # the code location's process, which the runs are launched through, reads the same variables
        for name, value in {"MOBILEFORGE_PROFILE": "production", "MOBILEFORGE_STORAGE_ROOT": str(root), "MOBILEFORGE_POLICY_MODEL": "openai/own-tiny",
                            "MOBILEFORGE_POLICY_API_BASE": f"http://127.0.0.1:{port}/v1",
                            "MOBILEFORGE_POLICY_STYLE": "elements", "MOBILEFORGE_POLICY_CHECKPOINT": str(model),
                            "MOBILEFORGE_CRITIC_MODEL": "openai/unused-critic",
                            "MOBILEFORGE_SCREEN_SIZE": "540x1200"}.items():
            mp.setenv(name, value)
        resources = resources_for("production")
        with dg.instance_for_test(temp_dir=str(tmp_path_factory.mktemp("dagster_home"))) as instance:
            # the definitions of this profile (pipelines.definitions.defs may have been built, in this worker, under
            # another one), as the code location's processes build them from these variables
            defs = dg.Definitions(assets=ASSETS, asset_checks=CHECKS, resources=resources, jobs=STAGES)
            run_experiment("own", SMALL, instance=instance, observer=LineObserver(lambda line: None), defs=defs)
            yield model, root, resources
    finally:
        mp.undo()
        server.terminate()
        server.wait(timeout=30)


def _load(resources, key: str):
    from resources.experiment import UNPARTITIONED, PartitionAddress

    return resources["io_manager"].load(dg.AssetKey(key), PartitionAddress("own", UNPARTITIONED))


def test_the_base_is_the_configured_model_read_in_place(production_run):
    model, _, resources = production_run
    base = Checkpoint.model_validate(_load(resources, "base_policy"))
    assert base.uri == f"file://{model.resolve()}"
    assert base.version == f"base:{weights_digest(model)}" != f"base:{weights_digest(BUNDLED_DIR)}"


def test_rollouts_ask_the_served_model(production_run):
    model, _, resources = production_run
    attempts = _load(resources, "rollout_attempts")
    steps = _load(resources, "rollout_steps")
    assert attempts.height == SMALL["rollouts"]["max_tasks"] * SMALL["rollouts"]["attempts"]
    [version] = set(attempts["policy_version"])  # the base's version, then the rollout settings' digest
    assert version.startswith(f"base:{weights_digest(model)}~")
    assert steps["raw_output"].str.len_chars().min() > 0


def test_trainers_start_from_the_configured_weights(production_run):
    model, _, resources = production_run
    store = resources["artifact_store"]
    trained = 0
    rft = Checkpoint.model_validate(_load(resources, "rft_checkpoint"))
    for method in ("hifpo_checkpoint", "rft_checkpoint", "grsd_checkpoint", "adagrpo_checkpoint"):
        checkpoint = Checkpoint.model_validate(_load(resources, method))
        # AdaGRPO starts from RFT's weights when RFT trained (MobileRL's order), which start from the model
        start_version, start_dir = (rft.version, store.local_path(rft.uri)) \
            if method == "adagrpo_checkpoint" and rft.trained else (f"base:{weights_digest(model)}", model)
        assert checkpoint.base == start_version
        if checkpoint.trained:
            assert Path(read_manifest(store.local_path(checkpoint.uri)).base_checkpoint).resolve() == \
                Path(start_dir).resolve()
            trained += 1
    assert trained


def test_the_benchmark_asks_the_base_and_the_served_trained_checkpoints(production_run):
    model, root, resources = production_run
    bench = _load(resources, "benchmark_results")
    assert set(bench["policy_id"]) == {"base", "hifpo", "rft", "grsd", "adagrpo"}
    staged = {json.loads(p.read_text())["policy_version"]
              for p in (root / "own" / "_staging" / "benchmark").glob("*/*/*/attempt_*.json")}
    trained = {Checkpoint.model_validate(_load(resources, m)).version
               for m in ("hifpo_checkpoint", "rft_checkpoint", "grsd_checkpoint", "adagrpo_checkpoint")}
    asked = {version.split("@")[0] for version in staged}  # a version, then its decoding tag
    assert f"base:{weights_digest(model)}" in asked and asked <= trained | {f"base:{weights_digest(model)}"}
