"""The whole asset graph on the embedded defaults, shrunk to CI size, then the analysis notebook.

Real Dagster runs of the workspace's code location on a temporary persistent instance, launched
as `mobileforge run` launches them (named stage jobs, the training methods in parallel
processes), real Parquet under a temporary storage root, real TRL training steps; only sizes are
smaller than `mobileforge run` (see FAST).
"""

import base64
import io
import json
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import nbformat
import pytest
from nbclient import NotebookClient
from PIL import Image
from safetensors.torch import load_file
import yaml

import dagster as dg

from tests.support.instances import project_instance
from training.methods.checkpoint import Checkpoint

# a whole graph runs in this module's fixture: minutes on an idle 2-core machine, far more on a loaded one
pytestmark = pytest.mark.timeout(1800)


REPO = Path(__file__).resolve().parents[2]

# Every stage runs, each as small as the tests below allow: exploration deep enough that the
# curriculum's first tasks are those of the default depth (fewer transitions, fewer templates for
# the curriculum to solve), two optimizer steps per trainer, one AdaGRPO epoch of 2 tasks x G = 2,
# one held-out template per split.
FAST = {
    "base_policy": {},  # the bundled base (training/base/checkpoint); pretraining is tested on its own
    "exploration_traces": {"max_transitions": 6, "max_depth": 2},
    "curriculum_tasks": {"variants_per_template": 1},
    "rollouts": {"max_tasks": 4, "attempts": 2},
    "hifpo_checkpoint": {"overrides": {"max_steps": 2}},
    "rft_checkpoint": {"rounds": 2, "max_tasks": 2, "attempts": 2, "use_hints": True, "hint_steps": 3,
                       "overrides": {"max_steps": 2}},
    "grsd_checkpoint": {"overrides": {"max_steps": 2}},
    "adagrpo_checkpoint": {"overrides": {"epochs": 1, "tasks_per_epoch": 2, "group_size": 2}},
    "benchmark_results": {"max_templates": 1, "seeds_per_template": 1, "k": 2},
}


@dataclass
class ContendingRun:
    """A second `mobileforge run` of the same experiment on the same store, started (as a user would, from
    the command line) while the first holds the experiment: it must refuse at once and write nothing."""

    config_file: Path
    storage: Path
    home: Path
    process: subprocess.Popen | None = None
    started_at: float = 0.0
    refused_after: float | None = None

    def start(self) -> None:
        env = {key: value for key, value in os.environ.items() if not key.startswith("MOBILEFORGE_")}
        env.update(DAGSTER_HOME=str(self.home), MOBILEFORGE_STORAGE_ROOT=str(self.storage), OMP_NUM_THREADS="1")
        self.started_at = time.perf_counter()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "mobileforge.cli.main", "run", "--experiment", "ci", "--config", str(self.config_file)],
            cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def poll(self) -> None:
        if self.process is not None and self.refused_after is None and self.process.poll() is not None:
            self.refused_after = time.perf_counter() - self.started_at

    def outcome(self) -> tuple[int, str, str]:
        out, err = self.process.communicate(timeout=600)
        self.poll()
        return self.process.returncode, out, err


@pytest.fixture(scope="module")
def materialized(tmp_path_factory):
    """The `ci` experiment run once through the code location; every test of this module reads it. While it
    runs, a second `mobileforge run` of `ci` on the same store is started and must be refused."""
    root = tmp_path_factory.mktemp("storage")
    config_file = tmp_path_factory.mktemp("config") / "ci.yaml"
    config_file.write_text(yaml.safe_dump(FAST))
    contender = ContendingRun(config_file, root, tmp_path_factory.mktemp("contender_home"))
    mp = pytest.MonkeyPatch()
    mp.setenv("MOBILEFORGE_STORAGE_ROOT", str(root))
    from pipelines.definitions import ASSETS, CHECKS, STAGES
    from pipelines.run.experiment import run_experiment
    from pipelines.run.observer import LineObserver
    from pipelines.resources import resources_for

    def observe(line: str) -> None:
        lines.append(line)
        if contender.process is None:  # the first stage has started: the experiment's lock is held
            contender.start()
        contender.poll()

    try:
        resources = resources_for("local")
        lines: list[str] = []
        # as `mobileforge run` does: a persistent instance, runs launched through workspace.yaml's code location
        with project_instance(str(tmp_path_factory.mktemp("dagster_home"))) as instance:
            # the definitions of this storage root (pipelines.definitions.defs may have been built, in this worker,
            # under another one): the experiment's lock is taken where the runs write
            defs = dg.Definitions(assets=ASSETS, asset_checks=CHECKS, resources=resources, jobs=STAGES)
            timings = run_experiment("ci", FAST, instance=instance, observer=LineObserver(observe), defs=defs)
            yield CiRun(root, resources, instance, timings, lines, contender)
    finally:
        mp.undo()
        if contender.process is not None and contender.process.poll() is None:
            contender.process.kill()


