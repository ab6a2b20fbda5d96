"""`mobileforge run` refuses bad config before any work: unknown assets and fields, wrong types,
bad YAML shapes and unsafe experiment names fail with the field named, before the experiment is
registered, its log written or a stage launched — and before Dagster or torch is imported, which
is what keeps them under a second (0.35-0.45 s measured on a loaded 2-core machine, 2026-11-27).

Each case runs the real command in a subprocess; the wall times are printed (`pytest -s`), what is
asserted is the import-free path (a wall-time bound would measure the machine's load)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pipelines.definitions import defs
from pipelines.run.config_check import check_config, stage_jobs
from pipelines.start_point import ConfigError

REPO = Path(__file__).resolve().parents[2]
BOUND_SECONDS = 20.0  # the whole command on a loaded machine; what is checked is that no stage ran
# runs the CLI as `mobileforge run ARGS` would and prints the heavy modules imported when it exits
_IMPORT_PROBE = """
import sys
from mobileforge.cli.main import cli
try:
    cli(["run", *sys.argv[1:]])
finally:
    print("imported:", sorted(m for m in ("dagster", "torch", "polars") if m in sys.modules), file=sys.stderr)
"""


def _mobileforge(tmp_path: Path, *args: str, config_text: str | bytes | None = None
                 ) -> tuple[subprocess.CompletedProcess, float]:
    env = {**os.environ, "DAGSTER_HOME": str(tmp_path / "dagster_home"),
           "MOBILEFORGE_STORAGE_ROOT": str(tmp_path / "storage"), "OMP_NUM_THREADS": "1"}
    if config_text is not None:
        data = config_text if isinstance(config_text, bytes) else config_text.encode()
        (tmp_path / "config.yaml").write_bytes(data)
        args = (*args, "--config", str(tmp_path / "config.yaml"))
    start = time.perf_counter()
    result = subprocess.run([sys.executable, "-c", _IMPORT_PROBE, *args], cwd=REPO, env=env,
                            capture_output=True, text=True, timeout=600)  # a hang, not a slow import on a loaded machine
    return result, time.perf_counter() - start


CASES = {
    "unknown field": (["--set", "rollouts.nonexistent=1"], None, ["rollouts.nonexistent", "no such field"]),
    "unknown asset": (["--set", "nonexistent.field=1"], None, ["nonexistent", "no asset"]),
    "wrong type": (["--set", "rollouts.temperature=abc"], None, ["rollouts.temperature", "expected number or null",
                                                               "'abc'"]),
    "out of range": (["--set", "rollouts.attempts=0"], None, ["rollouts.attempts", "less than the minimum of 1"]),
    "string for an int": (["--set", "rollouts.attempts='2'"], None, ["rollouts.attempts", "expected integer, got '2'"]),
    "not one of the choices": (["--set", "rollouts.critic=gpt"], None, ["rollouts.critic", "'gpt'"]),
    "bad --set value": (["--set", "rollouts.attempts=[1"], None, ["rollouts.attempts=[1", "not valid YAML"]),
    "scalar YAML": ([], "3\n", ["--config", "got a int"]),
    "list YAML": ([], "- rollouts\n- attempts\n", ["--config", "got a list"]),
    "asset mapped to a scalar": ([], "rollouts: 3\n", ["--config", "'rollouts' maps to a int"]),
    "broken YAML": ([], "rollouts: {attempts: 2\n", ["--config", "not valid YAML"]),
    "empty YAML with a bad --set": (["--set", "rollouts.temperature=abc"], "", ["rollouts.temperature"]),
    "500-character name": (["--experiment", "x" * 500], None, ["--experiment", "at most 64 characters"]),
    "a billion attempts on 100,000 workers": (
        ["--set", "rollouts.attempts=1000000000", "--set", "rollouts.workers=100000"], None,
        ["rollouts.attempts: 1000000000 is greater than the maximum of 100",
         "rollouts.workers: 100000 is greater than the maximum of 64"]),
    "k of 23 digits": (["--set", "benchmark_results.k=99999999999999999999999"], None,
                       ["benchmark_results.k", "greater than the maximum"]),
    "an infinite temperature": (["--set", "rollouts.temperature=.inf"], None,
                                ["rollouts.temperature: not a finite number (inf)"]),
    "a NaN temperature in a file": ([], "benchmark_results: {temperature: .nan}\n",
                                    ["benchmark_results.temperature: not a finite number (nan)"]),
    "a negative seed": (["--set", "benchmark_results.seed=-5"], None,
                        ["benchmark_results.seed: -5 is less than the minimum of 0"]),
    "a 5,000-digit value": (["--set", "rollouts.attempts=" + "9" * 5000], None, ["--set", "Exceeds the limit"]),
    "a YAML alias bomb": ([], "a: &a [x, x, x, x, x, x, x, x, x]\n"
                          + "".join(f"{n}: &{n} [{', '.join([f'*{p}'] * 9)}]\n" for p, n in zip("abcdefgh", "bcdefghi")),
                          ["--config", "aliases (*name) are not accepted"]),
    "YAML nested 10,000 deep": ([], "[" * 10_000 + "]" * 10_000, ["--config", "nested deeper than 32 levels"]),
    "a binary file": ([], bytes(range(256)) * 8, ["--config", "not UTF-8 text"]),
    "a file of NUL bytes": ([], b"\0" * 64, ["--config", "a binary file"]),
    "a config of 2 MB": ([], "# padding\n" * 200_000, ["--config", "over 1048576 bytes"]),
    "pipe in the name": (["--experiment", "a|b"], None, ["--experiment", "'a|b'"]),
}


@pytest.mark.parametrize("case", list(CASES))
def test_bad_config_fails_before_any_work_naming_the_field(tmp_path, case):
    args, config_text, expected = CASES[case]
    result, seconds = _mobileforge(tmp_path, *args, config_text=config_text)
    print(f"\n{case}: exit {result.returncode} in {seconds:.2f} s")
    assert result.returncode == 2, result.stdout + result.stderr  # click's usage error
    for text in expected:
        assert text in result.stderr, result.stderr
    assert "Traceback" not in result.stderr
    assert "imported: []" in result.stderr  # refused before the graph (Dagster, torch) was imported
    assert seconds < BOUND_SECONDS
    # nothing was registered, logged or stored
    assert not (tmp_path / "dagster_home" / "logs").exists() and not (tmp_path / "storage").exists()
    assert not (tmp_path / "dagster_home" / "storage").exists()


def test_an_empty_yaml_with_a_good_set_is_valid_config(tmp_path):
    from mobileforge.cli.run_config import experiment_config, read_config_file

    (tmp_path / "empty.yaml").write_text("")
    config, _ = experiment_config("default", read_config_file(tmp_path / "empty.yaml"), ("rollouts.attempts=2",))
    assert config == {"rollouts": {"attempts": 2}}
    check_config(config, stage_jobs(defs))


def test_check_config_names_every_problem_and_accepts_the_named_ablations_and_ci_config():
    from resources.experiment_names import NAMED_ABLATIONS
    from tests.pipelines.test_end_to_end import FAST

    jobs = stage_jobs(defs)
    start = time.perf_counter()
    with pytest.raises(ConfigError) as caught:
        check_config({"rollouts": {"temperature": "abc", "nope": 1}, "benchmark_results": {"k": "x"}}, jobs)
    seconds = time.perf_counter() - start
    message = str(caught.value)
    assert "rollouts.temperature" in message and "rollouts.nope" in message and "benchmark_results.k" in message
    assert seconds < 1.0, seconds  # the check itself, once the graph is imported
    for config in (*NAMED_ABLATIONS.values(), FAST):
        check_config(config, jobs)


def test_the_cli_schema_snapshot_matches_the_config_classes():
    from pipelines.config_snapshot import snapshot_text
    from resources.stage_config import SNAPSHOT

    assert SNAPSHOT.read_text() == snapshot_text(), \
        "an asset's Config class changed: regenerate with `python -m pipelines.config_snapshot`"


@pytest.mark.parametrize("args, expected", [
    (["--set", "benchmark_results.split=train", "--set", "benchmark_results.first_seed=0"],
     "benchmark_results.first_seed: 0 with split 'train'"),
    (["--set", 'hifpo_checkpoint.overrides={"lerning_rate": 0.1}'], "overrides.lerning_rate: Extra inputs"),
    (["--set", 'rft_checkpoint.overrides={"lora": {"r": 0}}'], "overrides.lora.r: Input should be greater than 0"),
    (["--set", 'adagrpo_checkpoint.overrides={"epochs": "many"}'], "overrides.epochs: Input should be a valid integer"),
])
def test_rules_beyond_the_schema_are_checked_once_the_graph_is_loaded(tmp_path, args, expected):
    """Cross-field rules and the trainers' own settings (`overrides`) fail before any stage too."""
    result, _ = _mobileforge(tmp_path, *args)
    assert result.returncode == 2 and expected in result.stderr, result.stderr
    assert "Traceback" not in result.stderr and not (tmp_path / "storage").exists()


def test_a_refused_from_writes_nothing(tmp_path, monkeypatch):
    """`--from` on a home without an instance is refused before one is created; with an instance, a
    start whose inputs the experiment has not stored is refused before a log, a lock or a record."""
    result, _ = _mobileforge(tmp_path, "--from", "evaluation")
    assert result.returncode == 2 and "--from evaluation: nothing is stored under DAGSTER_HOME" in result.stderr
    assert not (tmp_path / "dagster_home").exists() and not (tmp_path / "storage").exists()

    from pipelines.run.instance import default_instance

    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "dagster_home"))
    default_instance()  # an instance, with nothing stored for any experiment
    before = sorted(p for p in tmp_path.rglob("*") if p.is_file())
    result, _ = _mobileforge(tmp_path, "--from", "evaluation", "--experiment", "empty")
    assert result.returncode == 2, result.stderr
    assert "experiment 'empty' has not stored what the run reads" in result.stderr and "Traceback" not in result.stderr
    assert sorted(p for p in tmp_path.rglob("*") if p.is_file()) == before
