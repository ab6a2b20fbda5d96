"""Offline simulator curriculum on real exploration trajectories: grounding, held-out split,
satisfiable judges, navigation variants, rows that fit the table."""

from __future__ import annotations

import dataclasses

import polars as pl
import pytest

from ops.actions import Action, ActionType
from ops.curriculum import CurriculumTask, SimCurriculumConfig, mine_simulator_tasks, screens_reached, trajectory_id
from ops.data.schemas import CURRICULUM_TASKS, validate
from ops.environments.simulator import SimEnvironment
from phonesim.apps import load_apps
from phonesim.solver import solve
from phonesim.tasks import all_templates, instantiate, templates
from tests.ops.curriculum.traces import SCREEN


def _visited(paths) -> dict[str, set[tuple[str, str]]]:
    """Trajectory id -> (app, screen) pairs its transitions pass through."""
    return {trajectory_id(p): {(t.before.app, t.before.screen) for t in p} | {(t.after.app, t.after.screen) for t in p}
            for p in paths}


def _solution_screens(task: CurriculumTask, actions) -> list[tuple[str, str]]:
    instance = instantiate(task.template_id, task.template_seed)
    phone = instance.make_phone()
    seen = [(phone.current_app, phone.current_screen)]
    for action in actions:
        phone.step(action)
        seen.append((phone.current_app, phone.current_screen))
    return [s for s in seen if s[0] in instance.template.apps]


def test_template_tasks_are_train_split_and_grounded_in_a_trajectory_that_reaches_their_screens(
        settings_paths, settings_curriculum):
    visited = _visited(settings_paths)
    template_tasks = [t for t in settings_curriculum.tasks if t.template_id]
    assert len({t.template_id for t in template_tasks}) >= 8
    for task in template_tasks:
        assert all_templates()[task.template_id].split == "train"
        assert task.verifiable and task.goal_screen is None and task.variation_type == "parameter_change"
        assert task.source_trace_id in visited
        screens = _solution_screens(task, settings_curriculum.solutions[task.task_id])
        # the deepest screen the solution enters (or, if it never enters the app, the app's
        # first screen) was reached by the source trajectory
        deepest = max(set(screens), key=screens.index) if screens else ("settings", "main")
        assert deepest in visited[task.source_trace_id]
        assert task.core_functionality.startswith("settings: ")


def test_test_split_templates_are_never_emitted_even_when_their_screens_were_explored(
        settings_paths, settings_curriculum):
    held_out = {t.id for t in templates(split="test", app="settings")}
    reached = {screen for _, screen in screens_reached(settings_paths)}
    assert {"display", "location", "about"} <= reached  # where dark theme, location, version live
    assert held_out and not held_out & {t.template_id for t in settings_curriculum.tasks}
    assert not held_out & set(settings_curriculum.grounded)


def test_naming_a_test_split_or_unknown_template_is_an_error(settings_paths):
    with pytest.raises(ValueError, match="settings.toggle_dark_theme"):
        mine_simulator_tasks(settings_paths, template_ids=["settings.toggle_wifi", "settings.toggle_dark_theme"])
    with pytest.raises(ValueError, match="settings.no_such"):
        mine_simulator_tasks(settings_paths, template_ids=["settings.no_such"])


def test_every_template_task_is_satisfiable_in_the_rollout_environment(settings_curriculum, contacts_curriculum):
    """Fresh BFS `solve` of the instance the record names, replayed through the simulator
    environment built from the record's TaskSpec, ends in clean judge success."""
    tasks = [t for r in (settings_curriculum, contacts_curriculum) for t in r.tasks if t.template_id]
    assert {t.app for t in tasks} == {"settings", "contacts"}
    for task in tasks:
        instance = instantiate(task.template_id, task.template_seed)
        assert instance.params == task.template_params and instance.instruction == task.instruction
        solution = solve(instance.make_phone(), instance)
        env = SimEnvironment(size=SCREEN)
        spec = task.to_task_spec()
        env.reset(spec)
        for action in solution:
            assert env.step(action).ok
        truth = env.ground_truth(spec, answer=None, terminated=True, n_steps=len(solution))
        assert truth.success and truth.side_effects == 0, task.task_id
        assert len(solution) <= task.step_budget


