"""The run log lives outside Dagster's telemetry folder ($DAGSTER_HOME/logs), which dagster-webserver
moves to .logs_queue and posts to Dagster's telemetry server."""

from __future__ import annotations

from mobileforge.cli.run import run_log_path


def test_the_run_log_is_not_in_dagsters_telemetry_folder(monkeypatch, tmp_path):
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path))
    path = run_log_path("my-exp")
    assert path.parent == tmp_path / "mobileforge_logs"
    assert path.name.startswith("my-exp-") and path.suffix == ".log"
    assert tmp_path / "logs" not in path.parents
