"""Schema asset checks run inside materializations; DuckDB sees every experiment, and leaves out
(naming it) a stored table that differs from its manifest's digest."""

import hashlib
import json
import warnings
from pathlib import Path

import dagster as dg
import pytest

from resources.catalog import DamagedTableWarning, DuckDBCatalog, catalog_views, open_catalog
from resources.experiment import PartitionAddress
from tests.resources.storage.graph import APPS, materialize_experiment


def _check_evaluations(result):
    return {(e.asset_key.to_user_string(), e.check_name): e
            for e in result.get_asset_check_evaluations()}


def test_schema_check_passes_on_valid_tasks(instance, io_manager):
    result = materialize_experiment(instance, {"io_manager": io_manager}, "default")
    evaluation = _check_evaluations(result)[("curriculum_tasks", "curriculum_tasks_schema")]
    assert evaluation.passed
    assert evaluation.metadata["problems"].value == []
    assert evaluation.metadata["experiment"].value == "default"


def test_schema_check_fails_and_lists_problems(instance, io_manager):
    result = materialize_experiment(instance, {"io_manager": io_manager}, "ablation",
                                    variation_type="made_up")
    evaluation = _check_evaluations(result)[("curriculum_tasks", "curriculum_tasks_schema")]
    assert not evaluation.passed
    assert evaluation.metadata["problems"].value == [
        "column 'variation_type': 2 value(s) outside ['simplification', 'parameter_change', "
        "'scenario_application', 'step_progression']: ['made_up']"]


def test_duckdb_views_per_experiment_and_union(instance, io_manager, location):
    resources = {"io_manager": io_manager}
    materialize_experiment(instance, resources, "default", steps=2, step_budget=5)
    materialize_experiment(instance, resources, "ablation", steps=3, step_budget=9)

    con = open_catalog(location.root_uri)
    assert catalog_views(con) == sorted([
        "ablation__curriculum_tasks", "ablation__exploration_transitions",
        "default__curriculum_tasks", "default__exploration_transitions",
        "curriculum_tasks", "exploration_transitions"])
    by_experiment = con.sql("SELECT experiment, app, count(*), min(octet_length("
                            "before_screenshot_png)) > 0 FROM exploration_transitions "
                            "GROUP BY ALL ORDER BY ALL").fetchall()
    assert by_experiment == [("ablation", app, 3, True) for app in sorted(APPS)] + [
        ("default", app, 2, True) for app in sorted(APPS)]
    budgets = con.sql("SELECT experiment, max(step_budget) FROM curriculum_tasks "
                      "GROUP BY ALL ORDER BY ALL").fetchall()
    assert budgets == [("ablation", 9), ("default", 5)]
    assert con.execute('SELECT count(*) FROM "default__curriculum_tasks"').fetchone() == (2,)


def test_catalog_of_an_empty_root_has_no_views(tmp_path):
    assert catalog_views(open_catalog(str(tmp_path / "nothing"))) == []


def test_catalog_resource_connects_to_the_same_root(instance, io_manager, location):
    materialize_experiment(instance, {"io_manager": io_manager}, "default")
    con = DuckDBCatalog(location=location).connect()
    assert con.execute("SELECT count(*) FROM curriculum_tasks").fetchone() == (len(APPS),)


def _damage(path: Path, how: str) -> None:
    data = bytearray(path.read_bytes())
    if how == "flip":
        data[len(data) // 2] ^= 0x01
    else:
        del data[len(data) // 2:]
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("how", ["flip", "truncate"])
def test_the_catalog_skips_a_damaged_table_naming_it_and_keeps_the_rest(instance, io_manager, location, how):
    resources = {"io_manager": io_manager}
    materialize_experiment(instance, resources, "default", steps=2, step_budget=5)
    materialize_experiment(instance, resources, "ablation", steps=3, step_budget=9)
    damaged = Path(io_manager.partition_dir(dg.AssetKey("exploration_transitions"),
                                            PartitionAddress("default", "notes"))) / "data.parquet"
    recorded = json.loads((damaged.parent / "_manifest.json").read_text())["sha256"]
    _damage(damaged, how)

    with pytest.warns(DamagedTableWarning) as caught:
        con = open_catalog(location.root_uri)
    (warning,) = caught
    message = str(warning.message)
    assert str(damaged) in message and hashlib.sha256(damaged.read_bytes()).hexdigest()[:12] in message
    assert recorded[:12] in message and "rematerialize exploration_transitions" in message
    # the damaged partition is left out; its sibling, the other experiment and the other assets stay queryable
    rows = con.sql("SELECT experiment, app, count(*) FROM exploration_transitions GROUP BY ALL ORDER BY ALL").fetchall()
    assert rows == [("ablation", "clock", 3), ("ablation", "notes", 3), ("default", "clock", 2)]
    assert con.execute('SELECT count(*) FROM "default__curriculum_tasks"').fetchone() == (2,)


def test_an_intact_catalog_opens_without_a_warning(instance, io_manager, location):
    materialize_experiment(instance, {"io_manager": io_manager}, "default")
    with warnings.catch_warnings():
        warnings.simplefilter("error", DamagedTableWarning)
        assert "curriculum_tasks" in catalog_views(open_catalog(location.root_uri))
