"""What starting a run costs: a run's worker spawned by Dagster's code server against one forked from the
zygote `mobileforge run` opens (pipelines.run.forked_runs), measured in the same process, interleaved.

Each round launches one run of a one-asset job (tests/support/tiny_location.py, in-process executor)
through `code_location_runner` on a temporary instance: once with Dagster's default launcher (the code
server spawns the worker), once with the project's launcher (the worker is forked). Per way: the wall
time from launch to the run's success, and the CPU time the worker process used, read from the worker's
own report (its `resource.getrusage` at the end of its one asset, so it covers its start-up and the run
up to there). Prints the medians and their ratio.

Run: python benchmarks/run_start.py [--rounds 8]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import dagster as dg  # noqa: E402

from pipelines.run.launcher import FINISHED, LOCATION, code_location_runner  # noqa: E402
from pipelines.start_point import StagePart  # noqa: E402
from tests.support import tiny_location  # noqa: E402
from tests.support.instances import project_instance  # noqa: E402


def one_run(instance: dg.DagsterInstance, workspace: Path, report: Path) -> tuple[float, float]:
    """(wall s from launch to success, the worker's CPU s) of one run of `quick`."""
    with code_location_runner(instance, workspace) as runner:
        started = time.perf_counter()
        run_id = runner.launch(StagePart.whole(tiny_location.defs.resolve_job_def("quick")), None, {})
        while (status := instance.get_run_by_id(run_id).status) not in FINISHED:
            time.sleep(0.01)
        wall = time.perf_counter() - started
    assert status == dg.DagsterRunStatus.SUCCESS, status
    return wall, json.loads(report.read_text())["cpu_seconds"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=8)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        workspace = tiny_location.write_workspace(tmp / "workspace.yaml", LOCATION)
        os.environ["TINY_LOCATION_REPORT"] = str(tmp / "report.json")
        # Dagster's default instance (its launcher spawns the worker) and the one `mobileforge run` writes
        ways = {"spawned by the code server": lambda home: dg.instance_for_test(temp_dir=home),
                "forked from the zygote": project_instance}
        times: dict[str, list[tuple[float, float]]] = {way: [] for way in ways}
        for _ in range(args.rounds):
            for way, open_instance in ways.items():
                with open_instance(tempfile.mkdtemp(dir=tmp)) as instance:
                    times[way].append(one_run(instance, workspace, tmp / "report.json"))
    medians = {way: (statistics.median(w for w, _ in runs), statistics.median(c for _, c in runs))
               for way, runs in times.items()}
    for way, (wall, cpu) in medians.items():
        print(f"{way:28s} launch to success {wall:5.2f} s (median of {args.rounds}), worker CPU {cpu:5.2f} s")
    (spawn_wall, spawn_cpu), (fork_wall, fork_cpu) = medians.values()
    print(f"ratio spawned / forked: wall {spawn_wall / fork_wall:.1f}x, worker CPU {spawn_cpu / fork_cpu:.1f}x")


if __name__ == "__main__":
    main()
