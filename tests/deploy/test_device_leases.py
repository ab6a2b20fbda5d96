"""Device leases on a real PostgreSQL server: two hosts (separate processes with different host names)
and three runs contend for two devices served as adb devices by the simulator; no device ever
serves two episodes at once (by the server-side record), and killing a holder frees its device."""

import os
import subprocess
import sys
import time
from pathlib import Path

import psycopg2
import pytest

from ops.environments.infrastructure import DeviceLost, NoDeviceFree
from ops.environments.postgres_leases import PostgresLeases
from phonesim.adb import AdbServer

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def adb_server():
    with AdbServer(devices=2, size=(540, 1200)) as served:
        yield served


def _query(dsn: str, sql: str, *args) -> list[tuple]:
    with psycopg2.connect(dsn) as connection, connection.cursor() as cursor:
        cursor.execute(sql, args)
        return cursor.fetchall() if cursor.description else []


def _contender(dsn: str, port: int, host: str, run: str, episodes: int, hang: bool = False) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(REPO), "LEASE_DSN": dsn}
    return subprocess.Popen([sys.executable, "-m", "tests.deploy.lease_contender", dsn, str(port), host, run,
                             str(episodes), *(["--hang"] if hang else [])], cwd=REPO, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


OVERLAPS = ("SELECT a.{id}, b.{id}, a.device FROM {table} a JOIN {table} b ON a.device = b.device "
            "AND a.{id} < b.{id} AND a.{start} < COALESCE(b.{end}, 'infinity') AND b.{start} < COALESCE(a.{end}, 'infinity')")


def test_three_runs_on_two_hosts_never_share_a_device_and_a_killed_holder_frees_its_own(database, adb_server):
    _query(database, "CREATE TABLE episodes (id serial PRIMARY KEY, device text, run text, host text, "
                     "started_at timestamptz, ended_at timestamptz)")
    hung = _contender(database, adb_server.port, "host-b", "hung-run", 0, hang=True)
    assert hung.stdout.readline().startswith("holding phonesim-")  # a run that takes a device and hangs
    runs = [_contender(database, adb_server.port, host, run, 4)
            for host, run in (("host-a", "run-1"), ("host-a", "run-2"), ("host-b", "run-3"))]
    time.sleep(1.0)
    hung.kill()  # its lease stops being renewed: the device is free once it expires (2 s)
    hung.wait()
    for run in runs:
        out, err = run.communicate(timeout=120)
        assert run.returncode == 0, err[-2000:]
        assert out.startswith("done on phonesim-")

    episodes = _query(database, "SELECT run, host, device, ended_at IS NOT NULL FROM episodes")
    assert len(episodes) == 12 and all(finished for *_, finished in episodes)
    assert {host for _, host, *_ in episodes} == {"host-a", "host-b"}
    assert {device for _, _, device, _ in episodes} == {"phonesim-1", "phonesim-2"}
    assert _query(database, OVERLAPS.format(table="episodes", id="id", start="started_at", end="ended_at")) == []
    assert _query(database, OVERLAPS.format(table="mobileforge_device_lease_log", id="lease_id",
                                            start="acquired_at", end="ended_at")) == []
    ends = _query(database, "SELECT host, end_reason FROM mobileforge_device_lease_log ORDER BY lease_id")
    assert ends.count(("host-b", "expired")) == 1  # the killed holder's, ended by the run that took its device
    assert sorted(reason for _, reason in ends) == ["expired", "released", "released", "released"]
    assert _query(database, "SELECT count(*) FROM mobileforge_device_leases") == [(0,)]


def test_a_lease_taken_over_after_a_hang_is_lost_to_its_first_holder(database):
    # the first holder hangs: it never renews
    first = PostgresLeases(database, ttl_s=0.6, host="a", heartbeat=False)
    second = PostgresLeases(database, ttl_s=30, host="b")
    try:
        assert first.try_acquire("dev") and not second.try_acquire("dev")
        time.sleep(0.8)
        assert second.try_acquire("dev")
        assert first.renew() == ["dev"] and first.lost("dev")
        from ops.environments.device_pool import LeasedEnvironment

        with pytest.raises(DeviceLost, match="another holder took the device"):
            LeasedEnvironment(object(), first, "dev").step(None)
        first.release("dev")  # its release must not free the new holder's lease
        assert not PostgresLeases(database, ttl_s=30, host="c").try_acquire("dev")
    finally:
        first.close()
        second.close()


def test_a_pool_holding_nothing_waits_for_a_device_and_then_gives_up(database, adb_server, monkeypatch):
    from resources.environment import AdbDeviceResource

    monkeypatch.setenv("LEASE_DSN", database)
    settings = dict(adb_port=adb_server.port, simulator=True, settle_s=0.0, lease_database_env="LEASE_DSN")
    holder = AdbDeviceResource(**settings, lease_host="a")
    held = [holder.make_env(), holder.make_env()]
    waiter = AdbDeviceResource(**settings, lease_host="b", device_wait_s=1.0)
    started = time.monotonic()
    with pytest.raises(NoDeviceFree):
        waiter.make_env()
    assert 1.0 <= time.monotonic() - started < 10
    holder.pool().close()
    assert waiter.make_env().serial in {env.serial for env in held}
    waiter.pool().close()


def test_an_unset_lease_database_variable_is_named(monkeypatch):
    from resources.environment import AdbDeviceResource

    monkeypatch.delenv("NO_SUCH_LEASE_DSN", raising=False)
    with pytest.raises(ValueError, match="NO_SUCH_LEASE_DSN is not set"):
        AdbDeviceResource(lease_database_env="NO_SUCH_LEASE_DSN").leases()