class CiRun(NamedTuple):
    root: Path
    resources: dict
    instance: dg.DagsterInstance
    timings: dict[str, float]
    lines: list[str]
    contender: ContendingRun


def _load(resources, key: str, experiment: str | None = "ci"):
    from resources.experiment import SHARED_EXPERIMENT, UNPARTITIONED, PartitionAddress

    return resources["io_manager"].load(dg.AssetKey(key),
                                        PartitionAddress(experiment or SHARED_EXPERIMENT, UNPARTITIONED))


def _latest(instance, asset: str, experiment: str = "ci"):
    """The record of the latest materialization of `experiment`'s partition of `asset` (a fork of
    ci materializes its own partitions of the same assets)."""
    from resources.experiment import latest_materialization

    return latest_materialization(instance, dg.AssetKey(asset), experiment)


def test_every_asset_is_materialized_and_every_check_passes(materialized):
    instance = materialized.instance
    timings = materialized.timings
    lines = materialized.lines
    from pipelines.definitions import ASSETS

    for asset in ASSETS:
        for key in asset.keys:
            assert instance.get_latest_materialization_event(key) is not None, key
    assert not [line for line in lines if "check failed" in line]
    assert {"discovery", "interaction", "training", "evaluation"} <= set(timings)


def test_a_second_run_of_the_experiment_refuses_at_once_and_the_first_completes(materialized):
    """Two `mobileforge run` of one experiment on one store: the one started second refuses at once naming the
    run that holds the experiment and launches nothing; the first completes and everything it stored verifies
    against its digests (manifests, artifact markers, staged attempts)."""
    code, _, err = materialized.contender.outcome()
    print(f"\nrefused after {materialized.contender.refused_after:.1f} s")
    assert code == 1, err
    assert "experiment 'ci' is being materialized by run " in err
    assert "wait for it to finish or use another --experiment" in err and "Traceback" not in err
    assert materialized.contender.refused_after < 120
    with dg.DagsterInstance.from_config(str(materialized.contender.home)) as instance:
        assert not instance.get_runs()
    launchers = {run.tags.get("mobileforge/run") for run in materialized.instance.get_runs()}
    assert len(launchers) == 1  # every Dagster run came from the run that held the lock
    counts = _verify_everything_stored(materialized.root)
    print(f"verified: {counts}")
    assert counts["partitions"] > 10 and counts["artifacts"] >= 1 and counts["staged attempts"] > 0


def _verify_everything_stored(root: Path) -> dict[str, int]:
    from ops.data.attempt_store import ParquetAttemptStore
    from resources.experiment import PartitionAddress
    from resources.storage import ARTIFACT_MARKER, MANIFEST, ArtifactStore, ParquetIOManager, StorageLocation

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


def test_runs_are_listed_by_the_graphql_api_under_the_code_location_with_stage_job_names(materialized):
    """What the UI's timeline and Jobs page read: runs with the `mobileforge` location's origin."""
    instance = materialized.instance
    query = "{ runsOrError { ... on Runs { results { jobName status repositoryOrigin { repositoryLocationName } } } } }"
    result = subprocess.run([str(Path(sys.executable).parent / "dagster-graphql"), "-w", "workspace.yaml", "-t", query],
                            cwd=REPO, capture_output=True, text=True, timeout=300,
                            env={**os.environ, "DAGSTER_HOME": instance.root_directory})
    assert result.returncode == 0, result.stderr[-2000:]
    (answer,) = [line for line in result.stdout.splitlines() if line.startswith('{"data"')]  # among code-server lines
    runs = json.loads(answer)["data"]["runsOrError"]["results"]
    assert {r["repositoryOrigin"]["repositoryLocationName"] for r in runs} == {"mobileforge"}
    assert {r["jobName"] for r in runs} == {"policy", "discovery", "interaction", "training", "evaluation"}
    assert {r["status"] for r in runs} == {"SUCCESS"}


