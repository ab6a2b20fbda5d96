"""Step samples along the simulator solver's solutions (training.trainers.solver_steps)."""

from __future__ import annotations

import dataclasses

from ops.actions import Action, ActionType
from ops.evaluation.benchmark import held_out_tasks
from ops.remedial.corrective_teaching import ScriptedPolicy
from ops.environments.simulator import SimEnvironment
from ops.samples.step_samples import FINISH
from phonesim.solver import solve
from phonesim.tasks import instantiate
from training.trainers.solver_steps import solver_step_samples

TEMPLATES = ("clock.hybrid_alarm_off", "recipes.query_uses_ingredient")  # held out; an answer, a typed query


def _env() -> SimEnvironment:
    return SimEnvironment((540, 1200), 0)


def test_rows_are_the_solvers_steps_without_hints_and_replaying_their_targets_solves_the_task():
    tasks = [task for task, _ in held_out_tasks(1) if task.template_id in TEMPLATES]
    too_short = dataclasses.replace(tasks[0], task_id="short#0", step_budget=1)
    built = solver_step_samples([*tasks, too_short], "elements", _env)
    assert built.teaching.verified == len(TEMPLATES) == len(tasks)
    assert dict(built.teaching.failures) == {"over_budget": 1}  # counted, not raised; it gives no rows
    assert set(built.rows["task_id"]) == {t.task_id for t in tasks}
    voice = ScriptedPolicy("elements")
    for task in tasks:
        instance = instantiate(task.template_id, task.seed, 0)
        plan = [*solve(instance.make_phone(), instance), FINISH]
        rows = built.rows.filter(task_id=task.task_id).sort("step")
        assert rows["step"].to_list() == list(range(len(plan)))
        env, answer = _env(), None
        observation = env.reset(task)
        for row, solver_action in zip(rows.iter_rows(named=True), plan):
            target = Action.from_json(row["target_action"])
            assert target == voice.spoken(solver_action, observation)  # the solver's next action, as the policy says it
            assert row["has_hint"] is False and "Hint" not in row["prompt"]
            assert env.step(target).ok
            answer = target.text if target.type == ActionType.ANSWER else answer
            observation = env.observe()
        assert env.ground_truth(task, answer, True, len(plan)).success
