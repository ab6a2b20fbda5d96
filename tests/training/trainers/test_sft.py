"""Step datasets for TRL (build, validate, round-trip, RFT/GRSD samples) and real SFT steps on
the tiny model."""

from __future__ import annotations

import json

import polars as pl
import pytest
import torch
from pydantic import ValidationError
from safetensors.torch import load_file

from tests.training.samples import ELEMENT_BOXES, click_json, png, prompt_json, step_frame
from ops.samples.step_samples import finish_response
from training.trainers.step_datasets import (
    FEATURES,
    StepSampleError,
    build_step_dataset,
    dataset_fingerprint,
    grsd_samples,
    load_step_dataset,
    reward_elements_json,
    rft_samples,
    save_step_dataset,
)
from training.trainers.manifest import read_manifest
from training.threads import torch_threads
from training.trainers.sft import train_sft
from training.trainers.sft_config import SFTTrainConfig
from training.models.tiny import build_tiny_model, load_tiny


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory):
    return build_tiny_model(tmp_path_factory.mktemp("tiny"))


# ------------------------------------------------------------------ datasets


def test_dataset_round_trips_through_disk(tmp_path):
    frame = step_frame(4)
    dataset = build_step_dataset(frame, require_response=True)
    info = save_step_dataset(dataset, tmp_path / "ds")
    loaded = load_step_dataset(tmp_path / "ds")

    assert set(loaded.column_names) == set(FEATURES)
    assert info["rows"] == 4 and info["with_responses"] == 4
    assert dataset_fingerprint(loaded) == info["fingerprint"] == dataset_fingerprint(dataset)
    for row, example in zip(frame.iter_rows(named=True), loaded, strict=True):
        assert example["prompt"] == json.loads(row["prompt"])  # exactly the prompt the policy saw
        assert example["completion"] == [{"role": "assistant", "content": row["target_response"]}]
        assert example["image"].size == (56, 112)
        assert example["target_action"] == row["target_action"]
        assert (example["task_id"], example["attempt"], example["step"], example["has_hint"]) == (
            row["task_id"],
            row["attempt"],
            row["step"],
            row["has_hint"],
        )
    stored_png = loaded.data.table.column("image").to_pylist()[0]["bytes"]
    assert stored_png == frame["image"][0]


def test_fingerprint_follows_content():
    frame = step_frame(3)
    base = dataset_fingerprint(build_step_dataset(frame))
    changed = frame.with_columns(
        pl.when(pl.col("step") == 2)
        .then(pl.lit(click_json(0)))
        .otherwise(pl.col("target_action"))
        .alias("target_action")
    )
    assert dataset_fingerprint(build_step_dataset(frame)) == base
    assert dataset_fingerprint(build_step_dataset(changed)) != base


def test_optional_columns_may_be_absent():
    point_click = json.dumps({"type": "click", "args": {"point": [500, 500]}})  # scorable without elements
    frame = step_frame(2).select("prompt", "image", target_action=pl.lit(point_click))
    dataset = build_step_dataset(frame)
    assert dataset[0]["completion"] is None and dataset[0]["task_id"] is None


@pytest.mark.parametrize(
    ("column", "value", "message"),
    [
        ("prompt", "not json", "row 1: prompt is not JSON"),
        ("prompt", json.dumps([{"role": "user", "content": [{"type": "image"}, {"type": "image"}]}]),
         "2 image placeholders, expected 0 or 1"),
        (
            "prompt",
            json.dumps([{"role": "user", "content": [{"type": "image"}, {"type": "image"}]}]),
            "2 image placeholders",
        ),
        ("prompt", json.dumps([{"role": "robot", "content": "x"}]), "needs a role"),
        ("image", b"GIF89a....", "image must be PNG bytes"),
        ("target_action", '{"type": "fly"}', "target_action is not a canonical action"),
        ("target_box", "[1, 2, 3]", "target_box must be [x0, y0, x1, y1]"),
        ("elements", "{broken", "elements is not JSON"),
        ("elements", json.dumps([{"label": "OK"}]), "elements are not a list of boxes"),
        ("elements", json.dumps(ELEMENT_BOXES[:1]), "target click on element 1 has no box: 1 elements"),
        ("elements", None, "target click on element 1 has no box: no elements and no target_box"),
        ("verified_outcome", "maybe", "row 1: verified_outcome must be one of ['success', 'failure', 'unverified']"),
    ],
)
def test_malformed_rows_are_named(column, value, message):
    rows = step_frame(2).to_dicts()
    rows[1][column] = value
    with pytest.raises(StepSampleError, match=message.replace("[", r"\[").replace("]", r"\]")):
        build_step_dataset(pl.DataFrame(rows))


