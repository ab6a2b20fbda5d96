"""benchmarks/target_steps.py: the target's solver episodes as teacher-forced steps, and what the report makes
of a base's answers on them."""

from __future__ import annotations

import json
from functools import lru_cache

import pytest

from benchmarks.checkpoints_cli import loaded_checkpoints
from benchmarks.target_steps import (HELD_OUT_PRETRAIN, failing_samples, measure, split_template_ids, step_report,
                                     target_cases)
from ops.actions import Action, ActionType
from ops.actions.formats.label_echo import parse_output, render_target, split_echo
from phonesim.pretrain import HELD_OUT_APPS
from phonesim.tasks import all_templates
from training.base.bundled import BUNDLED_DIR
from training.base.sample_text import answer_text, sample_rows
from training.inference.typing_constraint import typable_texts
from training.models.tiny import build_tiny_model

# a two-click task (launcher, then a switch), a query with a search field, and a slider (a click at a point, on no
# row): 3 + 6 + 4 steps with their stops
TEMPLATES = ["clock.alarm_off", "calendar.query_date", "settings.set_brightness"]


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
    assert [len(v) for _, v in sorted(by_episode.items())] == [6, 3, 4]  # calendar, clock, settings
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
    assert report["steps"] == 13 and report["episodes"] == 3 and report["exact"] == 1.0
    assert report["by_position"] == {"first": {"n": 3, "exact": 1.0}, "middle": {"n": 7, "exact": 1.0},
                                     "stop": {"n": 3, "exact": 1.0}}
    assert set(report["by_app"]) == {"calendar", "clock", "settings"}
    assert report["by_app"]["clock"] == {"n": 3, "exact": 1.0, "first": 1.0, "middle": 1.0, "stop": 1.0,
                                         "episodes": 1, "all_steps_right": 1.0}
    assert all(set(counts) == {"right"} for counts in report["outputs"].values())
    assert report["echo_right"] == 1.0 and report["echo_no_row"] == 0.0 and report["point_clicks"] == 1
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
    slider = next(i for i, c in enumerate(steps) if c.sample.kind == "world_click" and c.sample.target.element is None)
    x, y = steps[slider].sample.target.point
    answers[slider] = _said(steps[slider], Action(ActionType.CLICK, point=(x + 100, y)))
    report = step_report(steps, answers)
    assert report["outputs"]["world_done"] == {"click": 3}
    assert report["outputs"]["world_click"] == {"right": 7, "click:wrong_point": 1}
    assert report["outputs"]["world_type"] == {"type:right_field_wrong_text": 1}
    assert report["outputs"]["world_answer"] == {"unparsed": 1}
    assert report["by_position"]["stop"] == {"n": 3, "exact": 0.0}
    assert report["exact"] == round(7 / 13, 3)
    assert report["echo_right"] == 1.0  # the slider's click has no row to echo
    assert report["episodes_all_steps_right"] == 0.0 and report["independent_steps_estimate"] == 0.0
    failing = failing_samples(steps, answers)
    assert sorted((row["template"], row["step"], row["outcome"]) for row in failing) == [
        ("calendar.query_date", 2, "type:right_field_wrong_text"), ("calendar.query_date", 4, "unparsed"),
        ("calendar.query_date", 5, "click"), ("clock.alarm_off", 2, "click"),
        ("settings.set_brightness", 2, "click:wrong_point"), ("settings.set_brightness", 3, "click")]
    assert [row["kind"] for row in failing_samples(steps, answers, limit=3)] == ["world_answer", "world_click",
                                                                                "world_done"]
    assert all(row["target"] != row["answer"] and row["prompt_tail"] for row in failing)
    json.dumps(failing)  # written as JSONL


def test_a_base_is_scored_on_every_step(tmp_path):
    with pytest.raises(ValueError, match="answers for 13 steps"):
        step_report(cases()[0], [])
    steps = cases()[0]
    (_, model, encoder), = loaded_checkpoints([str(build_tiny_model(tmp_path / "tiny"))])
    report, answers = measure(model, encoder, steps)
    assert len(answers) == len(steps) == report["steps"] == 13
    assert {k: s["n"] for k, s in report["per_skill"].items()} == {
        "world_answer": 1, "world_click": 8, "world_done": 3, "world_type": 1}
    assert report["clicks"] == 8 and report["point_clicks"] == 1 and 0 < report["chance"] < 1
    # the report's exact match is the pretraining scorer's, skill by skill
    assert report["exact"] == pytest.approx(sum(s["n"] * s["exact"] for s in report["per_skill"].values()) / 13,
                                            abs=2e-3)
    assert sum(sum(c.values()) for c in report["outputs"].values()) == 13
    assert report["echo_right"] + report["echo_other_row"] + report["echo_no_row"] == pytest.approx(1.0, abs=2e-3)


def test_the_splits_are_the_targets_or_the_held_out_pretraining_apps():
    assert set(split_template_ids("train")) == {t.id for t in all_templates().values() if t.split == "train"}
    assert set(TEMPLATES) <= set(split_template_ids("train"))
    held_out = split_template_ids(HELD_OUT_PRETRAIN)
    assert held_out and not set(held_out) & set(all_templates())
    assert {tid.split(".")[0] for tid in held_out} >= set(HELD_OUT_APPS)


def test_constrained_answers_echo_only_the_screens_rows_and_type_only_the_instructions_text():
    """`--constrained` decodes as an unaided rollout does: the bundled base, which echoes rows of no screen when
    free, echoes only rows the step's screen shows and types only a string of the instruction."""
    steps = cases()[0]
    (_, model, encoder), = loaded_checkpoints([str(BUNDLED_DIR)])
    free, _ = measure(model, encoder, steps)
    report, answers = measure(model, encoder, steps, constrained=True)
    echoes = [(case, split_echo(answer)[0]) for case, answer in zip(steps, answers)]
    echoes = [(case, echo.strip()) for case, echo in echoes if echo]
    assert len(echoes) >= 5 and free["echo_no_row"] > 0
    for case, echo in echoes:
        assert echo in sample_rows(case.sample), echo
    assert report["echo_no_row"] < free["echo_no_row"]  # what is left of it: clicks answered without an echo
    for case, answer in zip(steps, answers):
        action = parse_output(answer, [e.label for e in case.sample.elements])
        if isinstance(action, Action) and action.type == ActionType.TYPE:
            assert action.text in typable_texts(case.sample.instruction, ())["type"]
