"""`mobileforge view`: the episode viewer (mobileforge.viewer) over a storage root, served by uvicorn
until interrupted."""

from __future__ import annotations

import os

import click

from resources.viewer_links import DEFAULT_VIEWER_HOST, DEFAULT_VIEWER_PORT


@click.command()
@click.option("--root", default=None, help="Storage root: a directory or s3://bucket/prefix. Default: "
              "$MOBILEFORGE_STORAGE_ROOT, else the one `mobileforge run` writes to.")
@click.option("--s3-endpoint", default=None, help="S3-compatible endpoint (MinIO, ...); default $MOBILEFORGE_S3_ENDPOINT.")
@click.option("--s3-region", default=None, help="S3 region; default the SDK's.")
@click.option("--host", default=DEFAULT_VIEWER_HOST, show_default=True, help="Address to listen on.")
@click.option("--port", default=DEFAULT_VIEWER_PORT, show_default=True, type=click.IntRange(1, 65535),
              help="Port. Asset metadata links to http://127.0.0.1:8765 unless MOBILEFORGE_VIEWER_URL says otherwise.")
def view(root: str | None, s3_endpoint: str | None, s3_region: str | None, host: str, port: int) -> None:
    """Open the viewer of stored runs: tasks and attempts, episodes step by step, the benchmark."""
    from mobileforge.viewer.attempts import template_facts
    from mobileforge.viewer.server import serve
    from resources.storage import StorageLocation

    location = StorageLocation(root=root or os.environ.get("MOBILEFORGE_STORAGE_ROOT") or None,
                               s3_endpoint_override=s3_endpoint or os.environ.get("MOBILEFORGE_S3_ENDPOINT") or None,
                               s3_region=s3_region)
    template_facts()  # the simulator's template registry, loaded once before the first page asks for it
    click.echo(f"viewing {location.root_uri} at http://{host}:{port}/ (Ctrl-C stops)")
    serve(location, host, port)
