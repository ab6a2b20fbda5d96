"""RFT's `remedial` option (MobileWizard §3.4.4, App. B): the remedial trajectories join the final
training run, and change its rows by exactly the remedial rows."""

from pathlib import Path

import polars as pl
import pytest

import training.methods.rft.trainer as rft
from ops.curriculum.variants import TemplateVariants
from ops.data.attempt_store import ParquetAttemptStore, collect_tables
from ops.remedial.corrective_teaching import ScriptedPolicy, TeachingReport, failed_attempts, remedial_tables, teach
from ops.judging.critic.programmatic import ProgrammaticCritic
from ops.rollout.engine import RolloutConfig, run_rollouts
from ops.samples.step_samples import finish_response
from ops.remedial.solver_teacher import SolverTeacher
from tests.ops.remedial.test_corrective_teaching import BACK, DONE, WIFI, _plan, small_env
from training.trainers.runs import TrainReport
from training.trainers.step_datasets import rft_samples

ROW_KEY = ["task_id", "attempt", "step", "has_hint", "target_response"]


@pytest.fixture(scope="module")
def rollouts_and_remedial(tmp_path_factory):
    """Attempt 1 solves the task, attempt 2 fails at its second step; the remedial rows repair attempt 2."""
    plan = _plan(WIFI)
    store = ParquetAttemptStore.from_uri(str(tmp_path_factory.mktemp("attempts")))
    agent = ScriptedPolicy("elements", [*plan, DONE, plan[0], BACK, DONE], version="agent")
    run_rollouts([WIFI], small_env, agent, ProgrammaticCritic(), store, RolloutConfig(attempts=2))
    tables = collect_tables(store, "agent", [WIFI])
    report = TeachingReport()
    failed = failed_attempts(*tables, {WIFI.task_id: WIFI}, report)
    grafts = teach(failed, SolverTeacher(), small_env, ScriptedPolicy("elements"), ProgrammaticCritic(), report)
    attempts, steps = remedial_tables([g.record for g in grafts])
    assert report.verified == 1
    return tables, rft_samples(steps, attempts, verdict="critic_decision")


def _trained_rows(monkeypatch, tmp_path, tables, rounds: int, remedial) -> list[pl.DataFrame]:
    """The rows of every training run of `run_rft_rounds` (the trainer replaced by a recorder)."""
    runs = []

    def record(base_dir, dataset, out_dir, config, method, progress):
        runs.append(pl.DataFrame(dataset.remove_columns(["prompt", "completion"]).to_list()).with_columns(
            target_response=pl.Series([c[0]["content"] for c in dataset["completion"]])))
        return TrainReport(method, Path(out_dir), None, 1, 0.0, {}, {}, len(dataset))

    monkeypatch.setattr(rft, "train_sft", record)
    config = rft.RFTRoundsConfig(rounds=rounds, hint_free_copies=False)

    def no_policy(*_):
        raise AssertionError("no round after the first has tasks here")

    rft.run_rft_rounds([], tables, config, base_dir=tmp_path, workdir=tmp_path, finish_response=finish_response("elements"),
                       act=no_policy, attempt=no_policy, variants=TemplateVariants(0, 1000), log=lambda line: None,
                       remedial=remedial)
    return runs


@pytest.mark.parametrize("rounds", [1, 2])
def test_remedial_rows_change_the_final_training_rows_by_exactly_those_rows(monkeypatch, tmp_path,
                                                                            rollouts_and_remedial, rounds):
    tables, remedial = rollouts_and_remedial
    without = _trained_rows(monkeypatch, tmp_path, tables, rounds, None)
    with_remedial = _trained_rows(monkeypatch, tmp_path, tables, rounds, remedial)
    # the last round's run takes the rows in; a round 2 that has no tasks ends the rounds after round 1's run
    assert (len(without), len(with_remedial)) == (1, rounds)
    before, after = (runs[-1].select(ROW_KEY) for runs in (without, with_remedial))
    added = after.join(before, on=ROW_KEY, how="anti")
    assert after.height == before.height + remedial.height and added.height == remedial.height
    assert added.sort(ROW_KEY).equals(remedial.select(ROW_KEY).sort(ROW_KEY))
    assert set(added["attempt"]) == {2} and set(before["attempt"]) == {1}  # the repaired failure, the success


def test_empty_remedial_rows_leave_rft_as_it_was(monkeypatch, tmp_path, rollouts_and_remedial):
    tables, remedial = rollouts_and_remedial
    without = _trained_rows(monkeypatch, tmp_path, tables, 1, None)
    empty = _trained_rows(monkeypatch, tmp_path, tables, 1, remedial.head(0))
    assert [r.select(ROW_KEY).equals(s.select(ROW_KEY)) for r, s in zip(without, empty)] == [True]
