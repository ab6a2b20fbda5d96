"""The device pool behind AdbDeviceResource.make_env: one episode per device at a time (across
processes too), a health check before every hand-out, unhealthy devices skipped with a log line."""

import logging

import pytest

from ops.environments.infrastructure import NoDeviceFree
from resources.environment import AdbDeviceResource


def _resource(server, **overrides) -> AdbDeviceResource:
    return AdbDeviceResource(**{"adb_port": server.port, "simulator": True, "settle_s": 0.0, **overrides})


def test_each_device_takes_one_environment_at_a_time(server):
    resource = _resource(server)
    assert resource.packages()["contacts"] == "com.android.contacts"
    first, second = resource.make_env(), resource.make_env()
    assert (first.serial, second.serial) == ("phonesim-1", "phonesim-2")
    with pytest.raises(NoDeviceFree, match="2 in use by this process"):
        resource.make_env()
    del first  # an environment let go of frees its device
    assert resource.make_env().serial == "phonesim-1"


def test_a_device_held_by_another_process_is_not_handed_out(server):
    elsewhere = _resource(server)  # its own pool: its locks look like another process's
    held = elsewhere.make_env()
    assert held.serial == "phonesim-1"
    assert _resource(server).make_env().serial == "phonesim-2"
    elsewhere.pool().close()
    assert _resource(server).make_env().serial == "phonesim-1"


@pytest.mark.parametrize("fault, problem", [("screen_on", "screen off"), ("booted", "not booted")])
def test_an_unhealthy_device_is_skipped_with_a_log_line(server, caplog, fault, problem):
    setattr(server.device("phonesim-1"), fault, False)
    resource = _resource(server)
    with caplog.at_level(logging.WARNING, logger="ops.environments.device_pool"):
        env = resource.make_env()
    assert env.serial == "phonesim-2"
    assert f"adb device phonesim-1 skipped: {problem}" in caplog.text
    with pytest.raises(NoDeviceFree):
        resource.make_env()


def test_a_dropped_device_is_skipped_and_configured_serials_are_used_as_given(server, caplog):
    server.drop("phonesim-1")
    resource = _resource(server, serials=["phonesim-1", "phonesim-2"])
    with caplog.at_level(logging.WARNING, logger="ops.environments.device_pool"):
        assert resource.make_env().serial == "phonesim-2"
    assert "phonesim-1 skipped" in caplog.text and "not listed" in caplog.text


def test_the_resource_reads_size_and_versions_from_the_device(server):
    from phonesim.adb.commands import app_version

    resource = _resource(server)
    assert (resource.screen_width, resource.screen_height) == server.size
    versions = resource.app_versions()
    assert versions["contacts"] == app_version("contacts") and versions["contacts"].startswith("1.0.")
