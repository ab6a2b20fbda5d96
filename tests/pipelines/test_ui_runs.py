"""A run launched from the UI gets the experiment tag `mobileforge run` puts on its runs."""

import dagster as dg

from pipelines.run_tags import EXPERIMENT_TAG
from pipelines.ui_runs import experiment_of_run, experiment_tag_of_ui_runs


def test_the_experiment_is_read_from_either_partitioning():
    assert experiment_of_run({"dagster/partition/experiment": "ci", "dagster/partition/app": "clock",
                              "dagster/partition": "clock|ci"}) == "ci"
    assert experiment_of_run({"dagster/partition": "ablation-1"}) == "ablation-1"
    assert experiment_of_run({}) is None


def _sensor_on(instance: dg.DagsterInstance, job: dg.JobDefinition, tags: dict[str, str]) -> dg.DagsterRun:
    run = instance.create_run_for_job(job, tags=tags)
    event = dg.DagsterEvent(event_type_value=dg.DagsterEventType.RUN_START.value, job_name=job.name)
    context = dg.build_run_status_sensor_context(sensor_name="experiment_tag_of_ui_runs", dagster_instance=instance,
                                                 dagster_run=run, dagster_event=event)
    experiment_tag_of_ui_runs(context)
    return instance.get_run_by_id(run.run_id)


def test_a_run_of_dagsters_asset_job_is_tagged_with_its_partitions_experiment():
    @dg.asset
    def something() -> int:
        return 1

    job = dg.define_asset_job("__ASSET_JOB", [something]).resolve(asset_graph=dg.Definitions(assets=[something])
                                                                  .resolve_asset_graph())
    with dg.instance_for_test() as instance:
        assert _sensor_on(instance, job, {"dagster/partition": "wizard"}).tags[EXPERIMENT_TAG] == "wizard"
        assert EXPERIMENT_TAG not in _sensor_on(instance, job, {}).tags  # base_policy: no experiment
        kept = _sensor_on(instance, job, {"dagster/partition": "x", EXPERIMENT_TAG: "y"})
        assert kept.tags[EXPERIMENT_TAG] == "y"
