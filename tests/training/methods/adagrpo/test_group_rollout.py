"""Groups of episodes for trajectory-level GRPO: G episodes of one task forked from one snapshot,
stepped together by the rollout engine and rewarded by the run's judge (here the simulator's)."""

from __future__ import annotations

import json

from ops.actions import Action, ActionType
from ops.agent.episode import SIMULATOR_JUDGE
from ops.environments.simulator import ForkingSimEnvironment, template_task_spec
from ops.judging.judges import EnvironmentJudge, VerdictCritic
from training.methods.adagrpo.group_rollout import episode_reward, run_groups
from phonesim.solver import solve
from phonesim.tasks import instantiate
from tests.support.scripted_policy import RandomClickPolicy

SMALL = (270, 600)


def _task(template="contacts.favorite", seed=5000):
    return template_task_spec(instantiate(template, seed), f"{template}#{seed}~g")


def test_a_groups_episodes_start_from_byte_identical_state():
    starts: dict = {}
    task = _task()
    envs = [ForkingSimEnvironment(starts, SMALL) for _ in range(4)]
    first = envs[0].reset(task)
    envs[0].step(Action(ActionType.CLICK, element=3))  # an env that moved on must not leak into the snapshot
    snapshots = set()
    for env in envs[1:]:
        obs = env.reset(task)
        snapshots.add(env.snapshot())
        assert obs.screenshot_png == first.screenshot_png
    assert len(snapshots) == 1 and snapshots == {starts[task.task_id][1]}
    # the group's snapshot is the template instance's initial state, byte for byte
    assert json.loads(starts[task.task_id][1]) == instantiate(task.template_id, task.seed).initial
    # a reused environment forks the snapshot again, not what it last held
    envs[0].reset(task)
    assert envs[0].snapshot() == starts[task.task_id][1]


def test_run_groups_gives_g_judged_episodes_per_task():
    starts: dict = {}
    tasks = [_task("contacts.favorite"), _task("notes.create")]
    groups, summary = run_groups(tasks, 3, RandomClickPolicy(seed=1), EnvironmentJudge(SIMULATOR_JUDGE),
                                 lambda: ForkingSimEnvironment(starts, SMALL), max_parallel=6)
    assert sorted(groups) == sorted(t.task_id for t in tasks)
    assert all(len(g) == 3 for g in groups.values()) and summary.attempts_run == 6
    for task_id, records in groups.items():
        assert {r.steps[0].state for r in records} == {starts[task_id][1]}
        for r in records:
            assert r.feedback.critic == SIMULATOR_JUDGE and r.feedback.decision == int(r.ground_truth.success)
            assert episode_reward(r, shaped=False) == float(r.ground_truth.success)


def test_rewards_outcome_and_shaped_on_a_solved_and_a_half_done_episode():
    starts: dict = {}
    task = _task("contacts.favorite")
    env = ForkingSimEnvironment(starts, SMALL)
    env.reset(task)
    plan = solve(env.phone, env.instance)

    def record_after(actions, terminate):
        from ops.agent.episode import AttemptRecord
        env.reset(task)
        for a in actions:
            env.step(a)
        if terminate:
            env.step(Action(ActionType.TERMINATE, status="success"))
        truth = env.ground_truth(task, None, terminate, len(actions))
        record = AttemptRecord(task=task, attempt=1, policy_version="p", hints=[], steps=[],
                               end_reason="terminated" if terminate else "budget", answer=None,
                               final_state=env.snapshot(), ground_truth=truth)
        record.feedback = VerdictCritic(EnvironmentJudge(SIMULATOR_JUDGE)).evaluate(record)
        return record

    solved = record_after(plan, terminate=True)
    assert episode_reward(solved, shaped=False) == 1.0
    assert episode_reward(solved, shaped=True) == 1.0
    nothing = record_after([], terminate=True)  # a false complete: no credit either way
    assert episode_reward(nothing, shaped=False) == 0.0
    assert episode_reward(nothing, shaped=True) == 0.0
