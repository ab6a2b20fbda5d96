"""The instance a test's whole-graph run launches through: a temporary one with the settings `mobileforge run`
writes into its own $DAGSTER_HOME (pipelines.run.instance), so its runs start as a user's do (their workers
forked from the run's zygote, answered for by the project's launcher)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import dagster as dg
import yaml


@contextmanager
def project_instance(temp_dir: str) -> Iterator[dg.DagsterInstance]:
    # imported here, in the test: the `pipelines` package installs its warning filters on import, and pytest
    # drops filters installed while it collects
    from pipelines.run.instance import INSTANCE_SETTINGS

    with dg.instance_for_test(temp_dir=temp_dir, overrides=yaml.safe_load(INSTANCE_SETTINGS)) as instance:
        yield instance
