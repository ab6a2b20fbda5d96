"""A served simulator on a free localhost port, and adbutils clients for it."""

import adbutils
import pytest

from phonesim.adb import AdbServer

SIZE = (540, 1200)  # half the default: the same layout, cheaper screenshots


@pytest.fixture
def server():
    with AdbServer(devices=2, size=SIZE) as served:
        yield served


@pytest.fixture
def client(server):
    return adbutils.AdbClient(host="127.0.0.1", port=server.port)
