"""A throwaway PostgreSQL server for tests: Debian's `postgresql` binaries (scripts/setup.sh installs
them), a cluster made by `initdb` in a temporary directory, listening on a free loopback port.
PostgreSQL refuses to run as root, so as root the cluster belongs to the `postgres` user the package
creates and its commands run as that user."""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

ADMIN = "mobileforge"


def postgres_bindir() -> Path | None:
    """Where initdb / pg_ctl live: PATH first, then Debian's versioned directories (newest first)."""
    found = shutil.which("pg_ctl")
    if found:
        return Path(found).resolve().parent
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"), key=lambda p: int(p.split("/")[4]))
    return Path(candidates[-1]).parent if candidates else None


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@dataclass
class PostgresServer:
    bindir: Path
    directory: Path
    port: int
    user: str | None  # the OS user the server runs as when we are root

    def _run(self, *args: str) -> subprocess.CompletedProcess:
        command = [str(self.bindir / args[0]), *args[1:]]
        if self.user:
            command = ["runuser", "-u", self.user, "--", *command]
        result = subprocess.run(command, capture_output=True, text=True, timeout=120)
        if result.returncode:
            raise RuntimeError(f"{' '.join(command)} failed ({result.returncode}):\n{result.stdout}\n{result.stderr}")
        return result

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://{ADMIN}@127.0.0.1:{self.port}/{database}"

    def start(self) -> None:
        data = self.directory / "data"
        self._run("initdb", "-D", str(data), "-U", ADMIN, "--auth=trust", "--encoding=UTF8", "--no-sync")
        self._run("pg_ctl", "-D", str(data), "-l", str(self.directory / "server.log"), "-w", "-t", "60", "-o",
                  f"-p {self.port} -c listen_addresses=127.0.0.1 -k {self.directory} -c fsync=off "
                  "-c max_connections=100", "start")

    def stop(self) -> None:
        self._run("pg_ctl", "-D", str(self.directory / "data"), "-m", "immediate", "-w", "stop")

    def create_database(self, name: str) -> str:
        """A fresh database `name`; its URL."""
        import psycopg2

        connection = psycopg2.connect(self.url())
        connection.autocommit = True
        with connection.cursor() as cursor:
            cursor.execute(f'CREATE DATABASE "{name}"')
        connection.close()
        return self.url(name)


def start_postgres() -> PostgresServer:
    """A running server in a new temporary directory (RuntimeError naming what is missing)."""
    bindir = postgres_bindir()
    if bindir is None:
        raise RuntimeError("PostgreSQL is not installed: `apt-get install -y postgresql` (scripts/setup.sh does it)")
    user = None
    directory = Path(tempfile.mkdtemp(prefix="mobileforge-pg-"))
    if os.geteuid() == 0:
        user = "postgres"
        pwd.getpwnam(user)  # KeyError when the package did not create it
        os.chown(directory, pwd.getpwnam(user).pw_uid, pwd.getpwnam(user).pw_gid)
    server = PostgresServer(bindir, directory, free_port(), user)
    server.start()
    return server
