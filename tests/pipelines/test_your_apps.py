"""The whole loop on a user's apps and a user's model, with nothing of the simulator inside it (docs/devices.md,
"Bring your apps"): `mobileforge sim adb-server` serves three apps under names and packages that appear nowhere
in phonesim's code (its --brands), and the graph runs in the production profile with MOBILEFORGE_ENV=adb on an
apps file that names them: exploration, a curriculum mined by an LLM endpoint, rollouts judged by the critic,
step data, the four trainers (RFT's second round on variants the LLM writes, AdaGRPO rewarded by the critic's
verdicts) and the benchmark on a task file of the user's own, judged by the critic.

The policy is the user's model: a tiny checkpoint that is not the bundled one, served by `mobileforge serve`
(an OpenAI-compatible endpoint plus the weights it serves); it is the one rolled out, trained and benchmarked.

Every process of the run has an import hook that refuses any phonesim module but the shared action
vocabulary (tests/support/forbid_simulator). The LLM is a scripted stand-in
(tests/support/standin_llm.py): no language model ships offline in a form this project can run.

Only this test reads the served simulator's ground truth afterwards, to score the critic: each stored
attempt is replayed, action by action through the same AdbEnvironment, on a served simulator of the same
brands, every step's screen checked against the stored one, and the final state judged against what the
instruction asks."""

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import adbutils
import dagster as dg
import pytest
import torch
import urllib.request
import yaml
from safetensors.torch import load_file, save_file

from training.base.bundled import BUNDLED_DIR
from training.methods.checkpoint import Checkpoint, weights_digest
from training.trainers.manifest import read_manifest
from training.methods.launched import free_port
from tests.support.instances import project_instance
from tests.support.openai_server import OpenAICompatibleServer
from tests.support.standin_llm import Goal, StandInLLM

pytestmark = pytest.mark.timeout(3600)  # a whole graph: minutes on an idle 2-core machine, far more on a loaded one

REPO = Path(__file__).resolve().parents[2]
SIZE = (540, 1200)
# served-simulator app -> the user's app: name, package, launcher label (checked absent from phonesim's code)
APPS = {"notes": ("quillpad", "org.quillworks.pad", "Quillpad"),
        "clock": ("tocktide", "net.tocktide.chrono", "Tocktide"),
        "contacts": ("rollcall", "io.rollcall.people", "Rollcall")}
FOURTH = {"todo": ("chorebook", "dev.chorebook.lists", "Chorebook")}
# a user's held-out suite, and what each of its tasks asks (for the ground truth only)
USER_TASKS = [
    {"id": "open-quillpad", "app": "quillpad", "instruction": "Open the quillpad app.", "step_budget": 3,
     "success": "Quillpad is on screen"},
    {"id": "tocktide-cities", "app": "tocktide", "instruction": "In tocktide, go to the cities screen and stop there.",
     "step_budget": 4, "success": "the world-clock cities list is on screen"},
    {"id": "rollcall-groups", "app": "rollcall", "instruction": "In rollcall, go to the groups screen and stop there.",
     "step_budget": 4, "difficulty": "L1"},
]
USER_GOALS = {"open-quillpad#0": Goal("notes", None, "user: app launch"),
              "tocktide-cities#0": Goal("clock", "cities", "user: screen navigation"),
              "rollcall-groups#0": Goal("contacts", "groups", "user: screen navigation")}
