"""The tags MobileForge puts on Dagster runs, read by the runner, its sweep of abandoned runs and the UI."""

EXPERIMENT_TAG = "mobileforge/experiment"  # the experiment a run belongs to (mobileforge run, or its partition)
HOST_TAG = "mobileforge/host"  # the host whose `mobileforge run` launched it
LOCK_RUN_TAG = "mobileforge/run"  # the run of `mobileforge run` (its lock owner id) that launched it
FORKED_TAG = "mobileforge/forked"  # its worker was forked from the zygote of the `mobileforge run` that launched it
FORKS_TAG = "mobileforge/forks"  # its steps start processes from a forkserver (a stage job's tag; forked runs share it)
