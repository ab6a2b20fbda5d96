"""Entry-action variants: presses exploration made on an entry's page (Call, Mark done, Move)
become "open <entry> and tap <button>" tasks, judged by the data the press changed and walked
by the critic's distance through the chain of pages that leads to the entry."""

from __future__ import annotations

import json

import pytest

from ops.judging.critic.goal_distance import entry_distance
from ops.judging.critic.programmatic import ProgrammaticCritic
from ops.curriculum import CurriculumTask
from ops.curriculum.entry_tasks import entry_tasks
from ops.curriculum.model import GoalState
from ops.agent.hint_marks import hint_targets
from ops.environments.simulator import SimEnvironment
from phonesim.phone import Phone
from tests.ops.curriculum.attempts import attempt, walk
from tests.ops.curriculum.traces import SCREEN, explored


def _mine(app: str):
    return entry_tasks(list(explored(app)), world_seed=0, size=SCREEN, slack_ratio=0.5, min_slack=2)


@pytest.fixture(scope="module")
def contacts_entries():
    return _mine("contacts")


@pytest.fixture(scope="module")
def todo_entries():
    return _mine("todo")


def _by_id(mining) -> dict[str, CurriculumTask]:
    return {t.task_id: t for t in mining.tasks}


def test_a_call_from_a_contacts_page_becomes_a_task_named_by_the_contact(contacts_entries):
    calls = [t for t in contacts_entries.tasks if t.goal_state.taps == ("Call",)]
    assert calls, "exploration presses Call on a contact's page"
    task = calls[0]
    entry = task.goal_state.opens[-1]
    assert task.goal_state.screen == "list" and entry["screen"] == "detail" and set(entry["params"]) == {"cid"}
    assert task.goal_state.values == {"contacts.calls.0": entry["params"]["cid"]}
    assert entry["label"] in task.instruction and "Call" in task.instruction
    assert task.task_id == f"entry:contacts/detail/{entry['label']}/Call" and task.verifiable
    env = SimEnvironment(size=SCREEN)
    done = attempt(env, task, [entry["label"], "Call"])
    assert done.ground_truth.success and done.ground_truth.side_effects == 0 and len(done.steps) <= task.step_budget
    feedback = ProgrammaticCritic().evaluate(done)
    assert feedback.decision == 1 and all(s.reasonable for s in feedback.step_analysis)


def test_calling_another_contact_is_judged_wrong_and_the_hint_names_the_right_one(contacts_entries):
    task = next(t for t in contacts_entries.tasks if t.goal_state.taps == ("Call",))
    right = task.goal_state.opens[-1]["label"]
    other = next(t.goal_state.opens[-1]["label"] for t in contacts_entries.tasks
                 if t.goal_state.opens and t.goal_state.opens[-1]["label"] != right)
    env = SimEnvironment(size=SCREEN)
    wrong = attempt(env, task, [other, "Call"])
    assert not wrong.ground_truth.success and wrong.ground_truth.progress == 0  # the call went to someone else
    feedback = ProgrammaticCritic().evaluate(wrong)
    assert [s.reasonable for s in feedback.step_analysis] == [True, False, False]
    assert hint_targets(feedback.hint.hint_summary) == [("list", right)]


def test_a_to_do_entry_two_pages_deep_counts_back_presses_from_a_wrong_task(todo_entries):
    task = next(t for t in todo_entries.tasks if t.goal_state.taps == ("Mark done",))
    goal = task.goal_state
    assert goal.screen == "home" and [o["screen"] for o in goal.opens] == ["list", "task"]
    list_label, entry = goal.opens[0]["label"], goal.opens[1]["label"]
    other = next(t.goal_state.opens[1]["label"] for t in todo_entries.tasks
                 if t.goal_state.opens[0] == goal.opens[0] and t.goal_state.opens[1]["label"] != entry)
    env = SimEnvironment(size=SCREEN)
    spec = task.to_task_spec()
    env.reset(spec)
    phone = env.phone
    assert entry_distance(phone, task.app, spec.params["goal_state"]) == 4  # open the app, the list, the task, tap
    walk(env, task, [list_label, other])
    assert entry_distance(env.phone, task.app, spec.params["goal_state"]) == 3  # back, the task, tap
    done = attempt(env, task, [list_label, entry, "Mark done"])
    assert done.ground_truth.success
    assert entry_distance(env.phone, task.app, spec.params["goal_state"]) == 0


def test_a_press_behind_a_dialog_is_two_taps_and_the_first_one_counts_as_progress():
    tasks = [t for t in _mine("files").tasks if len(t.goal_state.taps) == 2]
    assert tasks, "exploration moves a file: Move, then a folder in the dialog"
    task = tasks[0]
    entry, (move, folder) = task.goal_state.opens[-1]["label"], task.goal_state.taps
    assert move == "Move" and task.goal_state.values == {next(iter(task.goal_state.values)): folder}
    assert f"tap Move, then {folder}" in task.instruction
    env = SimEnvironment(size=SCREEN)
    chain = [o["label"] for o in task.goal_state.opens]
    done = attempt(env, task, chain + [move, folder])
    assert done.ground_truth.success
    feedback = ProgrammaticCritic().evaluate(done)
    assert all(s.reasonable for s in feedback.step_analysis), feedback.step_analysis
    assert entry in task.instruction


def test_switches_stay_toggle_tasks_and_fresh_states_give_no_task(settings_paths):
    mining = entry_tasks(list(settings_paths), world_seed=0, size=SCREEN, slack_ratio=0.5, min_slack=2)
    ids = set(_by_id(mining))
    assert ids and all(t.goal_state.taps[-1] in ("Connect", "Forget") for t in mining.tasks), ids
    fresh = Phone(0, SCREEN)
    for task in mining.tasks:  # none is done before it starts
        assert entry_distance(fresh, task.app, task.goal_state.to_params()) > 0


def test_entry_goal_states_round_trip_and_toggle_rows_keep_their_form(contacts_entries):
    task = contacts_entries.tasks[0]
    row = task.to_row()
    assert CurriculumTask.from_row(row) == task
    assert set(json.loads(row["goal_state"])) == {"screen", "values", "opens", "taps"}
    toggle = GoalState(screen="wifi", values={"system.wifi": False})
    assert set(toggle.to_params()) == {"screen", "values"}
    with pytest.raises(ValueError, match="names no tap"):
        GoalState(screen="list", values={"contacts.calls.0": "c1"}, opens=({"label": "Ana", "screen": "detail",
                                                                            "params": {"cid": "c1"}},))
