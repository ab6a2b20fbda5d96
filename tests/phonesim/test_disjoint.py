"""Nothing of the target world is in the pretraining world: not its apps, not its templates'
instructions or instances, not its screens or state (the pretraining recipe's samples are checked
in tests/training/base/test_world_recipe.py)."""

from __future__ import annotations

import json
import random
import re
from functools import lru_cache

import pytest

from phonesim import Phone, all_templates, instantiate, load_apps
from phonesim.pretrain import load_pretrain_apps, pretrain_templates
from phonesim.disjoint import TargetMatcher, is_entity, os_chrome, target_entities, target_strings
from tests.phonesim.conftest import solved

PRETRAIN_SEEDS = range(3)


def _pattern(template_instruction: str) -> re.Pattern:
    """A target template's instruction as a regex: its fixed words, any text for each parameter,
    then the optional answer-format sentence instances append."""
    parts = re.split(r"\{[^}]*\}", template_instruction)
    body = "(.+?)".join(re.escape(p) for p in parts)
    return re.compile(rf"{body}(?: Answer with .+\.)?", re.S)


@lru_cache(maxsize=1)
def pretraining_instances():
    return [instantiate(tid, seed) for tid in sorted(pretrain_templates()) for seed in PRETRAIN_SEEDS]


def _texts(elements) -> list[str]:
    return [" ".join(v.split()) for e in elements for v in (e["text"], e["desc"]) if v.strip()]


def _walk_screens(catalog, apps, n: int, seed: int) -> list[tuple[str, ...]]:
    """Element texts of `n` screens reached by random taps in `apps`."""
    rng, screens = random.Random(seed), []
    for _ in range(n):
        phone = Phone(rng.randrange(3), catalog=catalog)
        phone.launch(rng.choice(sorted(apps)))
        for _ in range(rng.randrange(5)):
            taps = [e["index"] for e in phone.observe().elements if e["clickable"]]
            phone.step({"type": "click", "args": {"element": rng.choice(taps)}})
        screens.append(tuple(_texts(phone.observe().elements)))
    return screens


def _solution_screens(template_id: str) -> list[tuple[str, ...]]:
    task, path = solved(template_id, 0)  # seed 0: every template's is in the solutions store
    phone = task.make_phone()
    screens = [tuple(_texts(phone.observe().elements))]
    for action in path:
        phone.step(action)
        screens.append(tuple(_texts(phone.observe().elements)))
    return screens


@lru_cache(maxsize=1)
def pretraining_screens() -> list[tuple[str, ...]]:
    """Every 8th pretraining template's solution screens and 300 random walks' ends (all apps)."""
    screens = [s for tid in sorted(pretrain_templates())[::8] for s in _solution_screens(tid)]
    return screens + _walk_screens(load_pretrain_apps(), load_pretrain_apps(), 300, 0)


@lru_cache(maxsize=1)
def target_screens() -> set[tuple[str, ...]]:
    """Every 8th target template's solution screens and 300 random walks' ends (all apps)."""
    screens = [s for tid in sorted(all_templates())[::8] for s in _solution_screens(tid)]
    return set(screens + _walk_screens(None, load_apps(), 300, 1))


def test_no_app_name_label_or_package_is_shared():
    target = {x.lower() for a in load_apps().values() for x in (a.name, a.label, a.package)}
    pretraining = {x.lower() for a in load_pretrain_apps().values() for x in (a.name, a.label, a.package)}
    assert not target & pretraining


def test_entities_are_names_not_single_words():
    assert is_entity("Omar Garcia") and is_entity("+1 859-555-5704") and is_entity("Pay electricity bill")
    assert not is_entity("Work") and not is_entity("done") and not is_entity("8:00")
    assert {"Omar Garcia", "Contacts", "settings"} <= target_entities()  # names, labels and app names
    assert not target_entities() & os_chrome()


# --- instructions ---------------------------------------------------------------------------------

def test_no_pretraining_instruction_is_a_target_instruction_or_fits_a_target_template():
    target_instructions = {s for s in target_strings()}
    patterns = [(t.id, _pattern(i)) for t in all_templates().values() for i in t.instructions]
    for task in pretraining_instances():
        assert task.instruction not in target_instructions, task.id
        fits = [tid for tid, p in patterns if p.fullmatch(task.instruction)]
        assert not fits, f"{task.id}: {task.instruction!r} fits target templates {fits}"


def test_no_pretraining_instruction_names_a_target_entity():
    matcher = TargetMatcher(target_entities())
    named = {task.id: hit for task in pretraining_instances() if (hit := matcher.find(task.instruction))}
    assert not named


def test_the_check_would_catch_a_target_instruction():
    """The checks above can fail: a target instance's instruction fits its template and names its entities."""
    task = instantiate("contacts.call", 0)
    assert any(_pattern(i).fullmatch(task.instruction) for i in task.template.instructions)
    assert TargetMatcher(target_entities()).find(task.instruction)


@pytest.mark.parametrize("text,found", [
    ("call Ann Lee Jr. now", "ann lee jr"),     # the longest entity starting there
    ("call Ann Lee, Jr", "ann lee"),
    ("Ann Leeward", None),                      # whole words only
    ("xAnn Lee", None),
    ("Bob Day and Ann Lee", "bob day"),         # the leftmost one
    ("+1 555-0100 called", "+1 555-0100"),      # entities may start with a sign
])
def test_the_matcher_finds_the_leftmost_longest_whole_word_entity(text, found):
    assert TargetMatcher(["Ann Lee", "Ann Lee Jr", "Bob Day", "+1 555-0100"]).find(text) == found


# --- states -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("world_seed", [0, 1, 2])
def test_pretraining_phone_state_holds_no_target_app_and_its_data_no_target_entity(world_seed):
    phone = Phone(world_seed, catalog=load_pretrain_apps())
    assert set(phone.state["data"]) == {"system"} | set(load_pretrain_apps())
    matcher = TargetMatcher(target_entities())
    for app in phone.apps:
        assert matcher.find(json.dumps([phone.world(app), phone.state["data"][app]], ensure_ascii=False)) is None, app


def test_pretraining_instances_params_and_initial_states_hold_no_target_entity():
    matcher = TargetMatcher(target_entities())
    for task in pretraining_instances():
        apps_data = {k: v for k, v in task.initial["data"].items() if k != "system"}
        text = json.dumps([task.params, apps_data, task.answer_spec.to_dict() if task.answer_spec else None],
                          ensure_ascii=False)
        assert matcher.find(text) is None, task.id


def test_pretraining_screens_show_no_target_entity_and_no_target_app():
    matcher = TargetMatcher(target_entities())
    labels = {x for a in load_apps().values() for x in (a.label, a.name)}
    for screen in pretraining_screens():
        assert not set(screen) & labels, screen
        assert matcher.find("\n".join(screen)) is None, screen


def test_no_pretraining_screen_is_a_target_screen():
    shared = set(pretraining_screens()) & target_screens()
    assert not shared, sorted(shared)[:3]


def test_what_both_worlds_show_is_the_phone_chrome_and_generic_words():
    """Texts on screens of both worlds: the phone's own chrome (status bar, navigation buttons) and
    single generic words (Edit, Delete, Save, ...); never a target entity."""
    shown = {t for s in pretraining_screens() for t in s}
    target = {t for s in target_screens() for t in s}
    shared = shown & target
    assert {"Back", "Home", "Overview", "8:00"} <= shared  # navigation and clock on every phone
    assert not shared & target_entities()
    assert all(len(t.split()) <= 2 for t in shared - os_chrome()), sorted(shared - os_chrome())