def _inline_pngs(markdown: str) -> list[Image.Image]:
    images = [Image.open(io.BytesIO(base64.b64decode(data)))
              for data in re.findall(r"data:image/png;base64,([A-Za-z0-9+/=]+)", markdown)]
    for image in images:
        image.verify()  # a complete, valid PNG
    return images


def test_the_benchmark_metadata_carries_its_chart_inline_and_lineage_last(materialized):
    instance = materialized.instance
    meta = _latest(instance, "benchmark_results").asset_materialization.metadata
    (chart,) = _inline_pngs(meta["pass@2_chart"].value)
    assert chart.format == "PNG" and chart.width > 300
    keys = list(meta)  # what the asset computed, then its lineage (the IO manager's storage lines follow)
    assert keys.index("pass@2_chart") < keys.index("code_version") < keys.index("config") < keys.index("upstream")
    assert all(len(line) < 400 for line in meta["by_difficulty"].value.splitlines())
    for key, curves in (("rollout_attempts", "success_by_attempt"), ("step_datasets", "sr_histogram")):
        event = _latest(instance, key).asset_materialization
        assert len(_inline_pngs(event.metadata[curves].value)) == 1, key


def test_the_charts_render_from_the_small_runs_data(materialized):
    resources = materialized.resources
    instance = materialized.instance
    from ops.evaluation.benchmark import pass_at_k
    from ops.evaluation.plots import pass_at_k_chart, training_curves_chart

    chart = pass_at_k_chart(pass_at_k(_load(resources, "benchmark_results"), 2), 2)
    assert chart.series == ("adagrpo", "base", "grsd", "hifpo", "rft") and _inline_pngs(
        f"data:image/png;base64,{base64.b64encode(chart.png).decode()}")
    trained = [m for m in ("hifpo_checkpoint", "rft_checkpoint", "grsd_checkpoint")
               if Checkpoint.model_validate(_load(resources, m)).trained]
    for method in trained:
        meta = _latest(instance, method).asset_materialization.metadata
        assert len(_inline_pngs(meta["curves"].value)) == 1
        manifest = json.loads((resources["artifact_store"].local_path(meta["weights"].value) / "manifest.json").read_text())
        assert set(training_curves_chart(manifest["curves"], method).series) == {
            name for name, points in manifest["curves"].items() if points}
        assert list(Path(meta["tensorboard"].value).glob("events.out.tfevents.*"))  # TensorBoard reads them


def test_rollouts_curriculum_and_benchmark_hold_real_rows(materialized):
    resources = materialized.resources
    instance = materialized.instance
    tasks = _load(resources, "curriculum_tasks")
    attempts = _load(resources, "rollout_attempts")
    assert tasks.height > 0 and tasks["verifiable"].any()
    rollouts = FAST["rollouts"]
    assert attempts.height == rollouts["max_tasks"] * rollouts["attempts"] and attempts["gt_success"].is_not_null().all()
    bench = _load(resources, "benchmark_results")
    policies = {"base", "hifpo", "rft", "grsd", "adagrpo"}
    assert set(bench["policy_id"]) == policies  # the SFT ablation is off by default: not trained, not evaluated
    for method in ("hint_sft", "no_hint_sft"):
        assert Checkpoint.model_validate(_load(resources, f"{method}_checkpoint")).disabled
    # 1 template of each held-out split (test, ood) x k = 2 attempts, for every policy
    assert bench.group_by("policy_id").len()["len"].to_list() == [1 * 2 * 2] * len(policies)
    meta = _latest(instance, "benchmark_results").asset_materialization.metadata
    versus = meta["versus_base"].value  # the paired comparison, one row per policy
    assert all(f"| {p} | " in versus for p in policies) and "sign test p" in versus


