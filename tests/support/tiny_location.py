"""A code location of three one-asset jobs, for the tests of how runs are launched (tests/pipelines/
test_forked_runs.py, benchmarks/run_start.py): `quick` writes which process ran it, and the CPU time that
process has used, to $TINY_LOCATION_REPORT; `slow` waits; `forking` runs its step in a process started from a
forkserver (as the project's training stage does) and appends which process that was to $TINY_LOCATION_REPORT.steps.
Like the project's location, it declares what such a server preloads (`FORKSERVER_PRELOAD`)."""

import json
import os
import resource
import time
from pathlib import Path

import dagster as dg
import yaml

from pipelines.run_tags import FORKS_TAG

FORKSERVER_PRELOAD = [__name__]


@dg.asset
def worker_report() -> None:
    with open(os.environ["TINY_LOCATION_REPORT"], "w", encoding="utf-8") as report:
        usage = resource.getrusage(resource.RUSAGE_SELF)
        json.dump({"pid": os.getpid(), "parent": os.getppid(), "cpu_seconds": usage.ru_utime + usage.ru_stime}, report)


@dg.asset
def long_wait() -> None:
    time.sleep(120)


@dg.asset
def step_process_report() -> None:
    with open(os.environ["TINY_LOCATION_REPORT"] + ".steps", "a", encoding="utf-8") as report:
        report.write(json.dumps({"pid": os.getpid(), "parent": os.getppid()}) + "\n")


# in process: the asset runs in the run's worker itself, but for `forking`'s
FORKING = dg.define_asset_job("forking", [step_process_report], tags={FORKS_TAG: "true"},
                              executor_def=dg.multiprocess_executor.configured({"start_method": {"forkserver": {}}}))
defs = dg.Definitions(assets=[worker_report, long_wait, step_process_report], executor=dg.in_process_executor,
                      jobs=[dg.define_asset_job("quick", [worker_report]), dg.define_asset_job("slow", [long_wait]),
                            FORKING])


def write_workspace(path: Path, location_name: str) -> Path:
    """A workspace.yaml at `path` loading this module as the code location `location_name`."""
    path.write_text(yaml.safe_dump({"load_from": [{"python_module": {
        "module_name": __name__, "working_directory": str(Path(__file__).resolve().parents[2]),
        "location_name": location_name}}]}))
    return path
