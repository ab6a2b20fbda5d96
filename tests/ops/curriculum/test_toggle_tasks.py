"""Toggle variants: switches the settings exploration flipped become "turn X on/off" tasks that
the simulator judges by the data the flip changed."""

from __future__ import annotations

import json

import pytest

from ops.judging.critic.programmatic import ProgrammaticCritic
from ops.curriculum import CurriculumTask
from ops.curriculum.model import GoalState
from ops.curriculum.state_tasks import toggle_tasks
from ops.agent.hint_marks import hint_targets
from ops.environments.simulator import SimEnvironment
from tests.ops.curriculum.attempts import attempt, walk
from tests.ops.curriculum.traces import SCREEN


def _toggles(curriculum) -> dict[str, CurriculumTask]:
    return {t.task_id: t for t in curriculum.tasks if t.goal_state is not None and not t.goal_state.taps}


def test_settings_switches_become_toggle_tasks_named_by_their_row(settings_curriculum):
    toggles = _toggles(settings_curriculum)
    location = toggles["toggle:settings/location/Use location/off"]
    assert location.instruction in ("In Settings, turn off Use location.", "Turn off Use location in Settings.",
                                    "Turn off Use location.")
    assert location.goal_state == GoalState(screen="location", values={"system.location": False})
    airplane = toggles["toggle:settings/network/Airplane mode/on"]
    assert airplane.goal_state.values == {"system.airplane": True, "system.wifi": False}  # both data paths the tap set
    assert all(t.verifiable and t.template_id is None and t.goal_screen is None for t in toggles.values())
    # no task asks for the state a fresh phone is already in
    env = SimEnvironment(size=SCREEN)
    for task in toggles.values():
        spec = task.to_task_spec()
        env.reset(spec)
        assert not env.ground_truth(spec, None, terminated=True, n_steps=0).success, task.task_id


def test_a_toggle_task_is_solved_within_budget_and_judged_by_its_data(settings_curriculum):
    task = _toggles(settings_curriculum)["toggle:settings/location/Use location/off"]
    env = SimEnvironment(size=SCREEN)
    done = attempt(env, task, ["Location", "Use location"])
    assert done.ground_truth.success and done.ground_truth.progress == 1.0 and done.ground_truth.side_effects == 0
    assert len(done.steps) <= task.step_budget
    feedback = ProgrammaticCritic().evaluate(done)
    assert feedback.decision == 1 and all(s.reasonable for s in feedback.step_analysis)

    twice = attempt(env, task, ["Location", "Use location", "Use location"])  # flipped back: not done
    assert not twice.ground_truth.success
    feedback = ProgrammaticCritic().evaluate(twice)
    assert [s.reasonable for s in feedback.step_analysis] == [True, True, True, False]
    assert feedback.hint.hint_summary == "On 'location', finish the task."  # the goal held before the re-tap


def test_a_wrong_turn_gets_a_hint_toward_the_switch_and_side_effects_are_counted(settings_curriculum):
    task = _toggles(settings_curriculum)["toggle:settings/display/Dark theme/on"]
    env = SimEnvironment(size=SCREEN)
    wrong = attempt(env, task, ["Display", "Adaptive brightness"])
    assert not wrong.ground_truth.success and wrong.ground_truth.side_effects == 1
    feedback = ProgrammaticCritic(hint_steps=2).evaluate(wrong)
    assert [s.reasonable for s in feedback.step_analysis] == [True, True, False]
    assert hint_targets(feedback.hint.hint_summary) == [("display", "Dark theme")]


def test_partial_progress_counts_the_goal_paths_that_hold(settings_curriculum):
    task = _toggles(settings_curriculum)["toggle:settings/network/Airplane mode/on"]
    env = SimEnvironment(size=SCREEN)
    spec = task.to_task_spec()
    env.reset(spec)
    walk(env, task, ["Network & internet"])
    assert task.goal_state == GoalState(screen="network", values={"system.airplane": True, "system.wifi": False})
    env.phone.state["data"]["system"]["wifi"] = False  # as if Wi-Fi had been switched off first
    truth = env.ground_truth(spec, None, terminated=False, n_steps=2)
    assert not truth.success and truth.progress == 0.5


def test_flips_back_to_the_fresh_state_and_switchless_screens_give_no_task(settings_paths, contacts_paths):
    tasks = toggle_tasks(settings_paths + contacts_paths, world_seed=0, size=SCREEN, slack_ratio=0.5, min_slack=2)
    assert {t.app for t in tasks} == {"settings"}  # contacts' favourite star sits on a per-contact screen
    assert all(t.goal_state.values != {"system.dnd": False} for t in tasks)  # DND is off on a fresh phone
    assert json.loads(tasks[0].to_row()["goal_state"])["screen"] == tasks[0].goal_state.screen


def test_goal_state_must_name_a_path_and_stands_alone():
    with pytest.raises(ValueError, match="names no data path"):
        GoalState(screen="wifi", values={})
    with pytest.raises(ValueError, match="not several"):
        CurriculumTask(task_id="t", app="settings", instruction="Turn off Wi-Fi.", step_budget=5,
                       core_functionality="settings: turn off Use Wi-Fi", variation_type="simplification",
                       prerequisites=None, source_trace_id="settings-g0.0", verifiable=True, goal_screen="wifi",
                       goal_state=GoalState(screen="wifi", values={"system.wifi": False}))
