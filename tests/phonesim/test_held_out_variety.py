"""Every held-out (test / ood) template is a family of tasks, not one task seeded ten times: it has
ten distinct instances among the seeds the benchmark scans, no constant answer given without
looking at the screen passes more than three of them, and the train templates the curriculum
mines (and every trained checkpoint depends on) are unchanged."""

from __future__ import annotations

import hashlib
from functools import lru_cache

import pytest

from phonesim import instantiate, templates
from phonesim.tasks import TaskInstance

N, SEEDS = 10, 200  # ops.evaluation.benchmark.held_out_tasks(10) takes the first 10 distinct instances of seeds 0..199
MAX_BLIND = 3
HELD_OUT = sorted(t.id for t in templates() if t.split != "train")
ANSWERED = sorted(t.id for t in templates() if t.split != "train" and t.answer is not None)
# sha256 over the keys of seeds 0..4 (world 0), first 16 hex digits: train templates that share
# samplers or setups with held-out ones
TRAIN_DIGESTS = {
    "calendar.query_date": "681e7b926fa1c37e",
    "clock.alarm_off": "809f44d84e250fa1",
    "contacts.favorite": "35d6d16392f20d2c",
    "expenses.query_largest_name": "e842747488a75ae2",
    "files.query_largest": "f33f0420d6f27302",
    "notes.query_folder": "7ccabe23bb86cf91",
    "recipes.favorite": "6333906ac98b9f47",
    "recorder.restore": "7fbb67bb879df827",
    "settings.set_screen_timeout": "3a9f2e9a75f2d7e2",
    "settings.toggle_wifi": "3acac8b4ba9a5298",
    "sms.send": "c5f77482d6ed461e",
    "todo.query_today": "984ecbc06f5d313d",
}


@lru_cache(maxsize=None)
def distinct(template_id: str) -> tuple[TaskInstance, ...]:
    """The first N instances with distinct keys among seeds 0..SEEDS-1 (fewer if there are not N)."""
    seen, out = set(), []
    for seed in range(SEEDS):
        inst = instantiate(template_id, seed)
        if inst.key not in seen:
            seen.add(inst.key)
            out.append(inst)
            if len(out) == N:
                break
    return tuple(out)


def shown(inst: TaskInstance) -> str:
    gold = inst.answer_spec.gold
    return f"{gold:g}" if isinstance(gold, float) else str(gold)


@pytest.mark.parametrize("template_id", HELD_OUT)
def test_held_out_template_has_ten_distinct_instances_none_already_done(template_id):
    instances = distinct(template_id)
    assert len(instances) == N, f"{template_id}: {len(instances)} distinct instances in seeds 0..{SEEDS - 1}"
    assert not any(inst.judge(inst.make_phone()).success for inst in instances)


@pytest.mark.parametrize("template_id", ANSWERED)
def test_no_blind_answer_passes_more_than_three_instances(template_id):
    instances = distinct(template_id)
    candidates = sorted({str(n) for n in range(31)} | {shown(inst) for inst in instances})
    passes = {c: sum(inst.judge(inst.make_phone(), c).success for inst in instances) for c in candidates}
    worst = max(passes, key=passes.get)
    assert passes[worst] <= MAX_BLIND, f"{template_id}: answering {worst!r} blind passes {passes[worst]}/{N}"


def test_a_blind_answer_is_caught():
    """The check above can fail: the gold of an instance passes that instance."""
    inst = distinct("settings.query_android_version")[0]
    assert inst.judge(inst.make_phone(), shown(inst)).success


@pytest.mark.parametrize("template_id", sorted(TRAIN_DIGESTS))
def test_train_instances_are_unchanged(template_id):
    keys = "".join(instantiate(template_id, seed).key for seed in range(5))
    assert hashlib.sha256(keys.encode()).hexdigest()[:16] == TRAIN_DIGESTS[template_id]
