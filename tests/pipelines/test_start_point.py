"""`mobileforge run --from STAGE|ASSET` on the project's stage jobs: what runs and what is read as stored."""

import pytest

from pipelines.definitions import defs
from pipelines.run.config_check import stage_jobs
from pipelines.start_point import ConfigError, split_at

JOBS = stage_jobs(defs)


def _plan(start, config=None):
    read, run = split_at(JOBS, config or {}, start)
    return ([(p.job.name, None if p.is_whole else p.describe()) for p in read],
            [(p.job.name, None if p.is_whole else p.describe()) for p in run])


def test_without_a_start_every_stage_runs_whole():
    assert _plan(None) == ([], [(job.name, None) for job in JOBS])


def test_a_stage_start_reads_the_stages_before_it_whole():
    assert _plan("training") == ([("policy", None), ("discovery", None), ("interaction", None)],
                                 [("training", None), ("evaluation", None)])


def test_an_asset_start_runs_it_alone_in_its_stage_and_every_later_stage():
    read, run = _plan("adagrpo_checkpoint")
    assert read[-1] == ("training", "fork_pairs, grsd_checkpoint, hifpo_checkpoint, hint_sft_checkpoint, "
                                    "no_hint_sft_checkpoint, remedial_trajectories, rft_checkpoint, step_datasets")
    assert run == [("training", "adagrpo_checkpoint"), ("evaluation", None)]


def test_an_asset_start_also_runs_what_it_feeds_in_its_stage():
    # AdaGRPO starts from the RFT checkpoint (MobileRL §2.1), so retraining RFT retrains it too
    assert _plan("rft_checkpoint")[1][0] == ("training", "adagrpo_checkpoint, rft_checkpoint")
    assert _plan("step_datasets")[1][0] == ("training", "hifpo_checkpoint, hint_sft_checkpoint, no_hint_sft_checkpoint, "
                                                          "step_datasets")


@pytest.mark.parametrize("start", ["rollouts", "critic_feedback"])
def test_a_multi_asset_starts_whole_by_its_op_or_any_of_its_assets(start):
    read, run = _plan(start)
    assert read[-1] == ("interaction", "curriculum_tasks")
    assert run[0] == ("interaction", "critic_calibration, critic_feedback, rollout_attempts, rollout_steps")


def test_config_of_an_asset_that_does_not_run_is_refused():
    with pytest.raises(ConfigError, match="config of hifpo_checkpoint would have no effect.*adagrpo_checkpoint"):
        split_at(JOBS, {"hifpo_checkpoint": {"overrides": {}}}, "adagrpo_checkpoint")
    split_at(JOBS, {"adagrpo_checkpoint": {"overrides": {"spa": False}}, "benchmark_results": {}},
             "adagrpo_checkpoint")


def test_an_unknown_start_names_the_stages():
    with pytest.raises(ConfigError, match=r"'benchmark': no such stage or asset; the stages are policy, discovery"):
        split_at(JOBS, {}, "benchmark")
