"""Benchmark metrics: Pass@k aggregation and the first-app-right diagnostic."""

from __future__ import annotations

import json

import polars as pl

from ops.actions import Action, ActionType
import pytest

from ops.evaluation.benchmark import (MINED_SEEDS, answers_seen, first_app_right, first_apps, instances_per_template, pass_at_k,
                           pass_at_k_by_split, sign_test_p, template_tasks, unseen_train_tasks, versus_baseline,
                           wilson_interval)
from phonesim.tasks import instantiate


def _icon(task, label: str) -> int:
    obs = instantiate(task.template_id, task.seed).make_phone().observe()
    return next(e["index"] for e in obs.elements if e.get("text") == label)


def test_first_app_right_replays_each_first_action_against_the_solvers_first_app():
    [(task, _)] = [t for t in template_tasks("test", 1) if t[0].template_id == "settings.toggle_dark_theme"]
    rows = [
        (1, Action(ActionType.CLICK, element=_icon(task, "Settings"))),  # the right icon
        (2, Action(ActionType.OPEN_APP, app="Settings")),                # the same app by name
        (3, Action(ActionType.CLICK, element=_icon(task, "Clock"))),     # another app
        (4, None),                                                       # unparseable output
    ]
    steps = pl.DataFrame([{"task_id": task.task_id, "attempt": a, "step": 0,
                           "action": json.dumps(act.to_dict()) if act else None} for a, act in rows]
                         + [{"task_id": task.task_id, "attempt": 1, "step": 1, "action": None}])
    assert first_app_right(first_apps([task]), steps) == {(task.task_id, 1): True, (task.task_id, 2): True,
                                              (task.task_id, 3): False, (task.task_id, 4): False}


def test_pass_at_k_counts_a_task_once_and_reports_the_first_app_rate():
    results = pl.DataFrame({
        "policy_id": ["p"] * 4, "difficulty": ["L1", "L1", "L2", "L2"], "task_id": ["a", "a", "b", "b"],
        "attempt": [1, 2, 1, 2], "success": [False, True, False, False], "progress": [0.0, 1.0, 0.5, 0.0],
        "false_complete": [True, False, False, False], "side_effects": [0, 0, 2, 0],
        "overdue": [False] * 4, "steps": [3, 5, 4, 2], "first_app_right": [True, True, False, True]})
    overall = pass_at_k(results, 2).filter(pl.col("difficulty") == "all").row(0, named=True)
    assert overall["tasks"] == 2 and overall["pass@1"] == 0.0 and overall["pass@2"] == 0.5
    assert overall["first_app_right"] == 0.75 and overall["side_effects"] == 0.25


def test_template_tasks_start_at_the_first_seed():
    tasks = [t for t, _ in template_tasks("train", 2, max_templates=3, first_seed=500)]
    assert len(tasks) == 6
    assert {t.seed for t in tasks} == {500, 501}
    assert all(t.task_id == f"{t.template_id}#{t.seed}" for t in tasks)


def test_template_tasks_skip_seeds_that_repeat_an_instance():
    """A template with few parameter values (which of the phone's alarms to switch off) draws the same
    instance at several seeds; each distinct instance is one task, and the count says it is short."""
    tasks = [t for t, _ in template_tasks("train", 10, first_seed=500) if t.template_id == "clock.alarm_off"]
    keys = [instantiate(t.template_id, t.seed).key for t in tasks]
    assert len(set(keys)) == len(keys) < 10
    assert instances_per_template(tasks) == {"clock.alarm_off": len(tasks)}
    assert instantiate("clock.alarm_off", 0).key != instantiate("clock.alarm_on", 0).key


def test_unseen_train_tasks_skip_instances_whose_parameters_the_curriculum_can_mine():
    tasks = [t for t, _ in unseen_train_tasks(3, 500, max_templates=20)]
    assert tasks and all(t.seed >= 500 for t in tasks)
    for t in tasks:
        mined = [instantiate(t.template_id, s).params for s in range(MINED_SEEDS)]
        assert instantiate(t.template_id, t.seed).params not in mined, t.task_id
    # a template with few parameter values (which of the phone's alarms) has none; one with many keeps all three
    assert "clock.alarm_off" not in {t.template_id for t in tasks}
    assert sum(t.template_id == "calendar.create" for t in tasks) == 3
    with pytest.raises(ValueError, match="among the seeds the curriculum mines"):
        unseen_train_tasks(1, MINED_SEEDS - 1)


def test_benchmark_config_refuses_train_split_seeds_the_curriculum_mines():
    from assets.benchmark import BenchmarkConfig

    assert BenchmarkConfig(split="train", first_seed=500).first_seed == 500
    with pytest.raises(ValueError, match="would evaluate instances the curriculum mines"):
        BenchmarkConfig(split="train")


def test_benchmark_config_evaluates_a_named_subset_of_policies_always_with_the_base():
    from assets.benchmark import BenchmarkConfig

    assert BenchmarkConfig(policies=["base", "rft"]).policies == ["base", "rft"]
    with pytest.raises(ValueError, match="include 'base'"):
        BenchmarkConfig(policies=["rft"])
    with pytest.raises(ValueError, match="rtf not among base, hifpo"):
        BenchmarkConfig(policies=["base", "rtf"])


