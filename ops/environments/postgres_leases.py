"""Device leases that hold across hosts, in PostgreSQL: one episode per device at a time however
many runs and hosts ask.

A lease is a row of `mobileforge_device_leases` (primary key: the device), written in one
transaction that either inserts it or takes over a row whose `expires_at` has passed; every time
is the server's `clock_timestamp()`, so the hosts' clocks never matter. A heartbeat thread renews
the holder's leases every third of their time to live; a holder that is killed or hangs stops
renewing, and its device is free again once its lease expires — nothing waits for it forever. A
renewal matches the lease's own id, so a holder whose lease was taken over learns it (`lost`) and
the device pool stops using the device (fencing). `mobileforge_device_lease_log` keeps one row per
lease (who, which host, from when to when, released or expired): the record the tests check for
overlaps.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import uuid

import psycopg2

log = logging.getLogger(__name__)

SCHEMA = """
CREATE TABLE IF NOT EXISTS mobileforge_device_lease_log (
    lease_id bigserial PRIMARY KEY,
    device text NOT NULL,
    holder text NOT NULL,
    host text NOT NULL,
    acquired_at timestamptz NOT NULL,
    ended_at timestamptz,
    end_reason text CHECK (end_reason IN ('released', 'expired'))
);
CREATE TABLE IF NOT EXISTS mobileforge_device_leases (
    device text PRIMARY KEY,
    lease_id bigint NOT NULL REFERENCES mobileforge_device_lease_log (lease_id),
    holder text NOT NULL,
    host text NOT NULL,
    expires_at timestamptz NOT NULL
);
"""
_SCHEMA_LOCK = 72_517_203  # an advisory lock id: two first users must not both create the tables


class PostgresLeases:
    """The leases of one holder (a process), in the database at `dsn` (a libpq URL or key=value string)."""

    def __init__(self, dsn: str, *, ttl_s: float = 30.0, host: str | None = None, heartbeat: bool = True) -> None:
        """`heartbeat=False` leaves renewal to the caller (`renew`): a holder that never renews is one that
        hangs, whose leases expire after `ttl_s`."""
        if ttl_s <= 0:
            raise ValueError(f"lease time to live must be positive, got {ttl_s}")
        self.ttl_s = ttl_s
        self.host = host or socket.gethostname()
        self.holder = f"{self.host}/{os.getpid()}/{uuid.uuid4().hex[:8]}"
        self._dsn = dsn
        self._connection = psycopg2.connect(dsn, connect_timeout=10, application_name="mobileforge-leases")
        self._connection.autocommit = False
        self._lock = threading.Lock()  # one connection, used by the caller and the heartbeat in turn
        self._held: dict[str, int] = {}  # device -> lease id
        self._lost: set[str] = set()
        with self._lock, self._connection, self._connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK,))
            cursor.execute(SCHEMA)
        self._stop = threading.Event()
        self._heartbeat = threading.Thread(target=self._beat, name="device-lease-heartbeat", daemon=True)
        if heartbeat:
            self._heartbeat.start()

    def try_acquire(self, device: str) -> bool:
        with self._lock, self._connection, self._connection.cursor() as cursor:
            cursor.execute("SELECT lease_id, expires_at < clock_timestamp() FROM mobileforge_device_leases "
                           "WHERE device = %s FOR UPDATE", (device,))
            current = cursor.fetchone()
            if current is not None and not current[1]:
                return False
            cursor.execute("INSERT INTO mobileforge_device_lease_log (device, holder, host, acquired_at) "
                           "VALUES (%s, %s, %s, clock_timestamp()) RETURNING lease_id",
                           (device, self.holder, self.host))
            lease_id = cursor.fetchone()[0]
            if current is None:
                # two holders inserting at once: the second waits for the first's commit and inserts nothing
                cursor.execute("INSERT INTO mobileforge_device_leases (device, lease_id, holder, host, expires_at) "
                               "VALUES (%s, %s, %s, %s, clock_timestamp() + make_interval(secs => %s)) "
                               "ON CONFLICT (device) DO NOTHING", (device, lease_id, self.holder, self.host, self.ttl_s))
                if cursor.rowcount == 0:
                    self._connection.rollback()
                    return False
            else:  # the holder stopped renewing: its lease ended when it expired
                expired = current[0]
                cursor.execute("UPDATE mobileforge_device_lease_log AS entry SET ended_at = lease.expires_at, "
                               "end_reason = 'expired' FROM mobileforge_device_leases AS lease "
                               "WHERE entry.lease_id = %s AND lease.device = %s", (expired, device))
                cursor.execute("UPDATE mobileforge_device_leases SET lease_id = %s, holder = %s, host = %s, "
                               "expires_at = clock_timestamp() + make_interval(secs => %s) WHERE device = %s",
                               (lease_id, self.holder, self.host, self.ttl_s, device))
                log.warning("device %s: lease %s expired without a release; taken over", device, expired)
        self._held[device] = lease_id
        self._lost.discard(device)
        return True

    def release(self, device: str) -> None:
        lease_id = self._held.pop(device, None)
        if lease_id is None:
            return
        with self._lock, self._connection, self._connection.cursor() as cursor:
            cursor.execute("DELETE FROM mobileforge_device_leases WHERE device = %s AND lease_id = %s",
                           (device, lease_id))
            if cursor.rowcount:  # a lease taken over was ended as expired by its new holder
                cursor.execute("UPDATE mobileforge_device_lease_log SET ended_at = clock_timestamp(), "
                               "end_reason = 'released' WHERE lease_id = %s", (lease_id,))

    def lost(self, device: str) -> bool:
        return device in self._lost

    def renew(self) -> list[str]:
        """Extend every held lease by its time to live; the devices whose lease was taken over."""
        with self._lock:
            held = dict(self._held)
            if not held:
                return []
            with self._connection, self._connection.cursor() as cursor:
                cursor.execute("UPDATE mobileforge_device_leases SET expires_at = clock_timestamp() + "
                               "make_interval(secs => %s) WHERE lease_id = ANY(%s) RETURNING device",
                               (self.ttl_s, list(held.values())))
                kept = {row[0] for row in cursor.fetchall()}
            gone = sorted(set(held) - kept)
            for device in gone:
                self._held.pop(device, None)
                self._lost.add(device)
                log.error("device %s: lease lost (it expired and another holder took it); episodes on it stop", device)
            return gone

    def _beat(self) -> None:
        while not self._stop.wait(self.ttl_s / 3):
            try:
                self.renew()
            except psycopg2.Error as error:  # the next beat tries again; the lease expires if they all fail
                log.warning("device lease heartbeat failed: %s", error)
                with self._lock:
                    self._reconnect()

    def _reconnect(self) -> None:
        try:
            self._connection.close()
            self._connection = psycopg2.connect(self._dsn, connect_timeout=10, application_name="mobileforge-leases")
        except psycopg2.Error as error:
            log.warning("device lease database unreachable: %s", error)

    def close(self) -> None:
        self._stop.set()
        if self._heartbeat.is_alive():
            self._heartbeat.join(timeout=5)
        for device in list(self._held):
            self.release(device)
        self._connection.close()
