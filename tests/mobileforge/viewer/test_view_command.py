"""`mobileforge view` as a user starts it: a process serving the viewer of the store it is pointed at."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time

import httpx

STARTUP_S = 120  # imports on a busy 2-core machine


def test_mobileforge_view_serves_the_store_it_is_pointed_at(small_store):
    location, _ = small_store
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen([sys.executable, "-m", "mobileforge.cli.main", "view", "--root", location.root_uri,
                                "--port", str(port)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               env={**os.environ, "MOBILEFORGE_STORAGE_ROOT": "/nonexistent"})
    try:
        deadline, response = time.monotonic() + STARTUP_S, None
        while response is None and time.monotonic() < deadline and process.poll() is None:
            try:
                response = httpx.get(f"http://127.0.0.1:{port}/e/default/attempts", timeout=30)
            except httpx.TransportError:
                time.sleep(0.5)
        assert response is not None, f"not serving after {STARTUP_S} s (exit code {process.poll()})"
        assert response.status_code == 200 and "settings.connect_wifi#0" in response.text
        assert httpx.get(f"http://127.0.0.1:{port}/e/elsewhere/attempts", timeout=30).status_code == 404
    finally:
        process.send_signal(signal.SIGINT)
        output = process.communicate(timeout=30)[0]
    assert f"viewing {location.root_uri} at http://127.0.0.1:{port}/" in output
