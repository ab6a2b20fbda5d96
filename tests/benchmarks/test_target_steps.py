"""benchmarks/target_steps.py: the target's solver episodes as teacher-forced steps, and what the report makes
of a base's answers on them."""

from __future__ import annotations

import json
from functools import lru_cache

import pytest

from benchmarks.checkpoints_cli import loaded_checkpoints
from benchmarks.target_steps import failing_samples, measure, step_report, target_cases
from ops.actions import Action, ActionType
from ops.actions.formats.label_echo import render_target
from training.base.sample_text import answer_text
from training.models.tiny import build_tiny_model

# a two-click task (launcher, then a switch) and a query with a search field: 3 + 6 steps with their stops
TEMPLATES = ["clock.alarm_off", "calendar.query_date"]


@lru_cache(maxsize=1)
def cases():
    return target_cases(TEMPLATES, seeds=1, cache=None)


def _oracle() -> list[str]:
    return [answer_text(c.sample) for c in cases()[0]]


def _said(case, action: Action) -> str:
    return render_target(action, [e.label for e in case.sample.elements])


def test_every_solver_step_then_the_stop_unhinted():
    steps, unsolved = cases()
    assert unsolved == []
    by_episode = {}
    for case in steps:
        by_episode.setdefault(case.template_id, []).append(case)
    assert sorted(by_episode) == sorted(TEMPLATES)
    assert [len(v) for _, v in sorted(by_episode.items())] == [6, 3]  # calendar.query_date, clock.alarm_off
    for episode in by_episode.values():
        assert [c.step for c in episode] == list(range(len(episode)))
        assert [c.position for c in episode] == ["first", *["middle"] * (len(episode) - 2), "stop"]
        assert episode[0].sample.screen == "launcher" and episode[0].sample.target.type == ActionType.CLICK
        assert episode[-1].sample.kind == "world_done"
        assert episode[-1].sample.target == Action(ActionType.TERMINATE, status="success")
        for case in episode:
            assert case.sample.hints == () and len(case.sample.history) == case.step
    kinds = [c.sample.kind for c in by_episode["calendar.query_date"]]
    assert kinds == ["world_click", "world_click", "world_type", "world_click", "world_answer", "world_done"]


def test_the_solver_answers_are_all_right():
    report = step_report(cases()[0], _oracle())
    assert report["steps"] == 9 and report["episodes"] == 2 and report["exact"] == 1.0
    assert report["by_position"] == {"first": {"n": 2, "exact": 1.0}, "middle": {"n": 5, "exact": 1.0},
                                     "stop": {"n": 2, "exact": 1.0}}
    assert set(report["by_app"]) == {"calendar", "clock"}
    assert report["by_app"]["clock"] == {"n": 3, "exact": 1.0, "first": 1.0, "middle": 1.0, "stop": 1.0,
                                         "episodes": 1, "all_steps_right": 1.0}
    assert all(set(counts) == {"right"} for counts in report["outputs"].values())
    assert report["echo_right"] == 1.0 and report["echo_no_row"] == 0.0
    assert report["episodes_all_steps_right"] == 1.0 and report["independent_steps_estimate"] == 1.0


def test_wrong_answers_are_sorted_by_what_was_output_instead():
    steps = cases()[0]
    answers = _oracle()
    typed = next(i for i, c in enumerate(steps) if c.sample.kind == "world_type")
    for i, case in enumerate(steps):
        if case.position == "stop":  # a click on the first row instead of stopping
            answers[i] = _said(case, Action(ActionType.CLICK, element=0))
    target = steps[typed].sample.target
    answers[typed] = _said(steps[typed], Action(ActionType.TYPE, element=target.element, text=target.text + "x"))
    answer_step = next(i for i, c in enumerate(steps) if c.sample.kind == "world_answer")
    answers[answer_step] = "not an action"
    report = step_report(steps, answers)
    assert report["outputs"]["world_done"] == {"click": 2}
    assert report["outputs"]["world_type"] == {"type:right_field_wrong_text": 1}
    assert report["outputs"]["world_answer"] == {"unparsed": 1}
    assert report["by_position"]["stop"] == {"n": 2, "exact": 0.0}
    assert report["exact"] == round(5 / 9, 3)
    assert report["episodes_all_steps_right"] == 0.0 and report["independent_steps_estimate"] == 0.0
    failing = failing_samples(steps, answers)
    assert sorted((row["template"], row["step"], row["outcome"]) for row in failing) == [
        ("calendar.query_date", 2, "type:right_field_wrong_text"), ("calendar.query_date", 4, "unparsed"),
        ("calendar.query_date", 5, "click"), ("clock.alarm_off", 2, "click")]
    assert [row["kind"] for row in failing_samples(steps, answers, limit=3)] == ["world_answer", "world_done",
                                                                                "world_type"]
    assert all(row["target"] != row["answer"] and row["prompt_tail"] for row in failing)
    json.dumps(failing)  # written as JSONL


def test_a_base_is_scored_on_every_step(tmp_path):
    with pytest.raises(ValueError, match="answers for 9 steps"):
        step_report(cases()[0], [])
    steps = cases()[0]
    (_, model, encoder), = loaded_checkpoints([str(build_tiny_model(tmp_path / "tiny"))])
    report, answers = measure(model, encoder, steps)
    assert len(answers) == len(steps) == report["steps"] == 9
    assert sum(s["n"] for s in report["per_skill"].values()) == 9
    assert {k: s["n"] for k, s in report["per_skill"].items()} == {
        "world_answer": 1, "world_click": 5, "world_done": 2, "world_type": 1}
    assert report["clicks"] == 5 and 0 < report["chance"] < 1
    # the report's exact match is the pretraining scorer's, skill by skill
    assert report["exact"] == pytest.approx(sum(s["n"] * s["exact"] for s in report["per_skill"].values()) / 9,
                                            abs=2e-3)
    assert sum(sum(c.values()) for c in report["outputs"].values()) == 9
    assert report["echo_right"] + report["echo_other_row"] + report["echo_no_row"] == pytest.approx(1.0, abs=2e-3)
