"""What starting a training-stage step process costs: spawned, it imports the graph and the trainers
(torch, transformers, datasets, TRL) itself; forked from a forkserver that preloaded them
(`pipelines.definitions.FORKSERVER_PRELOAD`, the training job's start method), it imports nothing.

Each process imports `FORKSERVER_PRELOAD` (a no-op where preloaded) and reports its own user+system
CPU seconds; processes run one at a time, so wall time is theirs alone. Printed, all measured in
this run: CPU seconds per process each way, the forkserver's one-time import, the wall time of
`--processes` starts each way, and what that saves at most for the training stage's step
processes (at most: its schema checks would import only the graph).

Run: python benchmarks/step_process_start.py [--processes 4]
"""

from __future__ import annotations

import argparse
import importlib
import json
import multiprocessing
import resource
import time

import psutil


def _import_and_report(names: list[str], results) -> None:
    for name in names:
        importlib.import_module(name)
    usage = resource.getrusage(resource.RUSAGE_SELF)  # a forked child's counters start at zero
    results.put(usage.ru_utime + usage.ru_stime)


def start_processes(method: str, names: list[str], count: int) -> tuple[list[float], float]:
    """CPU seconds of each of `count` processes started with `method`, one after the other, and the
    wall seconds of all of them."""
    context = multiprocessing.get_context(method)
    results = context.SimpleQueue()
    cpu = []
    start = time.perf_counter()
    for _ in range(count):
        process = context.Process(target=_import_and_report, args=(names, results))
        process.start()
        cpu.append(results.get())
        process.join()
        if process.exitcode != 0:
            raise SystemExit(f"a {method} process exited with {process.exitcode}")
    return cpu, time.perf_counter() - start


def forkserver_cpu_seconds() -> float:
    """User+system CPU seconds of this process's forkserver (its preload imports)."""
    servers = [p for p in psutil.Process().children() if "forkserver" in " ".join(p.cmdline())]
    if len(servers) != 1:
        raise SystemExit(f"expected one forkserver child process, found {len(servers)}")
    times = servers[0].cpu_times()
    return times.user + times.system


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--processes", type=int, default=4)
    args = parser.parse_args()
    from pipelines.definitions import FORKSERVER_PRELOAD, defs

    names = list(FORKSERVER_PRELOAD)
    steps = len(defs.resolve_job_def("training").graph.node_defs)  # its assets and schema checks
    spawn_cpu, spawn_wall = start_processes("spawn", names, args.processes)
    multiprocessing.get_context("forkserver").set_forkserver_preload(names)
    fork_cpu, fork_wall = start_processes("forkserver", names, args.processes)
    server_cpu = forkserver_cpu_seconds()
    spawned, forked = sum(spawn_cpu) / len(spawn_cpu), sum(fork_cpu) / len(fork_cpu)
    print(json.dumps({
        "processes": args.processes,
        "preload": names,
        "training_stage_steps": steps,
        "spawn_cpu_s_per_process": round(spawned, 2),
        "forkserver_cpu_s_per_process": round(forked, 4),
        "forkserver_preload_cpu_s_once": round(server_cpu, 2),
        "cpu_ratio_per_process": round(spawned / forked, 1) if forked else None,
        "wall_s": {"spawn": round(spawn_wall, 1), "forkserver_incl_preload": round(fork_wall, 1)},
        "training_stage_cpu_s_saved_at_most": round(steps * spawned - (server_cpu + steps * forked), 1),
    }, indent=2))


if __name__ == "__main__":
    main()
