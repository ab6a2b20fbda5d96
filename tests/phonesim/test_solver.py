"""A* distances equal the breadth-first baseline, cold and with memory from earlier queries."""

from __future__ import annotations

import random

import pytest

from phonesim import distance_to_goal, instantiate, shortest_path, solve, solver
from phonesim.actions import Action


def _length(path):
    return None if path is None else len(path)


@pytest.mark.parametrize("template_id", ["settings.connect_wifi", "settings.rename_device", "contacts.favorite",
                                         "contacts.query_group_count", "settings.dnd_and_volume"])
def test_astar_matches_bfs_along_a_wandering_rollout(template_id):
    task = instantiate(template_id, 3)
    phone = task.make_phone()
    rng = random.Random(template_id)
    solver.clear_memory()
    for _ in range(6):
        assert _length(shortest_path(phone, task)) == _length(solver.bfs_path(phone, task))
        plan = shortest_path(phone, task)
        if not plan:
            break
        options = solver.candidate_actions(phone, task)
        phone.step(plan[0] if rng.random() < 0.5 else rng.choice(options))


def test_memory_gives_the_same_answers_as_a_cold_search():
    task = instantiate("settings.connect_wifi", 2)
    phone = task.make_phone()
    states = []
    for a in [Action("open_app", app="Settings"), Action("system_button", button="back"),
              Action("open_app", app="Contacts"), Action("system_button", button="home")]:
        phone.step(a)
        states.append(phone.fork())
    warm = [distance_to_goal(p, task) for p in states]
    cold = []
    for p in states:
        solver.clear_memory()
        cold.append(distance_to_goal(p, task))
    assert warm == cold


def test_only_text_absent_from_the_world_counts_as_new():
    task = instantiate("contacts.edit_phone", 0)
    new = solver._memory(task).new_hints
    assert new == (task.params["phone"].encode(),)  # the name is typed into search, not required


def test_a_wrong_answer_is_unrecoverable():
    task = instantiate("contacts.query_phone", 0)
    phone = task.make_phone()
    phone.step(Action("answer", text="not a number"))
    assert distance_to_goal(phone, task) is None


@pytest.mark.parametrize("value", [10, 100])
def test_a_slider_is_set_at_both_ends_of_its_range(value):
    # a tap at the bar's right edge missed it, so "brightness 100%" had no solution
    task = next(t for t in (instantiate("settings.set_brightness", s) for s in range(200)) if t.params["value"] == value)
    phone = task.make_phone()
    for action in solve(phone, task):
        phone.step(action)
    assert abs(phone.state["data"]["system"]["brightness"] - value) <= 5


def test_a_plan_without_shortcuts_taps_where_the_shortest_one_searches_or_long_presses():
    task = instantiate("contacts.favorite", 0)  # the shortest plan searches for the contact by name
    full = shortest_path(task.make_phone(), task)
    direct = shortest_path(task.make_phone(), task, shortcuts=False)
    assert any(a.type == "type" for a in full)
    assert direct is not None and len(direct) > len(full)
    assert {a.type for a in direct} <= {"click", "swipe", "system_button", "open_app"}
    phone = task.make_phone()
    for a in direct:
        assert phone.step(a).ok
    assert task.judge(phone).success
    thread = instantiate("sms.delete_thread", 0)  # shortest: long-press the conversation
    assert any(a.type == "long_press" for a in shortest_path(thread.make_phone(), thread))
    assert all(a.type == "click" for a in shortest_path(thread.make_phone(), thread, shortcuts=False))


def test_without_shortcuts_new_text_is_still_typed():
    task = instantiate("contacts.create", 0)  # a new contact's first name, last name and number go into fields
    direct = shortest_path(task.make_phone(), task, shortcuts=False)
    assert direct == shortest_path(task.make_phone(), task) and sum(a.type == "type" for a in direct) == 3
    assert not [a for a in solver.candidate_actions(task.make_phone(), task, shortcuts=False)
                if a.type == "long_press"]
