"""Rollouts in the structured-reasoning style (MobileWizard §3.3): each attempt carries its memory from
step to step, outputs are read strictly, the four parts and the verified outcome are stored per step."""

import duckdb
import polars as pl
import pytest

from ops.actions import Action, ActionType
from ops.data.attempt_store import ParquetAttemptStore, collect_tables
from ops.judging.critic.programmatic import ProgrammaticCritic
from ops.agent.episode import Observation, PolicyRequest
from ops.agent.reasoning_memory import ReasoningMemory, StepOutcome
from ops.rollout.engine import RolloutConfig, run_rollouts
from ops.data.schemas import validate, with_optional_columns
from ops.agent.step_outcome import verified_outcome
from tests.ops.rollout.test_rollout import sim_tasks, small_env
from tests.support.scripted_policy import RandomClickPolicy, StructuredClickPolicy


@pytest.fixture(scope="module")
def structured_run(tmp_path_factory):
    store = ParquetAttemptStore.from_uri(str(tmp_path_factory.mktemp("structured")))
    policy = StructuredClickPolicy(seed=1, stop_prob=0.1, invalid_every=4)
    summary = run_rollouts(sim_tasks(), small_env, policy, ProgrammaticCritic(), store,
                           RolloutConfig(attempts=2, max_parallel_tasks=1))
    attempts, steps, _ = collect_tables(store, policy.version, sim_tasks())
    return policy, summary, attempts, steps


def test_parts_and_outcomes_are_stored_per_step_and_parse_failures_counted(structured_run):
    policy, summary, attempts, steps = structured_run
    assert validate(steps, "steps") == []
    invalid = steps.filter(pl.col("parse_error").is_not_null())
    assert summary.invalid_actions == invalid.height == policy.requests // 4 > 0
    assert invalid["parse_error"].str.starts_with("structured reasoning: ").all()
    assert invalid.select(pl.col("planning").is_null().all()).item()
    valid = steps.filter(pl.col("action").is_not_null())
    assert valid["planning"].str.starts_with("Work on ").all() and valid["self_verification"].is_not_null().all()
    # every step has its verified outcome but the last of an attempt that ended without a next screen
    # (a loop is seen on the next screen); invalid outputs are failures
    last = attempts.filter(pl.col("end_reason") != "loop").select("task_id", "attempt", step=pl.col("n_steps") - 1)
    ended = steps.join(last, on=["task_id", "attempt", "step"], how="semi")
    assert ended["verified_outcome"].is_null().all()
    before_end = steps.join(last, on=["task_id", "attempt", "step"], how="anti")
    assert before_end["verified_outcome"].is_not_null().all()
    assert set(before_end.filter(pl.col("action").is_null())["verified_outcome"]) == {"failure"}


def test_each_prompt_shows_the_memory_of_its_own_attempt(structured_run):
    policy, _, _, steps = structured_run
    firsts = steps.filter(pl.col("step") == 0)
    assert firsts["prompt"].str.contains("Action history").all() and firsts["prompt"].str.contains("- none yet").all()
    for row in steps.filter(pl.col("step") > 0).iter_rows(named=True):
        before = steps.filter((pl.col("task_id") == row["task_id"]) & (pl.col("attempt") == row["attempt"])
                              & (pl.col("step") == row["step"] - 1)).row(0, named=True)
        entry = (f"- step {row['step']}: {before['action_guidance']} [{before['verified_outcome']}]"
                 if before["action_guidance"] else
                 f"- step {row['step']}: (invalid output: {before['parse_error']}) [failure]")
        assert entry in row["prompt"].replace("\\n", "\n"), (entry, row["prompt"][:400])
        assert "Done:" not in row["prompt"]  # history lines are replaced by the memory


def test_duckdb_reads_the_part_columns(structured_run, tmp_path):
    _, _, _, steps = structured_run
    path = tmp_path / "steps.parquet"
    steps.write_parquet(path)
    rows = duckdb.sql(f"select verified_outcome, count(*) from '{path}' where planning is not null "
                      "group by verified_outcome").fetchall()
    assert sum(n for _, n in rows) == steps["planning"].is_not_null().sum()


def test_other_styles_leave_the_columns_empty_and_old_staged_steps_read_with_them(tmp_path):
    store = ParquetAttemptStore.from_uri(str(tmp_path))
    run_rollouts(sim_tasks()[:1], small_env, RandomClickPolicy(seed=2), ProgrammaticCritic(), store,
                 RolloutConfig(attempts=1))
    _, steps, _ = collect_tables(store, "random", [sim_tasks()[0]])
    assert steps.select(pl.col("planning", "verified_outcome").is_null().all()).row(0) == (True, True)
    old = steps.drop("self_verification", "screen_analysis", "planning", "action_guidance", "verified_outcome")
    assert with_optional_columns(old, "steps").columns == steps.columns
    partial = steps.with_columns(planning=pl.lit("a plan"))
    assert any("some but not all" in p for p in validate(partial, "steps"))


def _observation(screen: str, elements: list[dict]) -> Observation:
    return Observation(b"", elements, None, "settings", screen)


def test_the_verified_outcome_is_what_the_step_visibly_did():
    rows = [{"text": "Wi-Fi", "checked": False}]
    here, same = _observation("network", rows), _observation("network", [dict(rows[0])])
    toggled, elsewhere = _observation("network", [{"text": "Wi-Fi", "checked": True}]), _observation("wifi", rows)
    click = Action(ActionType.CLICK, point=(10, 10))
    assert verified_outcome(click, True, here, elsewhere) == StepOutcome.SUCCESS
    assert verified_outcome(click, True, here, toggled) == StepOutcome.SUCCESS
    assert verified_outcome(click, True, here, same) == StepOutcome.FAILURE
    assert verified_outcome(click, False, here, elsewhere) == StepOutcome.FAILURE
    assert verified_outcome(Action(ActionType.WAIT), True, here, same) == StepOutcome.UNVERIFIED
    from ops.actions import ParseFailure
    assert verified_outcome(ParseFailure("no action", ""), False, here, same) == StepOutcome.FAILURE


def test_the_structured_style_needs_the_memory_in_its_requests():
    policy = StructuredClickPolicy()
    observation = small_env().reset(sim_tasks()[0])
    with pytest.raises(ValueError, match="needs memory="):
        policy.prompt_for(PolicyRequest(observation, "Open Wi-Fi", [], []))
    assert policy.keeps_memory and not RandomClickPolicy().keeps_memory
    [output] = policy.act_batch([PolicyRequest(observation, "Open Wi-Fi", [], [], ReasoningMemory())])
    assert policy.parse(output.raw_text, observation).reasoning is not None
