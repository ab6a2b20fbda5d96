"""Where the episode viewer (`mobileforge view`) shows an experiment's pages, so asset metadata can
link to them (a URL entry in the Dagster UI) and the viewer serves the same paths.

The viewer's address comes from $MOBILEFORGE_VIEWER_URL (e.g. `http://viewer.internal:8765` where it
runs beside a shared Dagster), else the address `mobileforge view` listens on by default.
"""

from __future__ import annotations

import os
from urllib.parse import quote, urlencode

import dagster as dg

VIEWER_URL_ENV = "MOBILEFORGE_VIEWER_URL"
DEFAULT_VIEWER_HOST = "127.0.0.1"
DEFAULT_VIEWER_PORT = 8765

# The experiment pages asset metadata links to (the viewer's routes use the same names).
ATTEMPTS_PAGE = "attempts"  # tasks and their attempts, filterable; rollouts and benchmark episodes
BENCHMARK_PAGE = "benchmark"  # per task, the base against each adapted policy
FORKS_PAGE = "forks"  # GRSD's fork pairs


def viewer_base_url() -> str:
    """The viewer's address: $MOBILEFORGE_VIEWER_URL, else `mobileforge view`'s default."""
    configured = os.environ.get(VIEWER_URL_ENV, "").strip()
    return configured.rstrip("/") if configured else f"http://{DEFAULT_VIEWER_HOST}:{DEFAULT_VIEWER_PORT}"


def experiment_path(experiment: str, page: str = "", /, **query: str) -> str:
    """The path of one of an experiment's viewer pages (`""`: its overview), query included."""
    path = f"/e/{quote(experiment, safe='')}/{page}"
    return f"{path}?{urlencode(query)}" if query else path


def viewer_link(experiment: str, page: str, /, **query: str) -> dg.MetadataValue:
    """A metadata entry linking to the viewer's page of this experiment."""
    return dg.MetadataValue.url(viewer_base_url() + experiment_path(experiment, page, **query))
