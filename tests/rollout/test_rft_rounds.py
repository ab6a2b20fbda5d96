from ops.episode import TaskSpec
from ops.rft_rounds import fresh_variants, solved_templates


def _pool():
    return [TaskSpec("b#0", "b", 5, template_id="b", seed=0), TaskSpec("nav:x", "open x", 3),
            TaskSpec("a#0", "a", 5, template_id="a", seed=0), TaskSpec("a#1", "a", 5, template_id="a", seed=1),
            TaskSpec("c#0", "c", 5, template_id="c", seed=0)]


def test_solved_templates_come_first_as_new_variants_without_navigation_tasks():
    pool = _pool()
    tasks = fresh_variants(pool, {"a"}, 2, 1000, None)
    assert [t.task_id for t in tasks] == ["a#0~r2", "a#1~r2", "b#0~r2", "c#0~r2"]
    assert [t.seed for t in tasks] == [2000, 2001, 2000, 2000]
    assert [t.task_id for t in fresh_variants(pool, {"a"}, 3, 1000, 3)] == ["a#0~r3", "a#1~r3", "b#0~r3"]
    assert [t.task_id for t in fresh_variants(pool, set(), 2, 1000, 2)] == ["b#0~r2", "a#0~r2"]


def test_solved_templates_read_the_previous_rounds_task_ids():
    round2 = fresh_variants(_pool(), set(), 2, 1000, None)
    assert solved_templates(round2, {"c#0~r2", "nav:x"}) == {"c"}
    assert solved_templates(_pool(), {"nav:x", "a#1"}) == {"a"}
