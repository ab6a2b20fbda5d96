"""A real PostgreSQL server for the deployment tests, started once per session (tests/support/postgres)."""

import os
import shutil
import uuid

import pytest

from tests.support.postgres import start_postgres


@pytest.fixture(scope="session")
def postgres():
    try:
        server = start_postgres()
    except (RuntimeError, KeyError) as error:
        if os.environ.get("CI"):  # CI installs it (scripts/setup.sh): its absence there is a failure
            raise
        pytest.skip(f"no PostgreSQL here: {error}")
    yield server
    server.stop()
    shutil.rmtree(server.directory, ignore_errors=True)


@pytest.fixture
def database(postgres) -> str:
    """A fresh database on the session's server; its URL."""
    return postgres.create_database(f"t_{uuid.uuid4().hex[:12]}")
