"""Where a whole-graph `mobileforge run` spends its wall time, from the Dagster event log: per run, the
time from its creation to its first step (the run worker's start-up: process, imports, resources), each
step's own time (STEP_START to its end), the time from the last step to the run's end, and the gap
between runs of a stage (launch and polling).

Either reads an instance that has runs (`--home DAGSTER_HOME`), or first runs the tests' CI-size
experiment (tests/pipelines/test_end_to_end.FAST) on a temporary instance and store, as
`mobileforge run` does (wall seconds per stage printed too).

Run: python benchmarks/graph_run_profile.py [--home DIR] [--steps]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import dagster as dg

STEP_END = (dg.DagsterEventType.STEP_SUCCESS, dg.DagsterEventType.STEP_FAILURE)
RUN_END = (dg.DagsterEventType.RUN_SUCCESS, dg.DagsterEventType.RUN_FAILURE, dg.DagsterEventType.RUN_CANCELED)


def run_profile(instance: dg.DagsterInstance, run_id: str) -> dict:
    """One run's times: created, start-up (to its first STEP_START), steps, the tail after the last step."""
    record = instance.get_run_record_by_id(run_id)
    created = record.create_timestamp.timestamp()
    entries = [r.event_log_entry for r in instance.get_records_for_run(run_id, limit=100_000).records]
    starts, steps, ended = {}, {}, None
    for entry in entries:
        event = entry.dagster_event
        if event is None:
            continue
        if event.event_type == dg.DagsterEventType.STEP_START:
            starts[event.step_key] = entry.timestamp
        elif event.event_type in STEP_END and event.step_key in starts:
            steps[event.step_key] = (starts[event.step_key], entry.timestamp)
        elif event.event_type in RUN_END:
            ended = entry.timestamp
    first = min((start for start, _ in steps.values()), default=ended)
    last = max((end for _, end in steps.values()), default=first)
    return {"job": record.dagster_run.job_name, "created": created, "ended": ended,
            "startup": first - created, "tail": ended - last, "steps": {k: e - s for k, (s, e) in steps.items()},
            "partition": record.dagster_run.tags.get("dagster/partition", "")}


def print_profile(instance: dg.DagsterInstance, show_steps: bool) -> dict[str, float]:
    runs = sorted((run_profile(instance, r.run_id) for r in instance.get_runs()), key=lambda p: p["created"])
    totals: dict[str, float] = defaultdict(float)
    by_step: dict[str, float] = defaultdict(float)
    previous_end: dict[str, float] = {}
    for profile in runs:
        wall = profile["ended"] - profile["created"]
        stepping = sum(profile["steps"].values())
        gap = profile["created"] - previous_end.get(profile["job"], profile["created"])
        previous_end[profile["job"]] = max(previous_end.get(profile["job"], 0.0), profile["ended"])
        totals["runs"] += 1
        totals["run wall s"] += wall
        totals["start-up s (created -> first step)"] += profile["startup"]
        totals["tail s (last step -> run end)"] += profile["tail"]
        totals["step s (sum of steps)"] += stepping
        print(f"{profile['job']:12s} {profile['partition'][:28]:28s} wall {wall:6.1f}  start-up {profile['startup']:5.1f}"
              f"  steps {stepping:6.1f} ({len(profile['steps'])})  tail {profile['tail']:4.1f}  gap {max(gap, 0):4.1f}")
        for step, seconds in sorted(profile["steps"].items(), key=lambda kv: -kv[1]):
            by_step[step] += seconds
            if show_steps:
                print(f"    {step:48s} {seconds:6.1f}")
    print({k: round(v, 1) for k, v in totals.items()})
    print("slowest steps (s, summed over runs):",
          {k: round(v, 1) for k, v in sorted(by_step.items(), key=lambda kv: -kv[1])[:12]})
    return totals


def run_ci_experiment(work: Path) -> dg.DagsterInstance:
    os.environ["MOBILEFORGE_STORAGE_ROOT"] = str(work / "storage")
    from pipelines.definitions import ASSETS, CHECKS, STAGES
    from pipelines.resources import resources_for
    from pipelines.run.experiment import run_experiment
    from pipelines.run.observer import LineObserver
    from tests.pipelines.test_end_to_end import FAST

    (work / "dagster_home").mkdir()
    instance = dg.DagsterInstance.local_temp(str(work / "dagster_home"))
    defs = dg.Definitions(assets=ASSETS, asset_checks=CHECKS, resources=resources_for("local"), jobs=STAGES)
    started = time.perf_counter()
    timings = run_experiment("ci", FAST, instance=instance, observer=LineObserver(lambda line: None), defs=defs)
    print(f"whole graph {time.perf_counter() - started:.1f} s; stages:",
          {stage: round(seconds, 1) for stage, seconds in timings.items()})
    return instance


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--home", type=Path, help="a DAGSTER_HOME with runs (default: run the CI-size experiment)")
    parser.add_argument("--steps", action="store_true", help="print every step's time")
    args = parser.parse_args()
    if args.home is not None:
        print_profile(dg.DagsterInstance.from_config(str(args.home)), args.steps)
        return
    with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as work:  # a code server may still be writing
        with run_ci_experiment(Path(work)) as instance:
            print_profile(instance, args.steps)


if __name__ == "__main__":
    main()