def _episodes(policy: str, passes: dict[str, list[bool]]) -> list[dict]:
    return [{"policy_id": policy, "task_id": task, "attempt": a + 1, "success": ok}
            for task, attempts in passes.items() for a, ok in enumerate(attempts)]


def test_versus_baseline_pairs_tasks_and_counts_only_the_discordant_ones():
    base = {"a": [False, False], "b": [False, True], "c": [False, False], "d": [True, False]}
    tuned = {"a": [True, False], "b": [False, False], "c": [False, True], "d": [True, True]}
    results = pl.DataFrame(_episodes("base", base) + _episodes("tuned", tuned))
    at_2 = {r["policy_id"]: r for r in versus_baseline(results, 2).iter_rows(named=True)}
    assert at_2["tuned"]["passed"] == 3 and at_2["tuned"]["gained"] == 2 and at_2["tuned"]["lost"] == 1
    assert at_2["tuned"]["p_value"] == 1.0  # 2 against 1 is no evidence
    assert at_2["base"]["gained"] == at_2["base"]["lost"] == 0
    at_1 = {r["policy_id"]: r for r in versus_baseline(results, 1).iter_rows(named=True)}
    assert (at_1["tuned"]["passed"], at_1["tuned"]["gained"], at_1["tuned"]["lost"]) == (2, 1, 0)  # b passes only at 2


def test_versus_baseline_refuses_unpaired_runs():
    results = pl.DataFrame(_episodes("base", {"a": [True]}) + _episodes("tuned", {"b": [True]}))
    with pytest.raises(ValueError, match="ran different tasks"):
        versus_baseline(results, 1)
    with pytest.raises(ValueError, match="no episodes of baseline policy 'ref'"):
        versus_baseline(results, 1, baseline="ref")


def test_sign_test_is_the_exact_two_sided_binomial_test():
    assert sign_test_p(0, 0) == 1.0
    assert sign_test_p(3, 0) == 0.25  # 2 * 0.5**3
    assert sign_test_p(8, 0) == sign_test_p(0, 8) == 2 * 0.5 ** 8
    assert sign_test_p(10, 2) == pytest.approx(2 * (1 + 12 + 66) / 2 ** 12)
    assert sign_test_p(5, 5) == 1.0


def test_wilson_interval_is_bounded_and_covers_the_estimate():
    low, high = wilson_interval(0, 195)
    assert low == 0.0 and high == pytest.approx(1.96 ** 2 / (195 + 1.96 ** 2))  # closed form at zero successes
    low, high = wilson_interval(3, 195)
    assert low < 3 / 195 < high < 0.05
    assert wilson_interval(10, 10)[1] == 1.0 and wilson_interval(0, 0) == (0.0, 1.0)


@pytest.mark.parametrize("n", [6, 11, 21, 22, 770])
def test_the_wilson_interval_holds_the_estimate_exactly_at_zero_and_all(n):
    """At 0 or n successes rounding put a bound a hair past the estimate (0 of 11: low 2.8e-17),
    a negative error bar that made the benchmark's chart, and so the asset, fail."""
    assert wilson_interval(0, n)[0] == 0.0 and wilson_interval(n, n)[1] == 1.0


def _elements(*texts: str) -> str:
    return json.dumps([{"text": t, "desc": ""} for t in texts])


def test_an_answer_success_counts_as_grounded_only_if_its_evidence_was_on_screen():
    """A count question answered right without the count ever shown (a memorized "5") is a pass
    but not a grounded one; an operate task is grounded by its judge alone."""
    question = instantiate("todo.query_open_count", 0)
    [evidence, *_] = question.evidence()
    operate = instantiate("settings.toggle_dark_theme", 0)
    expected = {question.id: (question, "todo"), operate.id: (operate, "settings")}
    steps = pl.DataFrame({
        "task_id": [question.id, question.id, question.id, operate.id],
        "attempt": [1, 1, 2, 1], "step": [0, 1, 0, 0],
        "elements": [_elements("Home"), _elements("Battery 92%"), _elements("Home", evidence), _elements("Display")]})
    assert answers_seen(expected, steps) == {(question.id, 1): False, (question.id, 2): True}
    results = pl.DataFrame({
        "policy_id": ["p"] * 3, "difficulty": ["L1"] * 3, "task_id": [question.id, question.id, operate.id],
        "attempt": [1, 2, 1], "success": [True, False, True], "answer_seen": [False, True, None],
        "progress": [1.0, 0.0, 1.0], "false_complete": [False] * 3, "side_effects": [0] * 3,
        "overdue": [False] * 3, "steps": [3] * 3})
    [row] = pass_at_k(results, 2).filter(pl.col("difficulty") == "all").to_dicts()
    assert (row["pass@1"], row["pass@2"], row["grounded@2"]) == (1.0, 1.0, 0.5)
    assert "grounded@2" not in pass_at_k(results.drop("answer_seen"), 2).columns
    [by_split] = pass_at_k_by_split(results.with_columns(template_id=pl.col("task_id").str.split("#").list.first()),
                                    2).to_dicts()  # both templates are in the test split
    assert (by_split["split"], by_split["pass@2"], by_split["grounded@2"]) == ("test", 1.0, 0.5)
