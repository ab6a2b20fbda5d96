import json

import polars as pl

from ops.actions.formats import label_echo
from ops.actions.formats.label_echo import HINT_MARK
from ops.attempt_store import collect_tables
from ops.filtering import FilterConfig
from ops.schemas import validate
from ops.step_samples import build_step_samples, target_box
from tests.rollout.test_rollout import _run, sim_tasks


def test_step_samples_keep_reasonable_steps_of_best_attempt_with_rollout_prompts(tmp_path):
    store, _ = _run(tmp_path, attempts=3)
    attempts, steps, feedback = collect_tables(store, "random", [t.task_id for t in sim_tasks()])
    samples, report = build_step_samples(attempts, steps, feedback)
    assert validate(samples, "training_samples") == []
    assert report.kept_tasks + sum(report.dropped.values()) == len(sim_tasks())
    labels = {(r["task_id"], r["attempt"]): json.loads(r["step_analysis"]) for r in feedback.iter_rows(named=True)}
    prompts = {(r["task_id"], r["attempt"], r["step"]): r["prompt"] for r in steps.iter_rows(named=True)}
    for r in samples.iter_rows(named=True):
        assert labels[(r["task_id"], r["attempt"])][r["step"]]["reasonable"]
        assert r["prompt"] == prompts[(r["task_id"], r["attempt"], r["step"])]  # exactly as at rollout time
        assert r["has_hint"] == (r["attempt"] > 1)
    every = build_step_samples(attempts, steps, feedback, FilterConfig(reasonable_only=False, best_attempt=False))[0]
    assert every.height >= samples.height


def test_hint_free_copies_pair_each_hinted_step_with_its_unhinted_prompt(tmp_path):
    store, _ = _run(tmp_path, attempts=3)
    attempts, steps, feedback = collect_tables(store, "random", [t.task_id for t in sim_tasks()])
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
