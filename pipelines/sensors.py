"""Sensors that are not automation conditions: `app_updates` re-explores the target apps whose
installed version changed."""

import json

import dagster as dg

from assets.exploration import exploration_traces
from resources.experiment import APP_DIMENSION, DEFAULT_EXPERIMENT, EXPERIMENT_DIMENSION
from ops.environments.infrastructure import InfrastructureError


@dg.sensor(asset_selection=dg.AssetSelection.assets(exploration_traces), minimum_interval_seconds=15 * 60,
           default_status=dg.DefaultSensorStatus.RUNNING,
           description="Reads each target app's version (device: `dumpsys package` versionName; simulator: the "
                       "app module's code version) and re-explores exactly the apps that changed, in the default "
                       "experiment; the curriculum follows (sensor `curriculum_refresh`).")
def app_updates(context: dg.SensorEvaluationContext, simulator: dg.ResourceParam) -> dg.SensorResult | dg.SkipReason:
    """RunRequests for the exploration partitions of the apps whose version differs from the
    cursor's (the versions read last time). The first reading only sets the cursor."""
    if not context.instance.has_dynamic_partition(EXPERIMENT_DIMENSION, DEFAULT_EXPERIMENT):
        return dg.SkipReason(f"experiment {DEFAULT_EXPERIMENT!r} does not exist yet: run `mobileforge run` once")
    try:
        versions = simulator.app_versions()
    except (InfrastructureError, RuntimeError, OSError) as exc:  # devices unreachable: try again next tick
        return dg.SkipReason(f"app versions unreadable: {exc}")
    cursor = json.dumps(versions, sort_keys=True)
    if context.cursor is None:
        return dg.SensorResult(skip_reason=dg.SkipReason(f"first reading of {len(versions)} app versions"),
                               cursor=cursor)
    previous = json.loads(context.cursor)
    targeted = set(context.instance.get_dynamic_partitions(APP_DIMENSION))
    changed = sorted(app for app, version in versions.items() if app in targeted and previous.get(app) != version)
    if not changed:
        return dg.SensorResult(skip_reason=dg.SkipReason("no target app changed version"), cursor=cursor)
    context.log.info(f"app_updates: {', '.join(f'{a} {previous.get(a)} -> {versions[a]}' for a in changed)}")
    return dg.SensorResult(cursor=cursor, run_requests=[
        dg.RunRequest(run_key=f"{app}@{versions[app]}", tags={"mobileforge/app_version": versions[app]},
                      partition_key=dg.MultiPartitionKey({EXPERIMENT_DIMENSION: DEFAULT_EXPERIMENT, APP_DIMENSION: app}))
        for app in changed])
