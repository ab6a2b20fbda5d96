"""The app-update sensor: re-exploration of exactly the apps whose version changed, read from the
simulator's app modules or from a device's `dumpsys package`."""

import json

import dagster as dg
import pytest

from pipelines.sensors import app_updates
from resources.environment import AdbDeviceResource, SimulatorResource
from resources.experiment import APP_DIMENSION, DEFAULT_EXPERIMENT, EXPERIMENT_DIMENSION, sync_app_partitions
from tests.support.adb_server import server  # noqa: F401  (fixture: the served simulator)


@pytest.fixture
def instance():
    with dg.instance_for_test() as test_instance:
        test_instance.add_dynamic_partitions(EXPERIMENT_DIMENSION, [DEFAULT_EXPERIMENT])
        sync_app_partitions(test_instance, SimulatorResource().apps())  # the target apps, as a run registers them
        yield test_instance


def _tick(instance, environment, cursor):
    context = dg.build_sensor_context(instance=instance, cursor=cursor, resources={"simulator": environment})
    return app_updates(context)


def _requested_apps(result) -> list[str]:
    return [r.partition_key.keys_by_dimension[APP_DIMENSION] for r in result.run_requests]


@pytest.mark.parametrize("make_environment", ["simulator", "device"])
def test_only_the_changed_apps_are_explored_again(instance, server, make_environment):
    environment = SimulatorResource() if make_environment == "simulator" else \
        AdbDeviceResource(adb_port=server.port, simulator=True, settle_s=0.0)
    first = _tick(instance, environment, None)
    assert not first.run_requests and first.skip_reason  # the first reading sets the cursor only
    versions = json.loads(first.cursor)
    assert versions["contacts"].startswith("1.0.")
    old = {**versions, "contacts": "1.0.00000000", "clock": "1.0.11111111"}
    result = _tick(instance, environment, json.dumps(old))
    assert sorted(_requested_apps(result)) == ["clock", "contacts"]
    assert {r.partition_key.keys_by_dimension[EXPERIMENT_DIMENSION] for r in result.run_requests} == {DEFAULT_EXPERIMENT}
    assert json.loads(result.cursor) == versions
    unchanged = _tick(instance, environment, result.cursor)
    assert not unchanged.run_requests and "no target app changed" in unchanged.skip_reason.skip_message


def test_unreachable_devices_skip_the_tick_and_keep_the_cursor(instance, server):
    environment = AdbDeviceResource(adb_port=server.port, simulator=True)
    server.stop()
    result = _tick(instance, environment, json.dumps({"contacts": "1.0.0"}))
    assert isinstance(result, dg.SkipReason) and "unreadable" in result.skip_message
