"""A stage that lost more than half of its work to errors fails its run, naming the asset, the
counts and the cause: Dagster's blocking `work_not_lost` check on the asset's own counts. End to end,
`mobileforge run` with the LLM critic pointed at a closed port exits non-zero naming the stage,
instead of "rollouts: 0 run, N lost to errors", an empty critic_feedback, training on nothing and
exit 0. A failure's cause chain (e.g. the damaged file behind "Error occurred while loading input")
reaches the terminal."""


import os
import socket
import subprocess
import sys
from pathlib import Path

import dagster as dg
import pytest
import yaml
from dagster._utils.error import SerializableErrorInfo

from pipelines.lost_work import MAX_LOST_SHARE, WORK_COUNTS, WorkCount, lost_work, lost_work_check
from pipelines.run.launcher import error_messages

REPO = Path(__file__).resolve().parents[2]
ROLLOUTS = next(count for count in WORK_COUNTS if count.asset == "rollout_attempts")


@pytest.mark.parametrize(("run", "failed", "lost"), [(0, 4, True), (1, 3, True), (2, 2, False), (4, 0, False)])
def test_more_than_the_stated_share_lost_is_lost_work(run, failed, lost):
    metadata = {"attempts_run": run, "attempts_resumed": 0, "attempts_failed": failed,
                "errors": dg.MetadataValue.json(["critic: connection refused (http://127.0.0.1:9/v1)"] * failed)}
    problem = lost_work(ROLLOUTS, metadata)
    assert (problem is not None) == lost and MAX_LOST_SHARE == 0.5
    if lost:
        assert problem.startswith(f"rollout_attempts: {failed} of {run + failed} rollout attempts lost to errors")
        assert "first causes: critic: connection refused" in problem


def test_a_blocking_check_stops_what_depends_on_the_asset_and_fails_the_run():
    count = WorkCount("attempts", "attempts", ("attempts_run",), "attempts_failed", "errors")

    @dg.asset
    def attempts(context: dg.AssetExecutionContext) -> int:
        context.add_output_metadata({"attempts_run": 0, "attempts_failed": 4,
                                     "errors": dg.MetadataValue.json(["critic: unreachable"])})
        return 0

    @dg.asset
    def trained(attempts: int) -> int:
        raise AssertionError("trained on nothing")

    result = dg.materialize([attempts, trained, lost_work_check(count, None)], raise_on_error=False)
    assert not result.success
    (evaluation,) = result.get_asset_check_evaluations()
    assert not evaluation.passed and evaluation.description == (
        "attempts: 4 of 4 attempts lost to errors (more than 50% of the stage's work); first causes: critic: unreachable")
    assert "trained" not in {e.asset_key.to_user_string() for e in result.get_asset_materialization_events()}


def test_an_errors_cause_chain_is_reported_whole():
    damaged = SerializableErrorInfo("DamagedFileError: /s/default/rollout_attempts/data.parquet is damaged: its sha256 "
                                    "is 1a2b…, the writer recorded 3c4d… (120 rows); rerun the stage", [], "Damaged")
    wrapped = SerializableErrorInfo('Error occurred while loading input "rollout_attempts" of step "step_datasets":',
                                    [], "DagsterExecutionLoadInputError", cause=damaged)
    text = error_messages(wrapped)
    assert text.startswith("Error occurred while loading input") and "data.parquet is damaged" in text


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]  # nothing listens once the probe is closed


SMALL = {"exploration_traces": {"max_transitions": 6, "max_depth": 2},
         "curriculum_tasks": {"variants_per_template": 1},
         "rollouts": {"max_tasks": 2, "attempts": 1, "critic": "llm"}}


@pytest.mark.timeout(1800)  # the policy, discovery (one app) and interaction stages of a small run, on a loaded machine
def test_a_run_whose_critic_is_unreachable_exits_non_zero_naming_the_stage(tmp_path):
    (tmp_path / "small.yaml").write_text(yaml.safe_dump(SMALL))
    env = {key: value for key, value in os.environ.items() if not key.startswith("MOBILEFORGE_")}
    env.update(DAGSTER_HOME=str(tmp_path / "dagster_home"), MOBILEFORGE_STORAGE_ROOT=str(tmp_path / "storage"),
               OMP_NUM_THREADS="1", MOBILEFORGE_SIM_APPS="calendar", MOBILEFORGE_CRITIC_MODEL="openai/critic",
               MOBILEFORGE_CRITIC_API_BASE=f"http://127.0.0.1:{_closed_port()}/v1")
    result = subprocess.run([sys.executable, "-m", "mobileforge.cli.main", "run", "--experiment", "nocritic",
                             "--config", str(tmp_path / "small.yaml"),
                             "--resource", "llm.backoff_initial_s=0.05"], cwd=REPO, env=env, capture_output=True,
                            text=True, timeout=1700)
    print(result.stdout[-3000:], result.stderr[-3000:])
    assert result.returncode == 1
    assert "stage interaction failed" in result.stderr
    assert "rollout_attempts: 2 of 2 rollout attempts lost to errors" in result.stderr
    assert "127.0.0.1" in result.stderr  # the cause: the critic endpoint that did not answer
    assert "Benchmark" not in result.stdout  # nothing after the failed stage ran


def test_the_graph_checks_the_work_of_rollouts_and_re_judgements():
    from pipelines.definitions import defs

    blocking = {(key.asset_key.to_user_string(), key.name) for key in defs.resolve_asset_graph().asset_check_keys
                if key.name == "work_not_lost"}
    assert blocking == {("rollout_attempts", "work_not_lost"), ("critic_calibration", "work_not_lost")}