def test_missing_columns_and_responses_are_rejected():
    with pytest.raises(StepSampleError, match=r"missing columns \['target_action'\]"):
        build_step_dataset(step_frame(1).drop("target_action"))
    with pytest.raises(StepSampleError, match=r"unknown columns \['hint'\]"):
        build_step_dataset(step_frame(1).rename({"has_hint": "hint"}))
    with pytest.raises(StepSampleError, match="no target_response column"):
        build_step_dataset(step_frame(1).drop("target_response"), require_response=True)
    rows = step_frame(2).with_columns(target_response=pl.lit(None, pl.String))
    with pytest.raises(StepSampleError, match="row 0: target_response is missing"):
        build_step_dataset(rows, require_response=True)


def _steps(task: str, attempt: int, actions: list[str | None]) -> list[dict]:
    return [
        {
            "task_id": task,
            "attempt": attempt,
            "step": t,
            "prompt": prompt_json(f"{task} attempt {attempt} step {t}"),
            "screenshot_png": png((attempt * 50, t * 30, 0)),
            "elements": json.dumps(ELEMENT_BOXES),
            "raw_output": f"out {task}/{attempt}/{t}",
            "action": action,
            "verified_outcome": "failure" if action is None else "success",
        }
        for t, action in enumerate(actions)
    ]


def test_rft_samples_keep_parsed_steps_of_verified_successes():
    steps = pl.DataFrame(
        _steps("a", 1, [click_json(0), None, click_json(1)])  # success; step 1 did not parse
        + _steps("a", 2, [click_json(2)])  # failure
        + _steps("b", 1, [click_json(0)])
    )  # no verdict
    attempts = pl.DataFrame(
        {
            "task_id": ["a", "a", "b"],
            "attempt": [1, 2, 1],
            "gt_success": [True, False, None],
            "critic_decision": [0, 1, 1],
            "hints_used": [[], [1], []],
        },
        schema_overrides={"hints_used": pl.List(pl.Int64)},
    )

    by_judge = rft_samples(steps, attempts)
    assert by_judge.select("task_id", "attempt", "step").rows() == [("a", 1, 0), ("a", 1, 2)]
    assert by_judge["target_response"].to_list() == ["out a/1/0", "out a/1/2"]
    assert by_judge["has_hint"].to_list() == [False, False]
    assert by_judge["verified_outcome"].to_list() == ["success", "success"]  # the rollout's, carried as data
    by_critic = rft_samples(steps, attempts, verdict="critic_decision")
    assert by_critic.select("task_id", "attempt", "has_hint").rows() == [("a", 2, True), ("b", 1, False)]
    assert len(build_step_dataset(by_judge, require_response=True)) == 2
    with pytest.raises(ValueError, match="no verdict column 'judge'"):
        rft_samples(steps, attempts, verdict="judge")


def test_rft_samples_end_a_success_where_its_goal_first_held():
    steps = pl.DataFrame(_steps("a", 1, [click_json(0), click_json(1), None, click_json(1)]))  # goal held at step 2
    attempts = pl.DataFrame({"task_id": ["a"], "attempt": [1], "gt_success": [True], "hints_used": [[]]},
                            schema_overrides={"hints_used": pl.List(pl.Int64)})
    finish = finish_response("elements")
    samples = rft_samples(steps, attempts, goal_held={("a", 1): 2}, finish_response=finish)
    assert samples["step"].to_list() == [0, 1, 2]  # step 3, after the goal, is gone
    assert samples["target_response"].to_list() == ["out a/1/0", "out a/1/1", finish]  # step 2 did not even parse
    assert json.loads(samples["target_action"][2]) == {"type": "terminate", "args": {"status": "success"}}
    assert samples["verified_outcome"].to_list() == ["success", "success", None]  # the finish was never executed
    assert len(build_step_dataset(samples, require_response=True)) == 3
    with pytest.raises(ValueError, match="goal_held needs finish_response"):
        rft_samples(steps, attempts, goal_held={("a", 1): 2})


