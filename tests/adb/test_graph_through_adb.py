"""The whole asset graph through the adb path: `mobileforge sim adb-server` in a subprocess, the
runs' code location started with MOBILEFORGE_ENV=adb-simulator, and exploration, curriculum,
rollouts, training and the benchmark materialized on the embedded defaults (the end-to-end test's
small sizes, FAST below) through AdbEnvironment, with the served simulator's judges verifying
outcomes. The data says which path it came through: a device's uiautomator dump keeps each
resource id's `package:id/` prefix, which the in-process simulator's tree has not."""

import json
import socket
import subprocess
import sys
import time
from pathlib import Path

import adbutils
import polars as pl
import pytest

import dagster as dg

from tests.pipelines.test_end_to_end import FAST as E2E

# the end-to-end test's sizes, less what no test here reads: RFT's second round (its device-driven
# attempts are the rollouts' code path) and the benchmark of AdaGRPO (trained all the same)
FAST = {**E2E, "rft_checkpoint": {"rounds": 1, "overrides": {"max_steps": 2}},
        "benchmark_results": {**E2E["benchmark_results"], "policies": ["base", "hifpo", "rft", "grsd"]}}

# a whole graph runs in this module's fixture: minutes on an idle 2-core machine, far more on a loaded one
pytestmark = pytest.mark.timeout(1800)


DEVICE_ID = ":id/"  # in resource ids of a device's dump only


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def adb_server():
    port = _free_port()
    process = subprocess.Popen([str(Path(sys.executable).parent / "mobileforge"), "sim", "adb-server", "--port",
                                str(port), "--devices", "2", "--size", "540x1200"],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    client = adbutils.AdbClient(host="127.0.0.1", port=port)
    deadline = time.monotonic() + 60
    while True:
        try:
            if len(client.device_list()) == 2:
                break
        except (adbutils.AdbError, OSError):
            pass
        assert process.poll() is None and time.monotonic() < deadline, process.stdout.read()
        time.sleep(0.2)
    yield port
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:  # slow to stop on a loaded machine: the test's work is done
        process.kill()
        process.wait()


@pytest.fixture(scope="module")
def materialized(adb_server, tmp_path_factory):
    root = tmp_path_factory.mktemp("storage")
    mp = pytest.MonkeyPatch()
    for name, value in {"MOBILEFORGE_STORAGE_ROOT": str(root), "MOBILEFORGE_ENV": "adb-simulator",
                        "MOBILEFORGE_ADB_PORT": str(adb_server)}.items():
        mp.setenv(name, value)  # the code location's processes inherit them
    from pipelines.run.experiment import run_experiment
    from pipelines.run.observer import LineObserver
    from pipelines.resources import resources_for

    try:  # the variables must not outlive this module's tests, even when the run fails
        resources = resources_for("local")
        with dg.instance_for_test(temp_dir=str(tmp_path_factory.mktemp("dagster_home"))) as instance:
            started = time.perf_counter()
            run_experiment("adb", FAST, instance=instance, observer=LineObserver(print))
            print(f"graph through adb: {time.perf_counter() - started:.0f} s")
            yield root, resources, instance
    finally:
        mp.undo()


def _load(resources, key: str, partition: str):
    from resources.experiment import PartitionAddress

    return resources["io_manager"].load(dg.AssetKey(key), PartitionAddress("adb", partition))


def _through_a_device(a11y_column) -> bool:
    return all(DEVICE_ID in tree for tree in a11y_column)


def test_the_environment_resource_is_the_adb_twin(materialized):
    from resources.environment import AdbDeviceResource

    environment = materialized[1]["simulator"]
    assert isinstance(environment, AdbDeviceResource) and environment.simulator
    assert DEVICE_ID not in json.dumps(_sim_tree())  # the marker tells the two paths apart


def _sim_tree():
    from ops.environments.simulator import SimEnvironment

    env = SimEnvironment(size=(540, 1200))
    return env.launch("contacts").a11y


def test_every_asset_is_materialized_through_adb(materialized):
    from pipelines.definitions import ASSETS

    _, resources, instance = materialized
    for asset in ASSETS:
        for key in asset.keys:
            assert instance.get_latest_materialization_event(key) is not None, key
    traces = _load(resources, "exploration_traces", "contacts")
    assert traces.height > 0 and _through_a_device(traces["before_a11y"])


def test_rollouts_came_through_adb_and_were_judged(materialized):
    _, resources, instance = materialized
    attempts = _load(resources, "rollout_attempts", "_")
    steps = _load(resources, "rollout_steps", "_")
    assert attempts.height == FAST["rollouts"]["max_tasks"] * FAST["rollouts"]["attempts"]
    assert attempts["gt_success"].is_not_null().all()  # the served simulator's judges
    assert _through_a_device(steps["a11y"])
    meta = instance.get_latest_materialization_event(dg.AssetKey("rollout_attempts")).asset_materialization.metadata
    assert meta["attempts_failed"].value == 0


def test_the_benchmark_came_through_adb_with_judged_outcomes(materialized):
    root, resources, _ = materialized
    bench = _load(resources, "benchmark_results", "_")
    config = FAST["benchmark_results"]
    assert {"base", "hifpo", "rft", "grsd"} <= set(bench["policy_id"])
    (episodes,) = set(bench.group_by("policy_id").len()["len"])  # the same tasks for every policy
    assert episodes >= config["max_templates"] * config["k"] and episodes % config["k"] == 0
    assert bench["success"].is_not_null().all()
    staged = list((root / "adb" / "_staging" / "benchmark").rglob("*.parquet"))
    assert staged and all(_through_a_device(pl.read_parquet(p)["a11y"]) for p in staged
                          if "a11y" in pl.read_parquet_schema(p))