def test_trained_checkpoints_differ_from_the_base_and_reload(materialized):
    resources = materialized.resources
    store = resources["artifact_store"]
    from training.inference.local_policy import LocalPolicy

    base = Checkpoint.model_validate(_load(resources, "base_policy"))  # one base per experiment
    before = load_file(store.local_path(base.uri) / "model.safetensors")
    trained = []
    for method in ("hifpo_checkpoint", "rft_checkpoint", "grsd_checkpoint"):
        ckpt = Checkpoint.model_validate(_load(resources, method))
        assert (ckpt.method, ckpt.base, ckpt.prompt_style) == (method.split("_")[0], base.version, base.prompt_style)
        directory = store.local_path(ckpt.uri)
        if ckpt.trained:  # an untrained method (no data) passes the base on, by its URI
            after = load_file(directory / "model.safetensors")
            assert any(not (before[k] == after[k]).all() for k in before), method
            assert (directory / "manifest.json").exists()
            trained.append(method)
        else:
            assert ckpt.uri == base.uri and ckpt.reason
        assert LocalPolicy(directory).version
    assert trained  # the small run still has data for at least one method


def test_rft_second_round_runs_hint_guided_attempts_on_fresh_variants(materialized):
    root = materialized.root
    instance = materialized.instance
    event = _latest(instance, "rft_checkpoint")
    rounds = event.asset_materialization.metadata["rounds"].value
    assert [r["round"] for r in rounds] == [1, 2]
    assert rounds[1]["attempts"] == 2 * 2
    # the round-2 attempts staged by the round-1 policy: fresh variants, attempt 2 reads attempt 1's hint
    summaries = [json.loads(p.read_text()) for p in (root / "ci" / "_staging" / "rft").glob("*/*/attempt_*.json")]
    assert len(summaries) == 4 and {s["policy_version"] for s in summaries} == {f"rft-r1:{event.run_id[:8]}"}
    assert all(s["task"]["task_id"].endswith("~r2") for s in summaries)
    failed_first = {s["task"]["task_id"] for s in summaries if s["attempt"] == 1 and not s["ground_truth"]["success"]}
    assert failed_first and all(len(s["hints"]) == 1 for s in summaries
                                if s["attempt"] == 2 and s["task"]["task_id"] in failed_first)
    assert all(not s["hints"] for s in summaries if s["attempt"] == 1)


def test_analysis_notebook_runs_on_the_stored_assets(materialized, monkeypatch):
    root = materialized.root
    monkeypatch.setenv("MOBILEFORGE_STORAGE_ROOT", str(root))
    nb = nbformat.read(REPO / "notebooks" / "rollout_analysis.ipynb", as_version=4)
    NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(REPO)}}).execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    assert any("ci" in str(o.get("data", {})) for o in outputs)


def test_the_printed_table_pairs_every_adapted_policy_with_the_base(materialized, capsys):
    from mobileforge.cli.run import print_benchmark, print_costs

    resources = materialized.resources
    instance = materialized.instance
    print_benchmark(resources["io_manager"], "ci", 2)
    out = capsys.readouterr().out
    assert "Held-out benchmark (2 tasks, 2 attempts each)" in out and "Paired with the base" in out  # test + ood
    for column in ("test@2", "ood@2", "grounded@2", "gained", "lost", "p_value", "ci_high"):
        assert column in out
    print_costs(instance, "ci")
    training, benchmark = capsys.readouterr().out.splitlines()
    assert training.startswith("Training cost: hifpo ") and training.count("CPU s") == 4, training
    assert benchmark.startswith("Benchmark cost: base ") and "episodes run" in benchmark, benchmark
    cpu = {}
    for method in ("hifpo", "rft", "grsd", "adagrpo"):  # each trainer's own work, in its own process
        metadata = _latest(instance, f"{method}_checkpoint").asset_materialization.metadata
        # a method that passed the base on (no samples) only decided so: its trainer is preloaded, so ~0 s
        cpu[method] = (metadata["cpu_seconds"].value, "reason" in metadata)
    assert all(seconds > 0 or (passed_on and seconds == 0) for seconds, passed_on in cpu.values()), cpu
    assert not all(passed_on for _, passed_on in cpu.values()), cpu


