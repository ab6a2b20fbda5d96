"""Every template: the BFS solution succeeds cleanly, wrong or partial sequences fail."""

from __future__ import annotations

import pytest

from phonesim import Episode, all_templates, distance_to_goal, instantiate, run_actions, solve, templates
from phonesim.actions import Action
from tests.phonesim.conftest import solved

TEMPLATE_IDS = sorted(all_templates())


def test_registry_has_two_apps_with_a_dozen_templates_each_and_disjoint_splits():
    assert len(templates(app="settings")) >= 12
    assert len(templates(app="contacts")) >= 12
    assert any(len(t.apps) > 1 for t in all_templates().values())
    train = {t.id for t in templates(split="train")}
    test = {t.id for t in templates(split="test")}
    assert train and test and not train & test
    assert {t.objective for t in all_templates().values()} == {"operate", "query", "hybrid"}


@pytest.mark.parametrize("template_id", TEMPLATE_IDS)
def test_solution_reaches_clean_success(template_id):
    task, path = solved(template_id)
    assert 0 < len(path) <= task.step_budget
    m = run_actions(task, list(path))
    assert m.success and not m.side_effects and not m.false_complete, m
    assert m.shaped_reward == pytest.approx(1.0)
    assert m.invalid_steps == 0


@pytest.mark.parametrize("template_id", TEMPLATE_IDS)
def test_truncated_solution_fails_and_is_a_false_complete(template_id):
    task, path = solved(template_id)
    m = run_actions(task, list(path[:-1]))
    assert not m.success
    assert m.false_complete
    assert m.progress < 1.0


@pytest.mark.parametrize("template_id", TEMPLATE_IDS)
def test_instantiation_is_deterministic(template_id):
    a, b = instantiate(template_id, 7), instantiate(template_id, 7)
    assert (a.instruction, a.params, a.initial) == (b.instruction, b.params, b.initial)
    assert a.step_budget > 0 and 1 <= a.difficulty <= 4 and a.split in ("train", "test", "ood")


def test_parameters_vary_with_the_seed():
    seen = {str(instantiate("contacts.edit_phone", s).params) for s in range(6)}
    assert len(seen) > 3


@pytest.mark.parametrize("template_id", ["contacts.edit_phone", "settings.connect_wifi", "contacts.query_group_count"])
def test_distance_to_goal_drops_by_one_along_the_solution(template_id):
    task, path = solved(template_id)
    ep = Episode(task)
    distances = [distance_to_goal(ep.phone, task)]
    for a in path:
        ep.step(a)
        distances.append(distance_to_goal(ep.phone, task))
    assert distances == list(range(len(path), -1, -1))


def test_a_wasted_step_does_not_reduce_distance():
    task, path = solved("settings.toggle_dark_theme")
    ep = Episode(task)
    before = distance_to_goal(ep.phone, task)
    ep.step(Action("open_app", app="Contacts"))
    assert distance_to_goal(ep.phone, task) >= before


def test_solve_returns_a_working_plan_from_a_midway_state():
    task, path = solved("contacts.create")
    ep = Episode(task)
    for a in path[:2]:
        ep.step(a)
    rest = solve(ep.phone, task)
    assert len(rest) == len(path) - 2
    for a in rest:
        ep.step(a)
    assert task.judge(ep.phone).success
