"""Judging: side effects, typed answers through episodes, shaped reward, overdue."""

from __future__ import annotations

import pytest

from phonesim import Episode, instantiate, run_actions
from phonesim.actions import Action
from phonesim.metrics import shaped_reward
from tests.phonesim.conftest import solved


def test_unrelated_mutation_is_reported_as_a_side_effect():
    task, path = solved("contacts.favorite")
    ep = Episode(task)
    for a in path:
        ep.step(a)
    ep.phone.state["data"]["system"]["bluetooth"] = not ep.phone.state["data"]["system"]["bluetooth"]
    j = task.judge(ep.phone)
    assert j.success
    assert j.side_effects == ("system.bluetooth",)
    m = ep.metrics()
    assert m.shaped_reward == pytest.approx(1 / 8)


def test_calling_the_wrong_contact_through_the_ui_is_a_side_effect():
    task, path = solved("contacts.query_phone")
    ep = Episode(task)
    for a in path[:-1]:  # now on the contact's detail page
        ep.step(a)
    call = next(e for e in ep.phone.observe().elements if e["text"] == "Call")
    assert ep.step(Action("click", element=call["index"])).ok
    assert task.judge(ep.phone).side_effects == ("contacts.calls.0",)


def test_expected_change_is_not_a_side_effect_but_extra_edit_is():
    task, path = solved("contacts.edit_phone")
    ep = Episode(task)
    for a in path:
        ep.step(a)
    assert task.judge(ep.phone).clean
    cid = task.params["cid"]
    put = ep.phone.data("contacts")["put"]  # replace, not mutate: the app caches merged records
    put[cid] = dict(put[cid], email="x@y.z")
    assert task.judge(ep.phone).side_effects == (f"contacts.people.{cid}.email",)


def _answer_episode(template_id: str, answer: str):
    task, path = solved(template_id)
    nav = [a for a in path if a.type.value != "answer"]
    return run_actions(task, nav + [Action("answer", text=answer)])


def test_phone_answer_in_another_format_passes():
    task, _ = solved("contacts.query_phone")
    digits = "".join(ch for ch in task.answer_spec.gold if ch.isdigit())
    assert _answer_episode("contacts.query_phone", digits).success
    assert _answer_episode("contacts.query_phone", f"Their number is ({digits[1:4]}) {digits[4:7]}-{digits[7:]}").success


def test_date_answer_in_another_format_passes_and_wrong_or_hedged_fails():
    task, _ = solved("contacts.query_birthday")
    y, m, d = task.answer_spec.gold.split("-")
    assert _answer_episode("contacts.query_birthday", f"{int(m)}/{int(d)}/{y}").success
    assert not _answer_episode("contacts.query_birthday", f"{y}-{m}-{int(d) % 28 + 1:02d}").success
    assert not _answer_episode("contacts.query_birthday", f"{y}-{m}-{d} or {y}-{m}-{int(d) % 28 + 1:02d}").success


def test_number_answer_with_words_passes_and_two_numbers_fail():
    task, _ = solved("contacts.query_group_count")
    n = int(task.answer_spec.gold)
    assert _answer_episode("contacts.query_group_count", f"There are {n} contacts").success
    assert not _answer_episode("contacts.query_group_count", f"{n} or {n + 1}").success
    assert not _answer_episode("contacts.query_group_count", str(n + 1)).success


def test_wrong_answer_gets_no_credit_for_submitting():
    task, path = solved("settings.query_paired_count")
    m = run_actions(task, [Action("answer", text="99")], terminate=False)
    assert not m.success and m.shaped_reward == 0.0


def test_overdue_when_goal_reached_but_never_terminated():
    task, path = solved("settings.toggle_wifi")
    ep = Episode(task)
    for a in path:
        ep.step(a)
    while not ep.done:
        ep.step(Action("wait"))
    m = ep.metrics()
    assert m.success and m.overdue and m.status is None
    assert m.shaped_reward == pytest.approx(1 / 5)


def test_post_success_abort_is_penalised():
    task, path = solved("settings.toggle_wifi")
    ep = Episode(task)
    for a in path:
        ep.step(a)
    ep.step(Action("terminate", status="failure"))
    m = ep.metrics()
    assert m.post_success_abort and m.shaped_reward == pytest.approx(1 / 5)


def test_shaped_reward_false_complete_divides_partial_progress():
    task, path = solved("settings.dnd_and_volume")
    m = run_actions(task, list(path[:-1]))
    assert m.false_complete and 0 < m.progress < 1
    assert m.shaped_reward == pytest.approx(m.progress / 8)


def test_episode_stops_at_the_step_budget():
    task = instantiate("settings.toggle_wifi", 0)
    ep = Episode(task)
    for _ in range(task.step_budget + 3):
        ep.step(Action("wait"))
    assert ep.done and len(ep.history) == task.step_budget
    assert not ep.step(Action("wait")).ok


def test_shaped_reward_function_clean_success_is_one():
    task, path = solved("settings.toggle_wifi")
    ep = Episode(task)
    for a in path:
        ep.step(a)
    assert shaped_reward(task.judge(ep.phone), "success", False, False) == 1.0
