"""HiFPO with history self-alignment (MobileWizard §3.4.3) on the tiny model: rounds of real TRL steps,
the validation reward after each, alignment triggered by the stall and recorded with its counts."""

from __future__ import annotations

import json

import polars as pl
import pytest
from pydantic import ValidationError

from ops.actions import Action, ActionType, ParsedOutput, ReasoningParts
from ops.agent.messages import messages_to_json
from ops.agent.policy_prompt import build_policy_prompt
from ops.agent.reasoning_memory import ReasoningMemory, StepOutcome
from ops.judging.reward_columns import ANNOTATION_COLUMNS
from tests.support.embedders import HashingEmbedder
from tests.training.samples import ELEMENT_BOXES, LABELS, png
from training.methods.hifpo.trainer import prepare_hifpo
from training.methods.hifpo.config import HiFPOConfig
from training.methods.hifpo.history_alignment_rounds import round_budgets
from training.trainers.manifest import read_manifest
from training.trainers.runs import train_and_save
from training.trainers.step_datasets import build_step_dataset

WIZARD = {"structure_weight": 0.2, "reasoning_weight": 0.2}
ALIGNMENT = {"rounds": 2, "stall_patience": 1, "temperatures": [0.7, 1.3]}


def _parts(tag: str, target: int) -> ReasoningParts:
    return ReasoningParts(f"{tag}: the last tap worked.", f"{tag}: {LABELS[target]} is listed.",
                          f"{tag}: open {LABELS[target]}.", f"{tag}: click {LABELS[target]}.")


def wizard_frame(attempts: int, steps: int) -> pl.DataFrame:
    """Structured step samples: `attempts` trajectories of `steps` clicks, each prompt showing the memory
    of the rollout's own earlier outputs (all successful), with annotated targets and each step's stored
    outcome (none on an attempt's last step)."""
    rows = []
    for attempt in range(attempts):
        memory = ReasoningMemory()
        for step in range(steps):
            target = (attempt + step) % 3
            click = Action(ActionType.CLICK, point=(500, 165 + 330 * target))
            rows.append({
                "prompt": messages_to_json(build_policy_prompt("mobilewizard", f"Open {LABELS[target]}", [], [],
                                                               memory=memory)),
                "image": png((40 * step % 256, 90, 40 * attempt % 256)), "target_action": click.to_json(),
                "target_box": None, "elements": json.dumps(ELEMENT_BOXES),
                "task_id": f"task-{attempt}", "attempt": 1, "step": step, "has_hint": False,
                "verified_outcome": "success" if step < steps - 1 else None,
                **dict(zip(ANNOTATION_COLUMNS, _parts("label", target).texts(), strict=True)),
            })
            memory.update(ParsedOutput(click, reasoning=_parts("rollout", target)), StepOutcome.SUCCESS)
    return pl.DataFrame(rows)


def test_round_budgets_split_the_run():
    assert [b["max_steps"] for b in round_budgets(5, 7, 4.0)] == [2, 2, 1, 1, 1]
    assert round_budgets(2, None, 3.0) == [{"max_steps": -1, "num_train_epochs": 1.5}] * 2


@pytest.mark.parametrize(("overrides", "message"), [
    ({"max_steps": 1}, "needs max_steps >= rounds"),
    ({"history_alignment": {**ALIGNMENT, "temperatures": [0.0]}}, "temperatures must be positive"),
    ({"history_alignment": {**ALIGNMENT, "accept_threshold": 1.5}}, "accept_threshold"),
    ({"history_alignment": {**ALIGNMENT, "patience": 2}}, "patience"),
])
def test_bad_alignment_settings_name_the_field(overrides, message):
    with pytest.raises(ValidationError, match=message):
        HiFPOConfig.cpu_tiny(**{"max_steps": 2, "action_format": "mobilewizard", "history_alignment": ALIGNMENT,
                                **overrides})