def test_a_run_from_a_later_stage_refuses_missing_inputs_and_config_it_would_ignore(materialized):
    from pipelines.run.experiment import run_experiment
    from pipelines.start_point import ConfigError

    instance = materialized.instance
    with pytest.raises(ConfigError, match=r"has not stored .*exploration_traces \(11 of 11 partitions\).*rollout_attempts"):
        run_experiment("never-run", {}, instance=instance, from_stage="evaluation")
    with pytest.raises(ConfigError, match=r"config of rollouts would have no effect"):
        run_experiment("ci", {"rollouts": {"attempts": 2}}, instance=instance, from_stage="training")
    with pytest.raises(ConfigError, match=r"no such stage or asset; the stages are policy, discovery"):
        run_experiment("ci", {}, instance=instance, from_stage="benchmark")


def test_an_ablation_forked_from_one_asset_retrains_only_that_asset(materialized):
    """`--experiment ci-no-spa --fork ci --from adagrpo_checkpoint`: the training stage runs AdaGRPO
    alone (the other methods are copied), and the base's benchmark episodes are resumed."""
    from pipelines.definitions import ASSETS, CHECKS, STAGES
    from pipelines.run.experiment import run_experiment
    from pipelines.run.fork import FORKED_FROM
    from pipelines.run.observer import LineObserver

    resources = materialized.resources
    instance = materialized.instance
    defs = dg.Definitions(assets=ASSETS, asset_checks=CHECKS, resources=resources, jobs=STAGES)
    config = {"adagrpo_checkpoint": {"overrides": {**FAST["adagrpo_checkpoint"]["overrides"], "spa": False}},
              "benchmark_results": {**FAST["benchmark_results"], "policies": ["base", "adagrpo"]}}
    lines: list[str] = []
    timings = run_experiment("ci-no-spa", config, instance=instance, observer=LineObserver(lines.append), defs=defs,
                             from_stage="adagrpo_checkpoint", fork="ci")
    assert list(timings) == ["training", "evaluation"]
    assert any("stage training runs adagrpo_checkpoint only" in line for line in lines), lines

    def latest(asset: str):
        return _latest(instance, asset, "ci-no-spa")

    for method in ("hifpo", "rft", "grsd"):
        assert latest(f"{method}_checkpoint").asset_materialization.metadata[FORKED_FROM].value == "ci"
    trained = latest("adagrpo_checkpoint")
    assert FORKED_FROM not in trained.asset_materialization.metadata
    assert trained.asset_materialization.metadata["ablation"].value["spa"] is False
    assert instance.get_run_by_id(trained.run_id).asset_selection == {dg.AssetKey("adagrpo_checkpoint")}
    assert set(_load(resources, "benchmark_results", "ci-no-spa")["policy_id"]) == {"base", "adagrpo"}
    cost = latest("benchmark_results").asset_materialization.metadata["cost_by_policy"].value
    assert cost["base"]["episodes_run"] == 0, cost  # resumed: the parent's staged episodes were copied


# last in this module: it re-materializes the benchmark that earlier tests read
def test_from_evaluation_rebenchmarks_on_the_stored_stages_only(materialized):
    from pipelines.run.experiment import run_experiment
    from pipelines.run.observer import LineObserver

    resources = materialized.resources
    instance = materialized.instance
    rollouts_run = _latest(instance, "rollout_attempts").run_id
    before = _load(resources, "benchmark_results")
    first = _latest(instance, "benchmark_results").asset_materialization
    bench = {**FAST["benchmark_results"], "seeds_per_template": 2, "policies": ["base", "rft"]}
    from pipelines.definitions import ASSETS, CHECKS, STAGES

    # the fixture's storage root (pipelines.definitions.defs was built with whatever root was set at import)
    defs = dg.Definitions(assets=ASSETS, asset_checks=CHECKS, resources=resources, jobs=STAGES)
    timings = run_experiment("ci", {"benchmark_results": bench}, instance=instance, from_stage="evaluation",
                             observer=LineObserver(lambda line: None), defs=defs)
    assert list(timings) == ["evaluation"]
    assert _latest(instance, "rollout_attempts").run_id == rollouts_run
    after = _load(resources, "benchmark_results")
    assert after["task_id"].n_unique() == 2 * before["task_id"].n_unique()
    assert set(after["policy_id"]) == {"base", "rft"}  # the policies asked for, no others
    # each task's first app is searched once: the rerun searched only the new seeds' tasks
    second = _latest(instance, "benchmark_results").asset_materialization
    assert first.metadata["first_apps_searched"].value == before["task_id"].n_unique()
    assert second.metadata["first_apps_searched"].value == before["task_id"].n_unique()
