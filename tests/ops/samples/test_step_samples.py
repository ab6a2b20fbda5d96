import json

import polars as pl
import pytest

from ops.actions.formats import label_echo
from ops.actions.formats.label_echo import HINT_MARK
from ops.data.attempt_store import collect_tables
from ops.samples.filtering import FilterConfig
from ops.data.schemas import validate
from ops.samples.step_samples import build_step_samples, finish_response, target_box
from tests.ops.rollout.test_rollout import _run, sim_tasks


def test_step_samples_keep_reasonable_steps_of_best_attempt_with_rollout_prompts(tmp_path):
    store, _ = _run(tmp_path, attempts=3)
    attempts, steps, feedback = collect_tables(store, "random", sim_tasks())
    samples, report = build_step_samples(attempts, steps, feedback)
    assert validate(samples, "training_samples") == []
    assert report.kept_tasks + sum(report.dropped.values()) == len(sim_tasks())
    labels = {(r["task_id"], r["attempt"]): json.loads(r["step_analysis"]) for r in feedback.iter_rows(named=True)}
    stored = {(r["task_id"], r["attempt"], r["step"]): r for r in steps.iter_rows(named=True)}
    for r in samples.iter_rows(named=True):
        assert labels[(r["task_id"], r["attempt"])][r["step"]]["reasonable"]
        step = stored[(r["task_id"], r["attempt"], r["step"])]
        assert r["prompt"] == step["prompt"]  # exactly as at rollout time
        assert r["verified_outcome"] == step["verified_outcome"]
        assert r["has_hint"] == (r["attempt"] > 1)
    every = build_step_samples(attempts, steps, feedback, FilterConfig(reasonable_only=False, best_attempt=False))[0]
    assert every.height >= samples.height


def test_hint_free_copies_pair_each_hinted_step_with_its_unhinted_prompt(tmp_path):
    store, _ = _run(tmp_path, attempts=3)
    attempts, steps, feedback = collect_tables(store, "random", sim_tasks())
    config = FilterConfig(reasonable_only=False, best_attempt=False)
    plain = build_step_samples(attempts, steps, feedback, config)[0]
    twinned, report = build_step_samples(attempts, steps, feedback, config, hint_free_copies=True)
    assert validate(twinned, "training_samples") == []
    hinted = plain.filter(pl.col("has_hint"))
    assert hinted.height > 0 and report.hint_free_copies == hinted.height
    assert twinned.height == plain.height + hinted.height
    copies = twinned.join(hinted.select("task_id", "attempt", "step", hinted_prompt="prompt"),
                          on=["task_id", "attempt", "step"]).filter(~pl.col("has_hint"))
    assert copies.height == hinted.height
    marked = 0
    for r in copies.iter_rows(named=True):
        assert "Hints:" not in r["prompt"] and "Hints:" in r["hinted_prompt"]
        text, hinted_text = (json.loads(r[c])[0]["content"][-1]["text"] for c in ("prompt", "hinted_prompt"))
        # the copy is the hinted prompt minus its hint lines and row marks, nothing else
        assert HINT_MARK not in text and label_echo.strip_hint_marks(hinted_text).endswith("\n" + text)
        assert text.split("\n")[-1].startswith(label_echo.TASK_PREFIX)
        marked += HINT_MARK in hinted_text
    assert marked  # some hints named a row on the screen their attempt was on


def test_target_box_by_index_and_by_point():
    elements = [{"grid": [0, 0, 1000, 1000]}, {"grid": [100, 100, 200, 200]}]
    assert target_box({"type": "click", "args": {"element": 1}}, elements) == [100, 100, 200, 200]
    assert target_box({"type": "click", "args": {"point": [150, 150]}}, elements) == [100, 100, 200, 200]
    assert target_box({"type": "click", "args": {"point": [500, 500]}}, elements) == [0, 0, 1000, 1000]
    assert target_box({"type": "system_button", "args": {"button": "back"}}, elements) is None


def test_a_success_that_kept_acting_after_its_goal_trains_finish_at_that_step():
    from tests.training.samples import ELEMENT_BOXES, click_json, png, prompt_json

    elements = json.dumps([{"index": i, "grid": box} for i, box in enumerate(ELEMENT_BOXES)])
    outcomes = ["success", "failure", "success", None]
    steps = pl.DataFrame([{"task_id": "t", "attempt": 1, "step": s, "prompt": prompt_json(f"step {s}"),
                           "screenshot_png": png((s * 40, 0, 0)), "elements": elements, "raw_output": f"out {s}",
                           "action": click_json(s % 2), "verified_outcome": outcomes[s]} for s in range(4)])
    attempts = pl.DataFrame({"task_id": ["t", "t"], "attempt": [1, 2], "hints_used": [[], [1]]},
                            schema_overrides={"hints_used": pl.List(pl.Int64)})
    labels = [{"step": s, "reasonable": ok, "rationale": "", "goal_held": s >= 2}
              for s, ok in enumerate([True, True, False, True])]  # goal reached by step 1, then undone and redone
    failed = [{"step": 0, "reasonable": False, "rationale": ""}]  # a critic that cannot tell leaves goal_held out
    feedback = pl.DataFrame({"task_id": ["t", "t"], "attempt": [1, 2], "decision": [1, 0],
                             "step_analysis": [json.dumps(labels), json.dumps(failed)]})
    finish = finish_response("elements")
    at_goal = FilterConfig(finish_at_goal=True)
    samples, report = build_step_samples(attempts, steps, feedback, at_goal, finish_response=finish)
    assert validate(samples, "training_samples") == []
    assert samples["step"].to_list() == [0, 1, 2] and report.finish_samples == 1
    assert samples["target_response"].to_list() == ["out 0", "out 1", finish]
    # each executed step keeps the rollout's verified outcome; the finish target was never executed
    assert samples["verified_outcome"].to_list() == ["success", "failure", None]
    assert report.samples_by_type == {"click": 2, "terminate": 1}
    kept_acting = build_step_samples(attempts, steps, feedback)[0]
    assert kept_acting["step"].to_list() == [0, 1, 3]  # the redo after the goal counts as reasonable
    assert kept_acting["verified_outcome"].to_list() == ["success", "failure", None]  # step 3 ended the attempt
    with pytest.raises(ValueError, match="1 finish steps need finish_response"):
        build_step_samples(attempts, steps, feedback, at_goal)
