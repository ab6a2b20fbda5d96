import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ops.data.attempt_store import ParquetAttemptStore
from ops.judging.critic.programmatic import ProgrammaticCritic
from ops.agent.episode import TaskSpec
from ops.agent.policy_prompt import HINTS_HEADER
from ops.rollout.engine import RolloutAborted, RolloutConfig, run_rollouts
from ops.environments.simulator import SimEnvironment
from phonesim.tasks import instantiate
from tests.support.scripted_policy import RandomClickPolicy

TEMPLATES = ["settings.airplane_on", "contacts.favorite", "settings.connect_wifi"]
REPO = Path(__file__).resolve().parents[3]


def sim_tasks() -> list[TaskSpec]:
    out = []
    for tid in TEMPLATES:
        inst = instantiate(tid, 0)
        out.append(TaskSpec(task_id=inst.id, instruction=inst.instruction, step_budget=inst.step_budget,
                            app=inst.apps[0], template_id=tid, seed=0))
    return out


def small_env():
    return SimEnvironment(size=(270, 600))


def _run(tmp_path, **config):
    store = ParquetAttemptStore.from_uri(str(tmp_path))
    summary = run_rollouts(sim_tasks(), small_env, RandomClickPolicy(seed=3), ProgrammaticCritic(), store,
                           RolloutConfig(**config))
    return store, summary


def _prompts(store, task_id, attempt):
    return store.read_steps("random", task_id, attempt)["prompt"].to_list()


def _has_hints(prompt: str) -> bool:
    # the full prompt-5 block (qwen3vl / guiowl styles) or the compact block of the elements style
    return HINTS_HEADER in prompt or "Hints:\\n" in prompt


def test_hints_reach_later_attempts_and_switch_off(tmp_path):
    store, summary = _run(tmp_path / "on", attempts=3)
    assert summary.attempts_run == 9
    for task in sim_tasks():
        stored = store.summaries("random", task.task_id)
        assert [s["attempt"] for s in stored] == [1, 2, 3]
        assert all(not _has_hints(p) for p in _prompts(store, task.task_id, 1))
        # the random policy fails these tasks, so attempt 1 leaves a hint that attempt 2 must see
        assert stored[0]["feedback"]["hint"] is not None
        hint = stored[0]["feedback"]["hint"]["hint_summary"]
        for k in (2, 3):
            prompts = _prompts(store, task.task_id, k)
            assert all(_has_hints(p) and json.dumps(hint)[1:-1] in p for p in prompts)
        assert len(stored[2]["hints"]) == 2

    store_off, _ = _run(tmp_path / "off", attempts=3, use_hints=False)
    for task in sim_tasks():
        for k in (1, 2, 3):
            assert all(not _has_hints(p) for p in _prompts(store_off, task.task_id, k))


