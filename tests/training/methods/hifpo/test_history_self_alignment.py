"""History self-alignment without a model (MobileWizard §3.4.3): stall detection on hand-made reward
series, choosing trajectories, and one trajectory regenerated with a scripted generator and scorer."""

from __future__ import annotations

import json

import pytest

from ops.actions import Action, ActionType, ParsedOutput, ReasoningParts, render_structured
from training.methods.hifpo.history_alignment import (
    AlignmentReport, HistoryAlignmentConfig, StallDetector, choose_trajectories, group_trajectories,
    realign_trajectory, reward_ceiling, split_validation, trajectory_history,
)
from ops.agent.policy_prompt import build_policy_prompt
from ops.agent.policy_prompt import with_memory
from ops.agent.reasoning_memory import ReasoningMemory, StepOutcome
from ops.judging.action_reward import RewardConfig
from ops.judging.reward_columns import ANNOTATION_COLUMNS
from tests.support.embedders import HashingEmbedder

TASK = "Turn on airplane mode"


@pytest.mark.parametrize(("series", "patience", "min_improvement", "triggers"), [
    ([0.1, 0.2, 0.2, 0.2, 0.3, 0.25, 0.25], 2, 0.0, [3, 6]),  # two flat evaluations after each best
    ([0.0, 0.0, 0.0, 0.0], 1, 0.0, [1, 2, 3]),  # the tiny base: nothing ever improves
    ([0.0, 0.0, 0.0, 0.0], 3, 0.0, [3]),
    ([0.1, 0.105, 0.2, 0.2], 1, 0.01, [1, 3]),  # +0.005 is not an improvement of more than 0.01
    ([0.5, 0.4, 0.6, 0.7, 0.8], 2, 0.0, []),  # one dip, then steady gains
])
def test_stall_detection_on_hand_made_series(series, patience, min_improvement, triggers):
    detector = StallDetector(patience, min_improvement)
    assert [i for i, value in enumerate(series) if detector.observe(value)] == triggers


def test_stall_detector_refuses_a_non_finite_reward():
    with pytest.raises(ValueError, match="finite"):
        StallDetector(2).observe(float("nan"))


def test_reward_ceiling_counts_the_mobilewizard_weights():
    assert reward_ceiling(RewardConfig()) == pytest.approx(1.0)
    assert reward_ceiling(RewardConfig(structure_weight=0.2, reasoning_weight=0.2)) == pytest.approx(1.4)


def _parts(tag: str) -> ReasoningParts:
    return ReasoningParts(f"{tag} verified the last step", f"{tag} sees the settings screen",
                          f"{tag} plans to open network", f"{tag} clicks network")


CLICK = Action(ActionType.CLICK, point=(500, 300))
ROLLOUT = [_parts("rollout0"), _parts("rollout1")]  # what the policy wrote at rollout time
OUTCOMES = [StepOutcome.SUCCESS, StepOutcome.FAILURE]
LABELS = [_parts("label0"), _parts("label1"), _parts("label2")]


def _rows(steps: tuple[int, ...] = (0, 1, 2)) -> list[dict]:
    """One attempt's step samples as the step dataset holds them: each prompt shows the memory of the
    rollout's own earlier outputs with their verified outcomes, and each row its own step's outcome
    (none on the attempt's last step)."""
    rows, memory = [], ReasoningMemory()
    for step in range(max(steps) + 1):
        if step in steps:
            rows.append({"prompt": build_policy_prompt("mobilewizard", TASK, [], [], memory=memory),
                         "target_action": CLICK.to_json(), "task_id": "t", "attempt": 1, "has_hint": False,
                         "step": step, "verified_outcome": OUTCOMES[step].value if step < len(OUTCOMES) else None,
                         **dict(zip(ANNOTATION_COLUMNS, LABELS[step].texts(), strict=True))})
        if step < len(ROLLOUT):
            memory.update(ParsedOutput(CLICK, reasoning=ROLLOUT[step]), OUTCOMES[step])
    return rows


def _text(prompt: list[dict]) -> str:
    return next(p["text"] for m in prompt if isinstance(m["content"], list) for p in m["content"] if p["type"] == "text")


def test_memory_of_a_stored_prompt_is_replaced():
    rows = _rows()
    fresh = ReasoningMemory()
    fresh.update(ParsedOutput(CLICK, reasoning=_parts("other")), StepOutcome.UNVERIFIED)
    replaced = with_memory(rows[2]["prompt"], fresh)
    assert _text(replaced).endswith(fresh.render()) and "rollout0" not in _text(replaced)
    assert _text(replaced).split("Memory of earlier steps:")[0] == _text(rows[2]["prompt"]).split(
        "Memory of earlier steps:")[0]
    assert replaced[0] == rows[2]["prompt"][0]  # the system message is untouched
    with pytest.raises(ValueError, match="not a mobilewizard step prompt"):
        with_memory([{"role": "user", "content": "Tap Wi-Fi"}], fresh)