CONFIG = {
    "exploration_traces": {"max_transitions": 4, "max_depth": 2},
    "curriculum_tasks": {"max_llm_trajectories": 6},
    "rollouts": {"max_tasks": 4, "attempts": 2},
    "hifpo_checkpoint": {"overrides": {"max_steps": 2}},
    "rft_checkpoint": {"rounds": 2, "max_tasks": 2, "attempts": 1, "overrides": {"max_steps": 2}},
    "grsd_checkpoint": {"overrides": {"max_steps": 2}},
    "adagrpo_checkpoint": {"overrides": {"epochs": 1, "tasks_per_epoch": 1, "group_size": 2}},
    "benchmark_results": {"k": 2},  # task_file: set in the fixture
}
# The served simulator draws a screen before it answers: nothing to wait for after an action, and an unchanged
# dump is final at once. Set as a user with such devices would (`mobileforge run --resource simulator.settle_s=0`).
DEVICE_SETTINGS = {"settle_s": 0.0, "retry_delay_s": 0.05}
CRITIC = "openai/standin-critic"
MODEL = "own-tiny"
METHODS = ("hifpo", "rft", "grsd", "adagrpo")



def _write_apps(path: Path, apps: dict) -> Path:
    path.write_text(yaml.safe_dump([{"name": n, "package": p, "description": f"the user's {label}"}
                                    for n, p, label in apps.values()]))
    return path


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """`mobileforge sim adb-server` with the four branded apps, in a process without the import hook."""
    brands = tmp_path_factory.mktemp("served") / "brands.yaml"
    brands.write_text(yaml.safe_dump({app: {"package": p, "label": label}
                                      for app, (_, p, label) in {**APPS, **FOURTH}.items()}))
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k != "MOBILEFORGE_FORBID_SIMULATOR"}
    process = subprocess.Popen([str(Path(sys.executable).parent / "mobileforge"), "sim", "adb-server", "--port",
                                str(port), "--devices", "2", "--size", f"{SIZE[0]}x{SIZE[1]}", "--brands", str(brands)],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    client = adbutils.AdbClient(host="127.0.0.1", port=port)
    deadline = time.monotonic() + 120
    while True:
        try:
            if len(client.device_list()) == 2:
                break
        except (adbutils.AdbError, OSError):
            pass
        assert process.poll() is None and time.monotonic() < deadline, process.stdout.read()
        time.sleep(0.2)
    yield port, brands
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


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
def served_model(tmp_path_factory):
    """The user's model, served by `mobileforge serve` (an OpenAI-compatible endpoint): its directory and URL."""
    model = _own_model(tmp_path_factory.mktemp("model") / MODEL)
    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "mobileforge.cli.main", "serve", str(model), "--port", str(port),
                               "--model-name", MODEL], cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while True:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=2).close()
            break
        except OSError:
            assert time.monotonic() < deadline and server.poll() is None, "mobileforge serve did not start"
            time.sleep(0.3)
    yield model, f"http://127.0.0.1:{port}/v1"
    server.terminate()
    server.wait(timeout=30)


