"""A code location of two one-asset jobs, for the tests of how runs are launched (tests/pipelines/
test_forked_runs.py, benchmarks/run_start.py): `quick` writes which process ran it, and the CPU time that
process has used, to $TINY_LOCATION_REPORT; `slow` waits."""

import json
import os
import resource
import time
from pathlib import Path

import dagster as dg
import yaml


@dg.asset
def worker_report() -> None:
    with open(os.environ["TINY_LOCATION_REPORT"], "w", encoding="utf-8") as report:
        usage = resource.getrusage(resource.RUSAGE_SELF)
        json.dump({"pid": os.getpid(), "parent": os.getppid(), "cpu_seconds": usage.ru_utime + usage.ru_stime}, report)


@dg.asset
def long_wait() -> None:
    time.sleep(120)


# in process: the asset runs in the run's worker itself
defs = dg.Definitions(assets=[worker_report, long_wait], executor=dg.in_process_executor,
                      jobs=[dg.define_asset_job("quick", [worker_report]), dg.define_asset_job("slow", [long_wait])])


def write_workspace(path: Path, location_name: str) -> Path:
    """A workspace.yaml at `path` loading this module as the code location `location_name`."""
    path.write_text(yaml.safe_dump({"load_from": [{"python_module": {
        "module_name": __name__, "working_directory": str(Path(__file__).resolve().parents[2]),
        "location_name": location_name}}]}))
    return path
