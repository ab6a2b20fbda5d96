"""A device pulled mid-episode: the attempt is counted as an infrastructure failure, not a policy
failure, and runs again on another device; the stored tables hold one complete, judged attempt."""

import json

import pytest

from ops.data.attempt_store import ParquetAttemptStore, collect_tables
from ops.judging.critic.programmatic import ProgrammaticCritic
from ops.agent.episode import TaskSpec
from ops.rollout.engine import RolloutAborted, RolloutConfig, run_rollouts
from phonesim import instantiate
from resources.environment import AdbDeviceResource
from tests.support.scripted_policy import RandomClickPolicy


class PullingPolicy(RandomClickPolicy):
    """Random clicks; before answering its `pull_at`-th batch, the devices in `pull` are pulled."""

    def __init__(self, server, pull: list[str], pull_at: int = 2):
        super().__init__(seed=1, stop_prob=0.0)
        self.server, self.pull, self.pull_at, self.batches = server, pull, pull_at, 0

    def act_batch(self, requests):
        self.batches += 1
        if self.batches == self.pull_at:
            for serial in self.pull:
                self.server.drop(serial)
        return super().act_batch(requests)


def _task() -> TaskSpec:
    instance = instantiate("contacts.favorite", 0)
    return TaskSpec(task_id=instance.id, instruction=instance.instruction, step_budget=4, app=instance.apps[0],
                    template_id=instance.template.id, params=dict(instance.params), seed=0)


def _run(server, tmp_path, pull: list[str]):
    resource = AdbDeviceResource(adb_port=server.port, simulator=True, settle_s=0.0, retry_delay_s=0.0,
                                 command_timeout_s=5.0)
    store = ParquetAttemptStore.from_uri(str(tmp_path))
    policy = PullingPolicy(server, pull)
    summary = run_rollouts([_task()], resource.make_env, policy, ProgrammaticCritic(), store,
                           RolloutConfig(attempts=1, max_parallel_tasks=4))
    return summary, store, policy


def test_a_pulled_device_is_an_infrastructure_failure_and_the_attempt_reruns_elsewhere(server, tmp_path):
    summary, store, policy = _run(server, tmp_path, ["phonesim-1"])  # the first episode runs on phonesim-1
    assert summary.infrastructure_failures == 1
    assert (summary.attempts_run, summary.attempts_failed) == (1, 0)  # not counted against the policy
    assert "phonesim-1" in summary.errors[0] and "run again" in summary.errors[0]
    attempts, steps, feedback = collect_tables(store, policy.version, [_task()])
    assert attempts.height == 1 and feedback.height == 1
    (attempt,) = attempts.iter_rows(named=True)
    assert attempt["n_steps"] == 4 and steps.height == 4  # the whole rerun, none of the lost steps
    assert attempt["gt_success"] is not None  # judged on the device it reran on
    (stored,) = store.summaries(policy.version, _task().task_id)
    rerun_phone = server.device("phonesim-2").phone  # the attempt ended on the other device
    assert stored["final_state"] == json.dumps(rerun_phone.snapshot(), separators=(",", ":"))


def test_with_every_device_gone_the_rollout_stops_with_a_clear_error(server, tmp_path):
    with pytest.raises(RolloutAborted, match="no environment to run on: no free, healthy adb device"):
        _run(server, tmp_path, ["phonesim-1", "phonesim-2"])
