"""The pretraining world: its own registry, phones and templates, solvable and judged like the target's."""

from __future__ import annotations

import pytest

from phonesim import Phone, all_templates, instantiate, load_apps, run_actions, templates
from phonesim.pretrain import HELD_OUT_APPS, load_pretrain_apps, pretrain_template_ids, pretrain_templates, trained_apps
from phonesim.task_template import PRETRAIN_SPLIT, TARGET_SPLITS
from tests.phonesim.conftest import solved

TARGET_APPS = ["calendar", "clock", "contacts", "expenses", "files", "notes", "recipes", "recorder", "settings", "sms",
               "todo"]
PRETRAIN_IDS = sorted(pretrain_templates())


def test_the_target_registry_is_untouched_by_the_pretraining_world():
    assert sorted(load_apps()) == TARGET_APPS
    assert {t.split for t in all_templates().values()} == set(TARGET_SPLITS)
    assert not set(all_templates()) & set(pretrain_templates())
    assert templates(split=PRETRAIN_SPLIT) == []
    assert sorted(Phone().apps) == TARGET_APPS  # a default phone's launcher holds the target apps only


def test_pretraining_templates_run_on_phones_with_only_the_pretraining_apps():
    assert {t.split for t in pretrain_templates().values()} == {PRETRAIN_SPLIT}
    task = instantiate("plants.pin", 0)
    phone = task.make_phone()
    assert sorted(phone.apps) == sorted(load_pretrain_apps())
    assert not set(phone.apps) & set(load_apps())
    launcher = {e["text"] for e in phone.observe().elements}
    assert "Plants" in launcher and not launcher & {app.label for app in load_apps().values()}


def test_held_out_apps_are_pretraining_apps_left_out_of_training():
    assert set(HELD_OUT_APPS) < set(load_pretrain_apps())
    assert set(trained_apps()) == set(load_pretrain_apps()) - set(HELD_OUT_APPS)
    held = pretrain_template_ids(held_out=True)
    assert held and all(pretrain_templates()[t].apps[0] in HELD_OUT_APPS for t in held)
    assert set(held) | set(pretrain_template_ids(held_out=False)) == set(PRETRAIN_IDS)


@pytest.mark.parametrize("template_id", PRETRAIN_IDS)
def test_every_pretraining_template_is_solved_cleanly_and_a_truncated_solution_fails(template_id):
    task, path = solved(template_id)
    assert 0 < len(path) <= task.step_budget
    done = run_actions(task, list(path))
    assert done.success and not done.side_effects and done.invalid_steps == 0, done
    assert not run_actions(task, list(path[:-1])).success


def test_instances_vary_with_the_seed():
    assert len({instantiate("albums.edit_year", s).instruction for s in range(8)}) > 4
