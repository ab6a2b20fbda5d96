"""The shipped instance config (deploy/dagster.yaml) on a real PostgreSQL server: a stage of the
graph materialized with runs, events and asset records stored there."""

from pathlib import Path

import dagster as dg
import psycopg2

from assets.base_policy import base_policy
from pipelines.resources import resources_for
from resources.experiment import DEFAULT_EXPERIMENT, EXPERIMENT_DIMENSION

REPO = Path(__file__).resolve().parents[2]


def test_the_policy_stage_materializes_with_the_instance_on_postgres(database, tmp_path, monkeypatch):
    # SQLAlchemy 2.1 reads a bare postgresql:// as psycopg 3; the project ships psycopg2
    monkeypatch.setenv("DAGSTER_POSTGRES_URL", database.replace("postgresql://", "postgresql+psycopg2://"))
    monkeypatch.setenv("MOBILEFORGE_STORAGE_ROOT", str(tmp_path / "storage"))
    home = tmp_path / "dagster_home"
    home.mkdir()
    (home / "dagster.yaml").write_text((REPO / "deploy" / "dagster.yaml").read_text())
    with dg.DagsterInstance.from_config(str(home)) as instance:
        assert type(instance.run_storage).__name__ == "PostgresRunStorage"
        instance.add_dynamic_partitions(EXPERIMENT_DIMENSION, [DEFAULT_EXPERIMENT])
        result = dg.materialize([base_policy], instance=instance, partition_key=DEFAULT_EXPERIMENT,
                                resources=resources_for("local"))
        assert result.success
        assert instance.get_latest_materialization_event(dg.AssetKey("base_policy")) is not None
        assert instance.get_concurrency_config().pool_config.default_pool_limit == 1
    with psycopg2.connect(database) as connection, connection.cursor() as cursor:
        cursor.execute("SELECT status FROM runs WHERE run_id = %s", (result.run_id,))
        assert cursor.fetchall() == [("SUCCESS",)]
        cursor.execute("SELECT count(*) FROM event_logs WHERE run_id = %s AND dagster_event_type = "
                       "'ASSET_MATERIALIZATION'", (result.run_id,))
        assert cursor.fetchone() == (1,)