@pytest.fixture(scope="module")
def run(served, served_model, tmp_path_factory):
    port, _ = served
    model, model_url = served_model
    work = tmp_path_factory.mktemp("your_apps")
    apps_file = _write_apps(work / "apps.yaml", APPS)
    (work / "tasks.yaml").write_text(yaml.safe_dump({"tasks": USER_TASKS}))
    forbidden = work / "simulator_imports.log"
    standin = StandInLLM()
    mp = pytest.MonkeyPatch()
    with OpenAICompatibleServer(standin, model_name="standin-critic") as llm:
        for name, value in {"MOBILEFORGE_PROFILE": "production", "MOBILEFORGE_POLICY_MODEL": f"openai/{MODEL}",
                            "MOBILEFORGE_POLICY_API_BASE": model_url, "MOBILEFORGE_POLICY_STYLE": "elements",
                            "MOBILEFORGE_POLICY_CHECKPOINT": str(model), "MOBILEFORGE_SCREEN_SIZE": f"{SIZE[0]}x{SIZE[1]}",
                            "MOBILEFORGE_STORAGE_ROOT": str(work / "storage"), "MOBILEFORGE_ENV": "adb",
                            "MOBILEFORGE_ADB_PORT": str(port), "MOBILEFORGE_APPS_FILE": str(apps_file),
                            "MOBILEFORGE_CRITIC_MODEL": CRITIC, "MOBILEFORGE_CRITIC_API_BASE": llm.base_url,
                            "MOBILEFORGE_FORBID_SIMULATOR": str(forbidden),
                            "PYTHONPATH": os.pathsep.join([str(REPO / "tests/support/forbid_simulator"), str(REPO),
                                                           os.environ.get("PYTHONPATH", "")])}.items():
            mp.setenv(name, value)  # the code location's processes inherit them
        from pipelines.definitions import ASSETS, CHECKS, STAGES
        from pipelines.resources import resources_for
        from pipelines.run.experiment import run_experiment
        from pipelines.run.observer import LineObserver

        try:
            config = {**CONFIG, "benchmark_results": {**CONFIG["benchmark_results"],
                                                      "task_file": str(work / "tasks.yaml")}}
            (work / "dagster_home").mkdir()
            with project_instance(str(work / "dagster_home")) as instance:
                started = time.perf_counter()
                # the definitions of this environment (pipelines.definitions.defs may have been built, in this
                # worker, under another one), as the code location's processes build them from it
                defs = dg.Definitions(assets=ASSETS, asset_checks=CHECKS, resources=resources_for(), jobs=STAGES)
                timings = run_experiment("yours", config, instance=instance, observer=LineObserver(print), defs=defs,
                                         resources={"simulator": DEVICE_SETTINGS})
                print(f"whole graph through adb: {time.perf_counter() - started:.0f} s; stages: "
                      + ", ".join(f"{stage} {seconds:.0f} s" for stage, seconds in timings.items()))
                yield {"resources": resources_for("local"), "instance": instance, "standin": standin,
                       "forbidden": forbidden, "work": work, "timings": timings, "model": model}
        finally:
            mp.undo()


def _load(resources, key: str, partition: str = "_"):
    from resources.experiment import PartitionAddress

    return resources["io_manager"].load(dg.AssetKey(key), PartitionAddress("yours", partition))


def test_the_names_are_the_users_not_the_simulators():
    code = "\n".join(p.read_text(encoding="utf-8") for p in (REPO / "phonesim").rglob("*") if p.is_file()
                     and p.suffix in (".py", ".md", ".json", ".yaml"))
    for name, package, label in [*APPS.values(), *FOURTH.values()]:
        assert name not in code and package not in code and label not in code


def test_no_run_process_imported_the_simulator(run):
    assert not run["forbidden"].exists() or run["forbidden"].read_text() == "", run["forbidden"].read_text()


def test_every_asset_came_through_the_devices_with_the_users_apps(run):
    from pipelines.definitions import ASSETS

    resources, instance = run["resources"], run["instance"]
    for asset in ASSETS:
        for key in asset.keys:
            assert instance.get_latest_materialization_event(key) is not None, key
    assert sorted(instance.get_dynamic_partitions("app")) == sorted(n for n, _, _ in APPS.values())
    for name, package, _ in APPS.values():
        traces = _load(resources, "exploration_traces", name)
        assert traces.height > 0 and all(f"{package}:id/" in tree for tree in traces["after_a11y"]), name


def test_the_curriculum_was_mined_by_the_llm_and_the_critic_judged(run):
    resources, standin = run["resources"], run["standin"]
    tasks = _load(resources, "curriculum_tasks")
    assert tasks.height >= 3 and set(tasks["instruction"]) <= set(standin.goals)
    assert not tasks["verifiable"].any() and tasks["template_id"].is_null().all()
    attempts = _load(resources, "rollout_attempts")
    assert attempts.height == CONFIG["rollouts"]["max_tasks"] * CONFIG["rollouts"]["attempts"]
    assert set(attempts["judge"]) == {f"llm:{CRITIC}"} and attempts["gt_success"].is_null().all()
    assert standin.calls["curriculum"] > 0 and standin.calls["decide"] >= attempts.height


