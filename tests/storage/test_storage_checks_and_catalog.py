"""Schema asset checks run inside materializations; DuckDB sees every experiment."""

from resources.catalog import DuckDBCatalog, catalog_views, open_catalog
from tests.storage.graph import APPS, materialize_experiment


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