def test_alignment_needs_the_structured_format(warm_base, tmp_path):
    config = HiFPOConfig.cpu_tiny(max_steps=2, history_alignment=ALIGNMENT)  # label_echo, as the asset may fill it
    with pytest.raises(ValueError, match="memory of the 'mobilewizard' format's prompts; the action format is"):
        prepare_hifpo(warm_base, build_step_dataset(wizard_frame(2, 2)), tmp_path / "x", config)


def test_alignment_is_off_by_default():
    assert HiFPOConfig().history_alignment is None and HiFPOConfig.cpu_tiny().history_alignment is None


def test_a_stalled_run_triggers_alignment_and_records_it(warm_base, tmp_path):
    config = HiFPOConfig.cpu_tiny(max_steps=2, action_format="mobilewizard", reward_options=WIZARD,
                                  max_completion_length=24, history_alignment=ALIGNMENT)
    dataset = build_step_dataset(wizard_frame(attempts=4, steps=2))
    run = prepare_hifpo(warm_base, dataset, tmp_path / "hsa", config, embed=HashingEmbedder())
    before = [_memory_of(p) for p in run.trainer.train_dataset["prompt"]]
    report = train_and_save(run, method="hifpo", out_dir=tmp_path / "hsa", config=config)

    record = report.details["history_alignment"]
    print(f"history alignment on the tiny model: {record}")
    assert report.steps == 2 and record["rounds"] == 2
    assert (record["validation_trajectories"], record["validation_samples"], record["training_trajectories"]) == (1, 2, 3)
    assert report.samples == 6
    # evaluated before training and after each round, at the optimizer step reached
    assert [step for step, _ in report.curves["validation_reward"]] == [0.0, 1.0, 2.0]
    assert record["triggers"] == [1]  # the tiny model's validation reward cannot improve on 0 after round 1
    assert record["trajectories_realigned"] == 2 and record["steps_regenerated"] == 4  # half of 3 trajectories
    assert record["candidates"] == 4 * len(ALIGNMENT["temperatures"])
    # the tiny base writes no structured output: no candidate passes, every label is kept, and counted
    assert (record["steps_rewritten"], record["labels_kept"], record["candidates_passing"]) == (0, 4, 0)
    assert record["best_candidate_score"] <= 0.75
    assert (record["unknown_outcomes"], record["history_gaps"]) == (0, 0)  # every earlier step stored its outcome
    # the realigned trajectories' later steps now show the labelled history, the others the rollout's
    after = [_memory_of(p) for p in run.trainer.train_dataset["prompt"]]
    changed = [i for i, (a, b) in enumerate(zip(before, after, strict=True)) if a != b]
    assert len(changed) == 2 and all("label: click" in after[i] and "rollout" not in after[i] for i in changed)
    assert {i for i, m in enumerate(after) if "rollout" in m} == {i for i, m in enumerate(before) if "rollout" in m} \
        - set(changed)
    manifest = read_manifest(report.checkpoint)
    assert manifest.details["history_alignment"]["triggers"] == [1]
    assert manifest.curves["validation_reward"] == report.curves["validation_reward"]
    # the training curves count optimizer steps over both rounds
    assert [step for step, _ in report.curves["overall"]] == [1, 2]


def test_a_single_trajectory_trains_without_alignment_and_says_why(warm_base, tmp_path):
    config = HiFPOConfig.cpu_tiny(max_steps=2, action_format="mobilewizard", reward_options=WIZARD,
                                  max_completion_length=8, max_prompt_length=None, history_alignment=ALIGNMENT)
    report = train_and_save(prepare_hifpo(warm_base, build_step_dataset(wizard_frame(attempts=1, steps=4)),
                                          tmp_path / "one", config, embed=HashingEmbedder()),
                            method="hifpo", out_dir=tmp_path / "one", config=config)
    assert report.steps == 2 and report.samples == 4
    assert "1 trajectory: none left to train on" in report.details["history_alignment"]["skipped"]


def _memory_of(prompt: list[dict]) -> str:
    text = next(p["text"] for m in prompt if isinstance(m["content"], list) for p in m["content"]
                if p.get("type") == "text")
    return text.split("Memory of earlier steps:")[1]
