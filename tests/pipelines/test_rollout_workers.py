"""The rollouts asset with its tasks split over worker processes: the greedy embedded policy's
attempts are the same as in one process, and the summary counts every shard."""

import dagster as dg
import polars as pl

from assets.base_policy import base_policy
from assets.rollouts import rollouts
from pipelines.resources import resources_for
from resources.experiment import register_experiment
from tests.pipelines.test_remedial_asset import stub_curriculum


def _rolled_out(tmp_path, monkeypatch, workers: int):
    monkeypatch.setenv("MOBILEFORGE_STORAGE_ROOT", str(tmp_path / f"storage{workers}"))
    instance = dg.DagsterInstance.ephemeral()
    register_experiment(instance, "shards")
    result = dg.materialize([stub_curriculum, base_policy, rollouts], instance=instance,
                            resources=resources_for("local"), partition_key="shards",
                            run_config={"ops": {"rollouts": {"config": {"attempts": 2, "workers": workers}}}})
    [event] = [e for e in result.get_asset_materialization_events()
               if e.asset_key == dg.AssetKey("rollout_attempts")]
    return result, event.materialization.metadata


def test_workers_roll_out_what_one_process_does(tmp_path, monkeypatch):
    monkeypatch.delenv("MOBILEFORGE_VIEWER_URL", raising=False)  # the viewer link names the default address
    one, one_meta = _rolled_out(tmp_path, monkeypatch, 1)
    two, two_meta = _rolled_out(tmp_path, monkeypatch, 2)
    for output in ("rollout_attempts", "rollout_steps", "critic_feedback"):
        a, b = (r.output_for_node("rollouts", output) for r in (one, two))
        keys = [c for c in ("task_id", "attempt", "step") if c in a.columns]
        drop = [c for c in a.columns if "latency" in c or c.endswith("_at")]  # wall-clock fields
        assert a.drop(drop).sort(keys).equals(b.drop(drop).sort(keys)), output
    assert two_meta["attempts_run"].value == one_meta["attempts_run"].value == 6  # 3 tasks x 2 attempts
    assert two_meta["policy_version"].value == one_meta["policy_version"].value
    assert one_meta["viewer"].value == "http://127.0.0.1:8765/e/shards/attempts?stage=rollouts"  # the viewer's page
    assert isinstance(one.output_for_node("rollouts", "rollout_attempts"), pl.DataFrame)
