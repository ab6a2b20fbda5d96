"""The served simulator (tests/support/adb_server.py) the adb client side runs against."""

from tests.support.adb_server import server  # noqa: F401  (fixture)