def test_the_four_trainers_ran_on_the_devices(run):
    instance = run["instance"]
    for method in METHODS:
        event = instance.get_latest_materialization_event(dg.AssetKey(f"{method}_checkpoint"))
        assert event is not None, method
    adagrpo = instance.get_latest_materialization_event(dg.AssetKey("adagrpo_checkpoint")).asset_materialization
    assert adagrpo.metadata["judge"].value == f"llm:{CRITIC}"
    rft = instance.get_latest_materialization_event(dg.AssetKey("rft_checkpoint")).asset_materialization
    rounds = rft.metadata["rounds"].value
    assert len(rounds) == 2 and rounds[1]["attempts"] >= 1  # round 2 attempted variants the LLM wrote
    assert run["standin"].calls["variants"] >= 1


def test_the_benchmark_is_the_users_task_file_judged_by_the_critic(run, capsys):
    from mobileforge.cli.run import print_benchmark

    bench = _load(run["resources"], "benchmark_results")
    assert set(bench["task_id"]) == set(USER_GOALS) and set(bench["judge"]) == {f"llm:{CRITIC}"}
    assert {"base", "hifpo", "rft", "grsd", "adagrpo"} <= set(bench["policy_id"])
    assert bench["progress"].is_null().all() and set(bench["difficulty"]) == {"unrated", "L1"}
    print_benchmark(run["resources"]["io_manager"], "yours", CONFIG["benchmark_results"]["k"])
    printed = capsys.readouterr().out
    with capsys.disabled():
        print(printed)
    assert "Benchmark on your task file (3 tasks, 2 attempts each)" in printed and "user@2" in printed


def test_adding_a_fourth_app_adds_its_partition_and_removing_one_keeps_its_traces(run, served):
    from pipelines.definitions import defs
    from pipelines.resources import resources_for
    from pipelines.run.stored import experiment_partition_keys
    from resources.experiment import sync_app_partitions

    instance, work = run["instance"], run["work"]
    port, _ = served
    everything = {**APPS, **FOURTH}
    mp = pytest.MonkeyPatch()
    mp.setenv("MOBILEFORGE_ENV", "adb")
    mp.setenv("MOBILEFORGE_ADB_PORT", str(port))
    mp.setenv("MOBILEFORGE_APPS_FILE", str(_write_apps(work / "apps4.yaml", everything)))
    try:
        resources = resources_for("local")
        resources["simulator"] = type(resources["simulator"])(**{**dict(resources["simulator"]), **DEVICE_SETTINGS})
        assert sync_app_partitions(instance, resources["simulator"].apps()) == (["chorebook"], [])  # what the next run does
        keys = experiment_partition_keys(defs.resolve_job_def("discovery"), instance, "yours")
        assert sorted(k.keys_by_dimension["app"] for k in keys) == sorted(n for n, _, _ in everything.values())
        # ... and that partition explores the new app through the device
        result = dg.materialize([_exploration()], partition_key=dg.MultiPartitionKey({"experiment": "yours",
                                                                                      "app": "chorebook"}),
                                resources=resources, instance=instance,
                                run_config={"ops": {"exploration_traces": {"config": CONFIG["exploration_traces"]}}})
        traces = result.output_for_node("exploration_traces")
        assert traces.height > 0 and all("dev.chorebook.lists:id/" in t for t in traces["after_a11y"])
        # removing an app drops its partition and leaves its stored traces alone
        mp.setenv("MOBILEFORGE_APPS_FILE", str(_write_apps(work / "apps2.yaml", {k: APPS[k] for k in ("notes", "clock")})))
        assert sync_app_partitions(instance, resources_for("local")["simulator"].apps())[1] == ["chorebook", "rollcall"]
        assert _load(run["resources"], "exploration_traces", "rollcall").height > 0
    finally:
        mp.undo()


def _exploration():
    from assets.exploration import exploration_traces

    return exploration_traces