def test_a_trajectory_is_regenerated_step_by_step():
    rows = _rows()
    good = render_structured(CLICK, _parts("model0"))
    echo = render_structured(CLICK, _parts("model0 again"))  # the same words: a near-duplicate
    scripted = {  # step -> (candidate, reward as a fraction of the ceiling)
        0: [(good, 0.9), (echo, 0.8), ("CLICK(1, 1)", 0.1)],
        1: [(render_structured(CLICK, _parts("weak1")), 0.75), ("nothing", 0.0)],  # 0.75 does not exceed it
        2: [(render_structured(CLICK, _parts("model2")), 0.95)],
    }
    seen_prompts = []

    def generate(prompt, row):
        seen_prompts.append(prompt)
        return [text for text, _ in scripted[rows[row]["step"]]]

    def score(row, candidates):
        return [dict(scripted[rows[row]["step"]])[c] for c in candidates]

    history = trajectory_history(rows, [0, 1, 2])
    assert [s.outcome for s in history.steps] == [StepOutcome.SUCCESS, StepOutcome.FAILURE, StepOutcome.UNVERIFIED]
    assert (history.unknown_outcomes, history.gaps) == (0, 0)
    rewrites = realign_trajectory(history.steps, generate, score, HashingEmbedder(), HistoryAlignmentConfig())
    assert [r.prompt for r in rewrites] == seen_prompts  # the generator saw the rebuilt prompts
    assert [r.accepted for r in rewrites] == [good, None, scripted[2][0][0]]
    assert [(r.passing, r.duplicates) for r in rewrites] == [(2, 1), (0, 0), (1, 0)]
    # step 1's memory shows the accepted output of step 0 (not the rollout's, not the label), with its outcome
    second = _text(rewrites[1].prompt)
    assert "model0 clicks network [success]" in second and "rollout0" not in second and "label0" not in second
    # step 1 kept its label, so step 2's memory shows the label's parts
    third = _text(rewrites[2].prompt)
    assert "label1 clicks network [failure]" in third and "label1 plans to open network" in third
    assert "model0 sees the settings screen" in third and "rollout1" not in third
    report = AlignmentReport(rounds=2)
    report.count(history, rewrites)
    assert (report.steps_regenerated, report.steps_rewritten, report.labels_kept) == (3, 2, 1)
    assert (report.candidates, report.candidates_passing, report.duplicates_dropped) == (6, 3, 1)
    assert report.best_candidate_score == pytest.approx(0.95)
    json.dumps(report.to_dict())


def test_the_memory_shows_the_stored_outcomes_not_the_ones_the_prompts_rendered():
    rows = _rows()
    assert "rollout0 clicks network [success]" in _text(rows[2]["prompt"])  # what the rollout's prompt showed
    assert "rollout1 clicks network [failure]" in _text(rows[2]["prompt"])
    rows[0]["verified_outcome"], rows[1]["verified_outcome"] = "failure", "unverified"  # the column disagrees
    history = trajectory_history(rows, [0, 1, 2])
    assert [s.outcome for s in history.steps] == [StepOutcome.FAILURE, StepOutcome.UNVERIFIED, StepOutcome.UNVERIFIED]
    assert history.unknown_outcomes == 0  # an outcome stored as unverified is known
    keep_labels = realign_trajectory(history.steps, lambda prompt, row: [], lambda row, candidates: [],
                                     HashingEmbedder(), HistoryAlignmentConfig())
    third = _text(keep_labels[2].prompt)
    assert "label0 clicks network [failure]" in third and "label1 clicks network [unverified]" in third
    assert "[success]" not in third


def test_missing_steps_and_outcomes_are_counted():
    rows = _rows((0, 2))  # the filter dropped step 1
    history = trajectory_history(rows, [0, 1])
    assert history.gaps == 1 and history.unknown_outcomes == 0  # step 0 carries its own outcome
    alone = trajectory_history(rows[1:], [0])
    assert (alone.gaps, alone.unknown_outcomes) == (0, 0)  # a last step's outcome is never needed
    no_outcome = [dict(rows[0], verified_outcome=None), rows[1]]  # e.g. a finish step's target was never executed
    history = trajectory_history(no_outcome, [0, 1])
    assert history.unknown_outcomes == 1 and history.steps[0].outcome == StepOutcome.UNVERIFIED
    unlabelled = [dict(rows[0], target_planning=None)]
    with pytest.raises(ValueError, match="lacks a reasoning annotation"):
        trajectory_history(unlabelled, [0])
    without_column = [{k: v for k, v in rows[0].items() if k != "verified_outcome"}]
    with pytest.raises(ValueError, match="t#1/0 has no verified_outcome column"):
        trajectory_history(without_column, [0])
    with pytest.raises(ValueError, match="verified_outcome 'maybe' is not one of"):
        trajectory_history([dict(rows[0], verified_outcome="maybe")], [0])


def test_trajectories_are_grouped_held_out_and_chosen_from_the_seed():
    rows = [{"task_id": f"t{i % 4}", "attempt": 1, "has_hint": i % 8 < 4, "step": 9 - i} for i in range(16)]
    trajectories = group_trajectories(rows)
    assert len(trajectories) == 8 and all(len(t) == 2 for t in trajectories)
    assert all(rows[a]["step"] < rows[b]["step"] for a, b in trajectories)
    training, validation = split_validation(trajectories, 0.1, seed=3)
    assert len(validation) == 1 and len(training) == 7 and validation[0] not in training
    assert split_validation(trajectories, 0.1, seed=3) == (training, validation)
    first, again = choose_trajectories(training, 0.5, 3, 0), choose_trajectories(training, 0.5, 3, 0)
    assert first == again and len(first) == 4  # round(0.5 x 7)
    assert any(choose_trajectories(training, 0.5, 3, k) != first for k in range(1, 5))  # each trigger draws anew
    with pytest.raises(ValueError, match="none would be left to train on"):
        split_validation(trajectories[:1], 0.1, seed=0)
    with pytest.raises(ValueError, match="task_id, attempt, has_hint and step"):
        group_trajectories([{"task_id": "t", "attempt": 1, "has_hint": None, "step": 0}])
