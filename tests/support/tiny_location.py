"""A code location of two one-asset jobs, for the tests of how runs are launched (tests/pipelines/
test_forked_runs.py, benchmarks/run_start.py): `quick` writes which process ran it, and the CPU time that
process has used, to $TINY_LOCATION_REPORT; `slow` waits."""

import json
import os
import resource
import time

import dagster as dg


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
