"""Fixtures for the storage tests: a temp storage root, a Dagster instance with experiments."""

from __future__ import annotations

import dagster as dg
import pytest

from resources.experiment import register_experiment
from resources.storage import ParquetIOManager, StorageLocation


@pytest.fixture
def location(tmp_path) -> StorageLocation:
    return StorageLocation(root=str(tmp_path / "storage"))


@pytest.fixture
def io_manager(location) -> ParquetIOManager:
    return ParquetIOManager(location=location)


@pytest.fixture
def instance():
    with dg.DagsterInstance.ephemeral() as inst:
        for name in ("default", "ablation"):
            register_experiment(inst, name)
        yield inst
