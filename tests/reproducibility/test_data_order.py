"""Training data order is a function of the content: ties are broken by identifying columns, joins
keep their left side's order, and the trainers' deterministic-algorithms switch holds only
while they train."""

from __future__ import annotations

import polars as pl
import torch

from ops.samples.step_samples import with_hint_free_copies
from tests.training.samples import click_json, png, prompt_json
from training.trainers.runs import deterministic_algorithms
from training.trainers.sft_config import SFTTrainConfig
from training.trainers.step_datasets import grsd_samples


def _step(task: str, attempt: int, step: int, action: str) -> dict:
    return {"task_id": task, "attempt": attempt, "step": step, "prompt": prompt_json(f"{task} {attempt} {step}"),
            "screenshot_png": png((attempt * 40, step * 40, 0)), "elements": "[]", "action": action,
            "raw_output": action}


def test_grsd_samples_order_pairs_of_one_failed_step_by_successful_attempt():
    steps = pl.DataFrame([_step("a", 1, 0, click_json(0)), _step("a", 2, 0, click_json(1)),
                          _step("a", 3, 0, click_json(2))])
    # one failed step forked from two successful attempts, listed latest first
    forks = pl.DataFrame({"task_id": ["a", "a"], "success_attempt": [3, 1], "failed_attempt": [2, 2],
                          "success_step": [0, 0], "failed_step": [0, 0], "similarity": [0.9, 0.9],
                          "teacher_response": ["from 3", "from 1"]})
    assert grsd_samples(forks, steps)["target_response"].to_list() == ["from 1", "from 3"]
    assert grsd_samples(forks.reverse(), steps).equals(grsd_samples(forks, steps))


def test_hint_free_copies_follow_the_samples_order():
    tasks = [f"t{i:03d}" for i in range(300)][::-1]  # not in sorted order
    samples = pl.DataFrame({"prompt": [prompt_json(t) for t in tasks], "task_id": tasks,
                            "attempt": [2] * len(tasks), "has_hint": [True] * len(tasks)})
    attempts = pl.DataFrame({"task_id": sorted(tasks), "attempt": [2] * len(tasks),
                             "hints_used": [["hint"]] * len(tasks)})
    twinned = with_hint_free_copies(samples, attempts)
    assert twinned["task_id"].to_list() == tasks + tasks
    assert twinned["has_hint"].to_list() == [True] * len(tasks) + [False] * len(tasks)


def test_deterministic_algorithms_hold_only_inside_the_run():
    before = torch.are_deterministic_algorithms_enabled()
    with deterministic_algorithms(SFTTrainConfig.cpu_tiny()):
        assert torch.are_deterministic_algorithms_enabled()
    assert torch.are_deterministic_algorithms_enabled() == before
    with deterministic_algorithms(SFTTrainConfig(deterministic_algorithms=False)):
        assert not torch.are_deterministic_algorithms_enabled()
    assert torch.are_deterministic_algorithms_enabled() == before