def test_parameter_variants_are_distinct_and_bounded(settings_curriculum):
    by_template: dict[str, list[CurriculumTask]] = {}
    for t in settings_curriculum.tasks:
        if t.template_id:
            by_template.setdefault(t.template_id, []).append(t)
    for tid, variants in by_template.items():
        assert 1 <= len(variants) <= 3
        params = [repr(sorted(v.template_params.items())) for v in variants]
        assert len(set(params)) == len(params), tid
    assert len(by_template["settings.set_brightness"]) == 3  # parameterised: three distinct values
    assert len(by_template["settings.airplane_on"]) == 1  # no parameters: one task
    assert len({t.instruction for t in by_template["settings.set_brightness"]}) == 3


def test_template_whose_deepest_screen_was_not_explored_is_reported_not_emitted(settings_paths):
    visited = _visited(settings_paths)
    without_wifi = [p for p in settings_paths if ("settings", "wifi") not in visited[trajectory_id(p)]]
    assert without_wifi and len(without_wifi) < len(settings_paths)
    result = mine_simulator_tasks(without_wifi, template_ids=["settings.toggle_wifi", "settings.toggle_bluetooth"])
    assert result.ungrounded == {"settings.toggle_wifi": [("settings", "wifi")]}
    assert {t.template_id for t in result.tasks if t.template_id} == {"settings.toggle_bluetooth"}
    assert "nav:settings/wifi" not in {t.task_id for t in result.tasks}


def test_navigation_tasks_reach_their_screen_within_budget_by_replaying_the_source_trajectory(
        settings_paths, contacts_paths, settings_curriculum, contacts_curriculum):
    paths = {trajectory_id(p): p for p in settings_paths + contacts_paths}
    nav = [t for r in (settings_curriculum, contacts_curriculum) for t in r.tasks if t.goal_screen]
    reached = screens_reached(settings_paths + contacts_paths)
    assert {(t.app, t.goal_screen) for t in nav} == set(reached)
    assert "groups" not in {t.goal_screen for t in nav}  # contacts exploration never reached it
    for task in nav:
        assert task.verifiable and task.template_id is None and task.variation_type == "simplification"
        source = paths[task.source_trace_id]
        steps = reached[(task.app, task.goal_screen)].steps
        env = SimEnvironment(size=SCREEN)
        spec = task.to_task_spec()
        env.reset(spec)
        assert env.step(Action(type=ActionType.OPEN_APP, app=load_apps()[task.app].label)).ok
        for transition in source[:steps]:
            assert env.step(transition.action).ok
        truth = env.ground_truth(spec, answer=None, terminated=True, n_steps=steps + 1)
        assert truth.success, task.task_id
        assert steps + 1 < task.step_budget  # slack on top of the explored path


def test_rows_fit_the_curriculum_tasks_table_and_round_trip(settings_curriculum):
    rows = [t.to_row() for t in settings_curriculum.tasks]
    assert set(CURRICULUM_TASKS.column_names) <= set(rows[0])
    frame = pl.DataFrame([{c: r[c] for c in CURRICULUM_TASKS.column_names} for r in rows],
                         schema=CURRICULUM_TASKS.polars_schema())
    assert validate(frame, CURRICULUM_TASKS) == []
    assert [CurriculumTask.from_row(r) for r in rows] == settings_curriculum.tasks


def test_mining_is_deterministic(settings_paths, settings_curriculum):
    again = mine_simulator_tasks(settings_paths, SimCurriculumConfig(screen_size=SCREEN))
    assert [t.to_row() for t in again.tasks] == [t.to_row() for t in settings_curriculum.tasks]


def test_record_rejects_inconsistent_fields():
    base = dict(task_id="t", app="settings", instruction="Turn on Wi-Fi.", step_budget=5,
                core_functionality="settings: toggle wifi", prerequisites=None, source_trace_id="settings-g0.0")
    with pytest.raises(ValueError, match="variation_type"):
        CurriculumTask(**base, variation_type="paraphrase", verifiable=False)
    with pytest.raises(ValueError, match="verifiable"):
        CurriculumTask(**base, variation_type="simplification", verifiable=True)
    with pytest.raises(ValueError, match="template_seed"):
        CurriculumTask(**base, variation_type="parameter_change", verifiable=True, template_id="settings.toggle_wifi")


def test_trajectories_of_apps_the_simulator_lacks_are_an_error(settings_paths):
    first = settings_paths[0][0]
    alien = (dataclasses.replace(first, before=dataclasses.replace(first.before, app="com.example.device_only")),)
    with pytest.raises(ValueError, match="com.example.device_only"):
        mine_simulator_tasks([alien])
