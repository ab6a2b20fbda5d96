"""The viewer over an `s3://` store (moto's S3 server, as the storage tests use) shows what it shows
over the same store on a local disk: the same pages, the same screenshots, the same 404s."""

from __future__ import annotations

import re

import pyarrow.fs as pafs
import pytest
from starlette.testclient import TestClient

from mobileforge.viewer.app import create_app
from mobileforge.viewer.store import ViewerStore
from resources.storage import StorageLocation
from tests.resources.storage.test_storage_s3 import BUCKET, s3_endpoint  # noqa: F401  (fixture)
from tests.mobileforge.viewer.small_store import ROLLOUT_VERSION

WIFI = "settings.connect_wifi#0"
PAGES = [
    ("/", {}),
    ("/e/default/", {}),
    ("/e/default/attempts", {}),
    ("/e/default/attempts", {"stage": "benchmark", "outcome": "success"}),
    ("/e/default/task", {"task": WIFI}),
    ("/e/default/episode", {"stage": "rollouts", "policy": ROLLOUT_VERSION, "task": WIFI, "attempt": "2"}),
    ("/e/default/benchmark", {}),
    ("/e/default/compare", {"task": "clock.alarm_on#0", "policy": "rft"}),
    ("/e/default/forks", {}),
    ("/e/default/fork", {"task": WIFI, "success": "2", "failed": "1"}),
    ("/e/device/episode", {"stage": "rollouts", "policy": ROLLOUT_VERSION, "task": WIFI, "attempt": "1"}),
    ("/e/default/task", {"task": "nothing"}),
]


@pytest.fixture(scope="module")
def clients(small_store, s3_endpoint):  # noqa: F811  (the fixture imported above)
    local, _ = small_store
    s3 = StorageLocation(root=f"s3://{BUCKET}/viewer", s3_endpoint_override=s3_endpoint, s3_region="us-east-1")
    s3_fs, s3_root = s3.filesystem()
    local_fs, local_root = local.filesystem()
    pafs.copy_files(local_root, s3_root, source_filesystem=local_fs, destination_filesystem=s3_fs)
    return TestClient(create_app(ViewerStore(local))), TestClient(create_app(ViewerStore(s3))), local, s3


def test_every_page_reads_an_s3_store_as_it_reads_a_local_one(clients):
    local_client, s3_client, local, s3 = clients
    for path, params in PAGES:
        on_disk, on_s3 = local_client.get(path, params=params), s3_client.get(path, params=params)
        assert on_s3.status_code == on_disk.status_code and on_disk.status_code in (200, 404), (path, on_s3.text[-300:])
        # the pages name their store; everything else is the same
        assert on_s3.text.replace(s3.root_uri, "ROOT") == on_disk.text.replace(local.root_uri, "ROOT"), path


def test_screenshots_come_from_the_s3_store(clients):
    local_client, s3_client, _, _ = clients
    episode = s3_client.get("/e/default/episode", params=PAGES[5][1]).text
    urls = re.findall(r'src="(/e/default/screenshot\?[^"]+)"', episode)
    assert len(urls) >= 3
    for url in urls:
        url = url.replace("&amp;", "&")
        on_s3 = s3_client.get(url)
        assert on_s3.headers["content-type"] == "image/png" and on_s3.content == local_client.get(url).content
