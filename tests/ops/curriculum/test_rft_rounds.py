from dataclasses import replace

import pytest

from ops.evaluation.benchmark import template_tasks
from ops.agent.episode import TaskSpec
from ops.curriculum.template_variants import fresh_variants, solved_templates
from ops.environments.simulator import SimEnvironment
from phonesim.tasks import instantiate


def _pool():
    """Curriculum-like template tasks (two of one template) and a navigation task."""
    def task(template, seed):
        inst = instantiate(template, seed)
        return TaskSpec(inst.id, inst.instruction, inst.step_budget, app=inst.apps[0], template_id=template,
                        params=dict(inst.params), seed=seed)
    return [task("clock.delete_alarm", 0), TaskSpec("nav:x", "open x", 3, app="settings", params={"goal_screen": "wifi"}),
            task("notes.delete", 0), task("notes.delete", 1), task("sms.delete_thread", 0)]


def test_solved_templates_come_first_as_new_instances_without_navigation_tasks():
    pool = _pool()
    tasks = fresh_variants(pool, {"notes.delete"}, 2, 1000, None, world_seed=0)
    assert [t.task_id for t in tasks] == ["notes.delete#2000~r2", "notes.delete#2001~r2",
                                          "clock.delete_alarm#2000~r2", "sms.delete_thread#2000~r2"]
    assert [t.seed for t in tasks] == [2000, 2001, 2000, 2000]
    assert [t.task_id for t in fresh_variants(pool, {"notes.delete"}, 3, 1000, 3, world_seed=0)] == [
        "notes.delete#3000~r3", "notes.delete#3001~r3", "clock.delete_alarm#3000~r3"]
    assert [t.task_id for t in fresh_variants(pool, set(), 2, 1000, 2, world_seed=0)] == [
        "clock.delete_alarm#2000~r2", "notes.delete#2000~r2"]


def test_solved_templates_read_the_previous_rounds_task_ids():
    round2 = fresh_variants(_pool(), set(), 2, 1000, None, world_seed=0)
    assert solved_templates(round2, {"sms.delete_thread#2000~r2", "nav:x"}) == {"sms.delete_thread"}
    assert solved_templates(_pool(), {"nav:x", "notes.delete#1"}) == {"notes.delete"}


@pytest.mark.parametrize("world_seed", [0, 1])
def test_every_fresh_variant_shows_the_instance_the_simulator_builds_and_judges(world_seed):
    """For every train template: the instruction, params, budget and app of a fresh variant are
    those of the instance `SimEnvironment.reset` builds and its judge checks, not the pool task's."""
    pool = [task for task, _ in template_tasks("train", 1, world_seed=world_seed)]
    variants = fresh_variants(pool, set(), 2, 1000, None, world_seed=world_seed)
    assert {v.template_id for v in variants} == {t.template_id for t in pool}
    env = SimEnvironment(world_seed=world_seed)
    for variant in variants:
        env.reset(variant)
        judged = env.instance
        assert (judged.template.id, judged.seed) == (variant.template_id, 2000)
        assert judged == instantiate(variant.template_id, variant.seed, world_seed)
        assert variant.instruction == judged.instruction
        assert (variant.params, variant.step_budget, variant.app) == (judged.params, judged.step_budget,
                                                                      judged.apps[0])
    old = {t.template_id: t for t in pool}
    assert sum(v.params != old[v.template_id].params for v in variants) > len(variants) // 2


def test_a_paraphrased_pool_task_gets_the_templates_own_wording_at_the_new_seed():
    inst = instantiate("clock.delete_alarm", 0)
    paraphrase = TaskSpec(inst.id, "Please get rid of that one alarm.", inst.step_budget, app="clock",
                          template_id=inst.template.id, params=dict(inst.params), seed=0)
    [variant] = fresh_variants([paraphrase], set(), 2, 1000, None, world_seed=0)
    assert variant.instruction == instantiate("clock.delete_alarm", 2000).instruction


def test_variants_whose_params_repeat_in_a_round_are_run_once():
    template = "settings.toggle_wifi"
    seeds = [s for s in range(40) if instantiate(template, 2000 + s).params == instantiate(template, 2000).params]
    assert len(seeds) > 1, "a template with few parameter values repeats them across seeds"
    inst = instantiate(template, 0)
    pool = [replace(TaskSpec(f"{template}#{s}", inst.instruction, inst.step_budget, template_id=template), seed=s)
            for s in seeds]
    assert len(fresh_variants(pool, set(), 2, 1000, None, world_seed=0)) == 1
