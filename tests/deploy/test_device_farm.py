"""A device farm: several adb servers (here two, as two hosts would serve them) behind one
AdbDeviceResource; every server's devices are handed out, a server that is down is skipped, and a
device dropped mid-episode is an infrastructure failure whose attempt reruns on the other host."""

import json
import logging

import pytest

from ops.data.attempt_store import ParquetAttemptStore, collect_tables
from ops.environments.infrastructure import DeviceLost, NoDeviceFree
from ops.judging.critic.programmatic import ProgrammaticCritic
from ops.rollout.engine import RolloutConfig, run_rollouts
from phonesim.adb import AdbServer
from resources.environment import AdbDeviceResource
from tests.ops.environments.test_infrastructure_failures import PullingPolicy, _task
from tests.support.postgres import free_port

SIZE = (540, 1200)


@pytest.fixture
def two_hosts():
    with AdbServer(devices=1, size=SIZE) as first, AdbServer(devices=1, size=SIZE) as second:
        yield first, second


def _farm(first, *others, **settings) -> AdbDeviceResource:
    return AdbDeviceResource(adb_port=first.port, adb_servers=[f"127.0.0.1:{port}" for port in others],
                             simulator=True, settle_s=0.0, retry_delay_s=0.0, command_timeout_s=5.0, **settings)


def test_the_devices_of_every_server_are_handed_out_once(two_hosts):
    first, second = two_hosts
    farm = _farm(first, second.port)
    assert farm.device_serials() == ["phonesim-1", f"127.0.0.1:{second.port}/phonesim-1"]
    envs = [farm.make_env(), farm.make_env()]
    assert sorted(env.config.port for env in envs) == sorted([first.port, second.port])
    with pytest.raises(NoDeviceFree):
        farm.make_env()


def test_a_server_that_is_down_is_skipped_and_all_down_is_an_infrastructure_failure(two_hosts, caplog):
    first, _ = two_hosts
    dead = free_port()
    with caplog.at_level(logging.WARNING, logger="resources.environment"):
        assert _farm(first, dead).device_serials() == ["phonesim-1"]
    assert f"adb server 127.0.0.1:{dead} skipped" in caplog.text
    with pytest.raises(DeviceLost, match="unreachable"):
        AdbDeviceResource(adb_port=free_port(), adb_servers=[f"127.0.0.1:{dead}"]).device_serials()
    with pytest.raises(ValueError, match="expected host:port"):
        AdbDeviceResource(adb_servers=["gpu-host"])


def test_a_device_dropped_on_one_host_reruns_its_attempt_on_the_other(two_hosts, tmp_path):
    first, second = two_hosts
    farm = _farm(first, second.port)
    store = ParquetAttemptStore.from_uri(str(tmp_path))
    policy = PullingPolicy(first, ["phonesim-1"])  # the first episode runs on the first host's device
    summary = run_rollouts([_task()], farm.make_env, policy, ProgrammaticCritic(), store,
                           RolloutConfig(attempts=1, max_parallel_tasks=4))
    assert (summary.infrastructure_failures, summary.attempts_run, summary.attempts_failed) == (1, 1, 0)
    attempts, steps, _ = collect_tables(store, policy.version, [_task()])
    assert attempts.height == 1 and steps.height == 4 and attempts["gt_success"][0] is not None
    (stored,) = store.summaries(policy.version, _task().task_id)  # it ended on the other host's device
    assert stored["final_state"] == json.dumps(second.device("phonesim-1").phone.snapshot(), separators=(",", ":"))
