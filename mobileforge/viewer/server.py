"""The viewer served by uvicorn: in the foreground (`mobileforge view`) or in a background thread on a
free port (tests, benchmarks/viewer_pages.py)."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import uvicorn

from mobileforge.viewer.app import create_app
from mobileforge.viewer.store import ViewerStore
from resources.storage import StorageLocation

START_TIMEOUT_S = 30.0


def serve(location: StorageLocation, host: str, port: int) -> None:
    """Serve the viewer of `location` until interrupted."""
    uvicorn.run(create_app(ViewerStore(location)), host=host, port=port, log_level="warning")


@contextmanager
def serving_in_background(location: StorageLocation, host: str = "127.0.0.1") -> Iterator[str]:
    """The viewer of `location` on a free port of `host`, in a thread, for the `with` block; yields its URL."""
    with socket.socket() as probe:
        probe.bind((host, 0))
        port = probe.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(create_app(ViewerStore(location)), host=host, port=port,
                                           log_level="warning"))
    thread = threading.Thread(target=server.run, name="viewer", daemon=True)
    thread.start()
    deadline = time.monotonic() + START_TIMEOUT_S
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError(f"the viewer did not start on {host}:{port} within {START_TIMEOUT_S:.0f} s")
        time.sleep(0.02)
    try:
        yield f"http://{host}:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
