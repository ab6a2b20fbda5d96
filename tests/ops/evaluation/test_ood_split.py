"""The out-of-domain split: every cross-app template plus new hand-offs, never mined, benchmarked
beside the test split."""

import polars as pl
import pytest

from ops.evaluation.benchmark import held_out_tasks, pass_at_k_by_split
from ops.curriculum.sim_mining import SimCurriculumConfig, mine_simulator_tasks
from phonesim.metrics import run_actions
from phonesim.solver import solve
from phonesim.tasks import all_templates, instantiate, templates

NEW_OOD = ("notes.multi_contact_email", "notes.multi_event_location", "notes.multi_recipe_servings",
           "notes.multi_sms_code", "notes.multi_sms_place", "sms.multi_contact_email", "sms.multi_event_location",
           "sms.multi_expense_total", "sms.multi_note_fact", "sms.multi_recipe_servings")


def test_every_cross_app_template_is_ood_and_none_is_mined():
    ood = {t.id for t in templates(split="ood")}
    assert {"notes.multi_recipe_ingredients", "sms.multi_share_number"} <= ood  # they sat in train
    assert {t.id for t in all_templates().values() if len(t.apps) > 1} <= ood
    assert set(NEW_OOD) <= ood and len(ood) >= 12 + 10
    assert not ood & {t.id for t in templates(split="train")}


def test_the_curriculum_refuses_an_ood_template():
    with pytest.raises(ValueError, match="held out"):
        mine_simulator_tasks([], SimCurriculumConfig(), template_ids=["sms.multi_share_number"])


@pytest.mark.parametrize("template_id", NEW_OOD)
def test_new_ood_templates_are_solvable_without_side_effects(template_id):
    instance = instantiate(template_id, 3)
    metrics = run_actions(instance, solve(instance.make_phone(), instance))
    assert metrics.success and not metrics.side_effects
    assert run_actions(instance, []).success is False  # the goal does not hold at the start


def test_held_out_tasks_cover_test_and_ood_side_by_side():
    tasks = held_out_tasks(1, max_templates=2)
    splits = [all_templates()[t.template_id].split for t, _ in tasks]
    assert splits == ["test", "test", "ood", "ood"]
    results = pl.DataFrame({
        "policy_id": ["base"] * 4, "task_id": [t.task_id for t, _ in tasks],
        "template_id": [t.template_id for t, _ in tasks], "difficulty": [d for _, d in tasks],
        "attempt": [1] * 4, "success": [True, False, False, False], "progress": [1.0, 0, 0, 0],
        "false_complete": [False] * 4, "side_effects": [0] * 4, "overdue": [False] * 4, "steps": [3] * 4})
    table = pass_at_k_by_split(results, 1)
    assert table.select("split", "tasks", "pass@1").rows() == [("ood", 2, 0.0), ("test", 2, 0.5)]