def test_observation_elements_become_reward_elements():
    phonesim_like = [
        {"index": 0, "text": "Wi-Fi", "bounds": [0, 0, 1080, 400], "grid": [0, 0, 1000, 167],
         "checkable": True, "checked": False},
        {"index": 1, "box": [0, 167, 1000, 333]},
        [0, 333, 1000, 500],
    ]
    assert json.loads(reward_elements_json(json.dumps(phonesim_like))) == [
        {"box": [0, 0, 1000, 167], "label": "Wi-Fi [off]"},  # the label exactly as the prompt lists it
        {"box": [0, 167, 1000, 333], "label": "(unlabelled)"},
        [0, 333, 1000, 500],
    ]
    assert reward_elements_json(None) is None
    with pytest.raises(StepSampleError, match="element 0 has no grid box"):
        reward_elements_json(json.dumps([{"bounds": [0, 0, 1080, 400]}]))


def test_grsd_samples_pair_failed_context_with_teacher_response():
    steps = pl.DataFrame(_steps("a", 1, [click_json(0), click_json(1)]) + _steps("a", 2, [click_json(2)] * 3))
    forks = pl.DataFrame(
        {
            "task_id": ["a"],
            "success_attempt": [1],
            "failed_attempt": [2],
            "success_step": [1],
            "failed_step": [2],
            "similarity": [0.97],
            "teacher_response": ["teacher says click 1"],
        }
    )
    samples = grsd_samples(forks, steps)
    row = samples.row(0, named=True)
    assert row["prompt"] == prompt_json("a attempt 2 step 2")  # the failed attempt's context
    assert row["image"] == png((100, 60, 0))
    assert row["target_response"] == "teacher says click 1"
    assert row["target_action"] == click_json(1)  # the successful attempt's action at its fork step
    assert (row["attempt"], row["step"]) == (2, 2)
    assert row["verified_outcome"] is None  # the teacher's action was not executed in the failed context
    assert len(build_step_dataset(samples, require_response=True)) == 1
    with pytest.raises(ValueError, match="1 fork pair"):
        grsd_samples(forks.with_columns(failed_step=pl.lit(9)), steps)


# ------------------------------------------------------------------ SFT


def test_sft_trains_and_loss_decreases(tiny_dir, tmp_path):
    # One sample repeated: the loss on it must fall within a few steps.
    dataset = build_step_dataset(pl.concat([step_frame(1)] * 4), require_response=True)
    config = SFTTrainConfig.cpu_tiny(max_steps=6, learning_rate=1e-2)
    report = train_sft(tiny_dir, dataset, tmp_path / "rft", config, method="rft")

    losses = [value for _, value in report.curves["loss"]]
    assert report.steps == 6 and len(losses) == 6
    assert losses[-1] < losses[0] - 0.5
    before, after = (
        load_file(tiny_dir / "model.safetensors"),
        load_file(tmp_path / "rft" / "model.safetensors"),
    )
    assert any(not before[k].equal(after[k]) for k in before)

    manifest = read_manifest(tmp_path / "rft")
    assert manifest.method == "rft"
    assert manifest.base_checkpoint == str(tiny_dir)
    assert manifest.dataset["fingerprint"] == dataset_fingerprint(dataset)
    assert manifest.config["max_steps"] == 6 and manifest.versions["trl"]
    model, processor = load_tiny(tmp_path / "rft")
    assert processor.tokenizer.padding_side == "left"


def test_sft_rejects_samples_without_responses(tiny_dir, tmp_path):
    dataset = build_step_dataset(step_frame(2).drop("target_response"))
    with pytest.raises(ValueError, match="2 of 2 step samples have no target_response"):
        train_sft(tiny_dir, dataset, tmp_path / "x", SFTTrainConfig.cpu_tiny(max_steps=1))
    with pytest.raises(ValueError, match="method 'DPO/x': expected a method name"):
        train_sft(tiny_dir, dataset, tmp_path / "x", SFTTrainConfig.cpu_tiny(), method="DPO/x")


def test_thread_limit_applies_only_inside_the_run():
    before = torch.get_num_threads()
    with torch_threads(SFTTrainConfig.cpu_tiny().torch_threads):
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == before
    with torch_threads(SFTTrainConfig().torch_threads):  # None keeps torch's default
        assert torch.get_num_threads() == before


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"learning_rate": 0}, "learning_rate"),
        ({"max_length": -5}, "max_length"),
        ({"epochs": 3}, "epochs"),
        ({"model_dtype": "int8"}, "model_dtype"),
    ],
)
def test_bad_sft_config_names_the_field(overrides, field):
    with pytest.raises(ValidationError, match=field):
        SFTTrainConfig.cpu_tiny(**overrides)