class BatchRecorder(RandomClickPolicy):
    """Random clicks, remembering how many episodes each batch held."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.batches: list[int] = []

    def act_batch(self, requests):
        self.batches.append(len(requests))
        return super().act_batch(requests)


def test_attempts_without_hints_run_side_by_side_and_resume_around_gaps(tmp_path):
    store = ParquetAttemptStore.from_uri(str(tmp_path))
    policy = BatchRecorder(seed=3, stop_prob=0.0)
    config = RolloutConfig(attempts=3, use_hints=False, max_parallel_tasks=9)
    run_rollouts(sim_tasks(), small_env, policy, ProgrammaticCritic(), store, config)
    assert policy.batches[0] == 9  # every attempt of every task in the first batch
    with_hints = BatchRecorder(seed=3, stop_prob=0.0)
    run_rollouts(sim_tasks(), small_env, with_hints, ProgrammaticCritic(), ParquetAttemptStore.from_uri(
        str(tmp_path / "hints")), RolloutConfig(attempts=3, max_parallel_tasks=9))
    assert max(with_hints.batches) == 3  # one attempt per task at a time
    # an interrupted run may have stored attempt 3 but not attempt 2: only attempt 2 is rerun
    task = sim_tasks()[0]
    task_dir = tmp_path / "random" / task.task_id.replace("#", "_")
    for path in task_dir.glob("attempt_2.*"):
        path.unlink()
    rerun = run_rollouts(sim_tasks(), small_env, RandomClickPolicy(seed=4), ProgrammaticCritic(), store, config)
    assert (rerun.attempts_resumed, rerun.attempts_run) == (8, 1)
    assert [s["attempt"] for s in store.summaries("random", task.task_id)] == [1, 2, 3]


def test_steps_record_everything_and_ground_truth_is_kept_apart(tmp_path):
    store, _ = _run(tmp_path, attempts=1)
    task = sim_tasks()[0]
    steps = store.read_steps("random", task.task_id, 1)
    row = steps.row(0, named=True)
    assert row["screenshot_png"].startswith(b"\x89PNG")
    assert json.loads(row["elements"]) and json.loads(row["action"])["type"] in ("click", "terminate")
    assert row["state"] and row["prompt"] and row["raw_output"]
    summary = store.summaries("random", task.task_id)[0]
    assert summary["ground_truth"]["success"] is False
    assert "gt" not in row["prompt"] and "success" not in json.dumps(json.loads(row["prompt"])[-1])


def test_policy_that_keeps_failing_aborts_with_stored_work_kept(tmp_path):
    class Flaky(RandomClickPolicy):
        calls = 0

        def act_batch(self, requests):
            Flaky.calls += 1
            if Flaky.calls > 6:
                raise ConnectionError("endpoint went away")
            return super().act_batch(requests)

    store = ParquetAttemptStore.from_uri(str(tmp_path))
    with pytest.raises(RolloutAborted, match="endpoint went away"):
        run_rollouts(sim_tasks(), small_env, Flaky(seed=0, stop_prob=0.5), ProgrammaticCritic(), store,
                     RolloutConfig(attempts=3, max_parallel_tasks=1))
    done = sum(len(store.summaries("random", t.task_id)) for t in sim_tasks())
    assert done >= 1
    rerun = run_rollouts(sim_tasks(), small_env, RandomClickPolicy(seed=0, stop_prob=0.5),
                         ProgrammaticCritic(), store, RolloutConfig(attempts=3, max_parallel_tasks=1))
    assert rerun.attempts_resumed == done and rerun.attempts_run == 9 - done


def test_killed_run_resumes_losing_at_most_in_flight_attempts(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(REPO))
    child = subprocess.Popen([sys.executable, "-m", "tests.ops.rollout.run_rollouts_child", str(tmp_path)],
                             cwd=REPO, env=env)
    store = ParquetAttemptStore.from_uri(str(tmp_path))
    deadline = time.time() + 120
    done = 0
    while time.time() < deadline and child.poll() is None:
        done = sum(len(store.summaries("random", t.task_id)) for t in sim_tasks())
        if done >= 2:
            break
        time.sleep(0.05)
    assert child.poll() is None, "the child finished before it could be killed"
    child.send_signal(signal.SIGKILL)
    child.wait()
    before = {t.task_id: len(store.summaries("random", t.task_id)) for t in sim_tasks()}
    stored_before = sum(before.values())
    assert 2 <= stored_before < 9

    rerun = run_rollouts(sim_tasks(), small_env, RandomClickPolicy(seed=1), ProgrammaticCritic(), store,
                         RolloutConfig(attempts=3, max_parallel_tasks=2))
    assert rerun.attempts_resumed == stored_before  # nothing finished was lost
    assert rerun.attempts_run == 9 - stored_before  # nothing is run twice
    for t in sim_tasks():
        assert [s["attempt"] for s in store.summaries("random", t.task_id)] == [1, 2, 3]
        files = sorted(p.name for p in (tmp_path / "random" / t.task_id.replace("#", "_")).iterdir())
        assert files == [f"attempt_{k}.{ext}" for k in (1, 2, 3) for ext in ("json", "parquet", "png")]
