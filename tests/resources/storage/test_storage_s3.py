"""The same IO manager, DuckDB catalog and ArtifactStore against an `s3://` root.

What this covers: a real S3-compatible HTTP server (moto's `ThreadedMotoServer`, bound to
127.0.0.1 on a free port) receiving real S3 REST requests from pyarrow's S3FileSystem through
`endpoint_override` — the code path used for AWS S3 or MinIO: bucket listing, PUTs
(single-request for these small objects), ranged GETs and deletes.
What it does not cover: AWS itself (IAM, real credentials, regions, large multipart uploads,
throttling); moto implements the S3 API, it is not AWS.
"""

import logging
import socket

import boto3
import dagster as dg
import pytest
from moto.server import ThreadedMotoServer

from resources.catalog import catalog_views, open_catalog
from resources.experiment import PartitionAddress
from resources.storage import ArtifactStore, ParquetIOManager, StorageLocation
from tests.resources.storage.graph import APPS, materialize_experiment

BUCKET = "mobileforge-test"
TASKS = dg.AssetKey("curriculum_tasks")


@pytest.fixture(scope="module")
def s3_endpoint():
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    endpoint = f"http://127.0.0.1:{port}"
    with pytest.MonkeyPatch.context() as env:
        # Dummy credentials for the local server; pyarrow and boto3 read them from the env.
        env.setenv("AWS_ACCESS_KEY_ID", "testing")
        env.setenv("AWS_SECRET_ACCESS_KEY", "testing")
        env.setenv("AWS_EC2_METADATA_DISABLED", "true")
        boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1").create_bucket(
            Bucket=BUCKET)
        yield endpoint
    server.stop()


@pytest.fixture
def s3_location(s3_endpoint, request):
    prefix = request.node.name.replace("[", "_").replace("]", "_")
    return StorageLocation(root=f"s3://{BUCKET}/{prefix}", s3_endpoint_override=s3_endpoint,
                           s3_region="us-east-1")


def test_io_manager_and_catalog_on_s3(instance, s3_location):
    io_manager = ParquetIOManager(location=s3_location)
    resources = {"io_manager": io_manager}
    materialize_experiment(instance, resources, "default", step_budget=5)
    materialize_experiment(instance, resources, "ablation", step_budget=9)
    materialize_experiment(instance, resources, "ablation", step_budget=11)  # overwrite

    default = io_manager.load(TASKS, PartitionAddress("default", "_"))
    ablation = io_manager.load(TASKS, PartitionAddress("ablation", "_"))
    assert default.get_column("step_budget").to_list() == [5] * len(APPS)
    assert ablation.get_column("step_budget").to_list() == [11] * len(APPS)
    manifest = io_manager.manifest(TASKS, PartitionAddress("ablation", "_"))
    assert manifest["lineage"]["config"]["step_budget"] == 11

    keys = [o["Key"] for o in boto3.client(
        "s3", endpoint_url=s3_location.s3_endpoint_override, region_name="us-east-1"
    ).list_objects_v2(Bucket=BUCKET, Prefix=s3_location.root_uri.split("/", 3)[3])["Contents"]]
    assert any(k.endswith("/ablation/curriculum_tasks/_/data.parquet") for k in keys)
    assert not [k for k in keys if ".tmp-" in k]

    con = open_catalog(s3_location)
    assert "curriculum_tasks" in catalog_views(con)
    budgets = con.execute("SELECT experiment, max(step_budget) FROM curriculum_tasks "
                          "GROUP BY ALL ORDER BY ALL").fetchall()
    assert budgets == [("ablation", 11), ("default", 5)]


def test_artifact_store_on_s3(s3_location, tmp_path):
    store = ArtifactStore(location=s3_location, cache_dir=str(tmp_path / "cache"))
    source = tmp_path / "ckpt"
    (source / "model").mkdir(parents=True)
    (source / "config.json").write_bytes(b"{}")
    (source / "model" / "weights.bin").write_bytes(bytes(range(256)) * 4)

    uri = store.put_dir(source, "default/checkpoints/run1")
    assert uri.startswith(f"s3://{BUCKET}/") and store.exists(uri)
    assert not store.exists("default/checkpoints/run2")
    out = store.get_dir(uri, tmp_path / "out")
    assert (out / "model" / "weights.bin").read_bytes() == bytes(range(256)) * 4
    local = store.local_path(uri)
    assert local.is_relative_to(tmp_path / "cache")
    assert (local / "config.json").read_bytes() == b"{}"


def test_local_cache_follows_a_replaced_s3_artifact(s3_location, tmp_path):
    store = ArtifactStore(location=s3_location, cache_dir=str(tmp_path / "cache"))
    for version in (b"v1", b"v2"):
        source = tmp_path / version.decode()
        source.mkdir()
        (source / "weights.bin").write_bytes(version)
        uri = store.put_dir(source, "default/checkpoints/latest")
        assert (store.local_path(uri) / "weights.bin").read_bytes() == version
