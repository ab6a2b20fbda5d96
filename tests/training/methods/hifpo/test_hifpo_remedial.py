"""HiFPO's remedial epoch (MobileWizard §3.4.4, App. B): after the run, one more epoch of the same GRPO training
on the step samples supplemented by the remedial rows; without remedial rows, the run as it was, saying why."""

from __future__ import annotations

import json

import polars as pl
import pytest
from datasets import Dataset
from safetensors.torch import load_file

from tests.training.samples import step_frame
from training.methods.hifpo.trainer import prepare_hifpo, train_hifpo, with_remedial_epoch
from training.methods.hifpo.config import HiFPOConfig
from training.trainers.manifest import read_manifest
from training.trainers.runs import TrainOutcome, load_processor, train_and_save
from training.trainers.step_datasets import build_step_dataset

# No weight decay: any weight change comes from a GRPO gradient.
CONFIG = HiFPOConfig.cpu_tiny(max_steps=2, learning_rate=1e-3, weight_decay=0.0, action_format="canonical")


def remedial_dataset(n: int = 3) -> Dataset:
    """`n` step samples told apart from the step dataset's by their prompt and task."""
    rows = step_frame(n).with_columns(pl.col("prompt").str.replace("Tap ", "Repair: tap "),
                                      pl.lit("remedial").alias("task_id"))
    return build_step_dataset(rows)


def _texts(prompts: list) -> list[str]:
    return [json.dumps(p) for p in prompts]


def _weights(report) -> dict:
    return load_file(report.checkpoint / "model.safetensors")


@pytest.fixture(scope="module")
def without(warm_base, step_dataset, tmp_path_factory):
    return train_hifpo(warm_base, step_dataset, tmp_path_factory.mktemp("plain") / "ckpt", CONFIG)


def test_the_last_epoch_trains_on_the_step_samples_and_the_remedial_rows(warm_base, step_dataset, without, tmp_path):
    remedial = remedial_dataset()
    run = prepare_hifpo(warm_base, step_dataset, tmp_path / "ckpt", CONFIG, remedial=remedial)
    report = train_and_save(run, method="hifpo", out_dir=tmp_path / "ckpt", config=CONFIG)

    record = report.details["remedial_epoch"]
    print(f"remedial epoch on the tiny model: {record}")
    assert (record["rows_added"], record["step_rows"]) == (len(remedial), len(step_dataset))
    assert record["steps"] >= 1 and report.steps == CONFIG.max_steps + record["steps"]
    # supplemented, not replaced: the last epoch's training set is every step sample plus every remedial row
    trained = _texts(run.trainer.train_dataset["prompt"])
    assert sorted(trained) == sorted(_texts(step_dataset["prompt"]) + _texts(remedial["prompt"]))
    assert sum("Repair: tap" in t for t in trained) == len(remedial)
    # the curves count the epoch's optimizer steps after the run's
    assert [step for step, _ in report.curves["overall"]] == list(range(1, report.steps + 1))
    assert read_manifest(report.checkpoint).details["remedial_epoch"] == record
    before, after = _weights(without), _weights(report)
    assert any(not before[k].equal(after[k]) for k in before)


def test_no_remedial_rows_train_as_without_and_say_so(warm_base, step_dataset, without, tmp_path):
    report = train_hifpo(warm_base, step_dataset, tmp_path / "ckpt", CONFIG, remedial=Dataset.from_list([]))
    assert report.details == {"remedial_epoch": {"skipped": "no remedial rows"}}
    assert report.steps == without.steps == CONFIG.max_steps
    before, after = _weights(without), _weights(report)
    assert all(before[k].equal(after[k]) for k in before)


def test_remedial_rows_that_cannot_train_leave_the_run_as_it_was_and_say_why(warm_base, step_dataset):
    long_prompt = pl.col("prompt").str.replace("Tap ", "Tap " + "Wi-Fi " * 300)
    overlong = build_step_dataset(step_frame(1).with_columns(long_prompt))
    outcome = TrainOutcome({}, [], 2)
    run = with_remedial_epoch(lambda trainer: outcome, overlong, step_dataset.column_names,
                              load_processor(warm_base), CONFIG)
    assert run(None).details == {"remedial_epoch": {"skipped": "all 1 remedial rows dropped: {'prompt_too_long': 1}"}}


def test_remedial_rows_must_share_the_step_samples_columns(warm_base, step_dataset, tmp_path):
    other = remedial_dataset(2).remove_columns("verified_outcome")
    with pytest.raises(ValueError, match=r"the remedial rows have the columns .* the step samples"):
        prepare_hifpo(warm_base, step_dataset, tmp_path / "x", CONFIG, remedial=other)