def test_the_critic_measured_against_the_served_simulators_ground_truth(run, served):
    """Replays every staged attempt (rollouts, RFT's second round, the benchmark) on a served simulator of the
    same brands and judges its final state; prints the critic's agreement per task type (docs/devices.md)."""
    from ops.judging.critic.calibration import agreement_by_kind
    from tests.pipelines.replay import replay_all

    _, brands = served
    standin = run["standin"]

    def goal_of(task: dict) -> Goal | None:
        return USER_GOALS.get(task["task_id"]) or standin.goals.get(task["instruction"])

    replayed = replay_all(run["work"] / "storage" / "yours" / "_staging", brands, APPS, goal_of, SIZE)
    kept = [r for r in replayed if r.truth is not None]
    key = [(r.stage, r.task_id, r.attempt) for r in kept]
    rows = agreement_by_kind({k: r.decision for k, r in zip(key, kept)}, {k: r.truth for k, r in zip(key, kept)},
                             {k: r.kind for k, r in zip(key, kept)})
    print(f"\ncritic {CRITIC} (the scripted stand-in) against the served simulator's ground truth: "
          f"{len(replayed)} staged attempts replayed, {len(replayed) - len(kept)} diverged and left out")
    for row in rows:
        print(f"  {row.kind:26s} attempts {row.attempts:3d}  agree {row.agree:3d} ({row.agreement:.2f})  "
              f"false success {row.false_success:3d}  false failure {row.false_failure:3d}  "
              f"true successes {row.successes:3d}")
    stages = {r.stage.split("/")[0] for r in replayed}
    assert {"rollouts", "benchmark"} <= stages
    assert len(kept) >= 0.8 * len(replayed)  # nearly every attempt replays step for step
    overall = rows[-1]
    assert overall.kind == "all" and overall.attempts == len(kept)
    assert overall.agree + overall.false_success + overall.false_failure == overall.attempts


def test_the_base_is_the_users_model_read_in_place(run):
    model = run["model"]
    base = Checkpoint.model_validate(_load(run["resources"], "base_policy"))
    assert base.uri == f"file://{model.resolve()}"
    assert base.version == f"base:{weights_digest(model)}" != f"base:{weights_digest(BUNDLED_DIR)}"


def test_rollouts_ask_the_served_model(run):
    attempts, steps = _load(run["resources"], "rollout_attempts"), _load(run["resources"], "rollout_steps")
    [version] = set(attempts["policy_version"])  # the base's version, then the rollout settings' digest
    assert version.startswith(f"base:{weights_digest(run['model'])}~")
    assert steps["raw_output"].str.len_chars().min() > 0


def test_trainers_start_from_the_users_weights(run):
    model, resources = run["model"], run["resources"]
    store = resources["artifact_store"]
    rft = Checkpoint.model_validate(_load(resources, "rft_checkpoint"))
    trained = 0
    for method in METHODS:
        checkpoint = Checkpoint.model_validate(_load(resources, f"{method}_checkpoint"))
        # AdaGRPO starts from RFT's weights when RFT trained (MobileRL's order), which start from the model
        start_version, start_dir = (rft.version, store.local_path(rft.uri)) \
            if method == "adagrpo" and rft.trained else (f"base:{weights_digest(model)}", model)
        assert checkpoint.base == start_version
        if checkpoint.trained:
            assert Path(read_manifest(store.local_path(checkpoint.uri)).base_checkpoint).resolve() == \
                Path(start_dir).resolve()
            trained += 1
    assert trained


def test_the_benchmark_asks_the_base_and_the_served_trained_checkpoints(run):
    model, resources = run["model"], run["resources"]
    staged = {json.loads(p.read_text())["policy_version"]
              for p in (run["work"] / "storage" / "yours" / "_staging" / "benchmark").glob("*/*/*/attempt_*.json")}
    trained = {Checkpoint.model_validate(_load(resources, f"{method}_checkpoint")).version for method in METHODS}
    asked = {version.split("@")[0] for version in staged}  # a version, then its decoding tag
    assert f"base:{weights_digest(model)}" in asked and asked <= trained | {f"base:{weights_digest(model)}"}
