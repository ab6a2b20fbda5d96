"""The served simulator's fixtures (tests/support/adb_server.py) for the adb server's own tests."""

from tests.support.adb_server import client, limited_server, server  # noqa: F401  (fixtures)
