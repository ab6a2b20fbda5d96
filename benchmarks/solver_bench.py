"""Per-template cost of `distance_to_goal`, printed as JSON lines plus a summary:
`python benchmarks/solver_bench.py [template_id ...] [--seed N] [--no-baseline]`.

For each template: the cold A* distance from the task's initial state (empty solver memory;
apps' own caches warmed by one untimed search first), the breadth-first baseline on the same
state in the same run (`bfs_path`, same candidate actions) with the speed ratio and whether
both lengths agree, and a simulated critic pass:
a 12-step rollout that follows the optimal plan but takes a random candidate action 30% of
the time, querying the distance after every step with warm memory (as the programmatic
critic does), each query also checked against the baseline.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from phonesim import all_templates, instantiate, solver  # noqa: E402


def _timed(fn):
    t0 = time.perf_counter()
    value = fn()
    return value, (time.perf_counter() - t0) * 1e3


def _length(path) -> int | None:
    return None if path is None else len(path)


def bench_template(template_id: str, seed: int, baseline: bool) -> dict:
    task = instantiate(template_id, seed)
    phone = task.make_phone()
    solver.distance_to_goal(phone, task)  # warm the apps' own caches, so both timings below share them
    solver.clear_memory()  # cold: nothing learned yet
    d, cold_ms = _timed(lambda: solver.distance_to_goal(phone, task))
    row = {"template": template_id, "distance": d, "cold_ms": round(cold_ms, 1)}
    if baseline:
        b, bfs_ms = _timed(lambda: solver.bfs_path(phone, task))
        row.update(bfs_ms=round(bfs_ms, 1), speedup=round(bfs_ms / max(cold_ms, 1e-3), 1),
                   agrees=_length(b) == d)
    rng, probe, plan = random.Random(seed), phone.fork(), solver.shortest_path(phone, task) or []
    times, mismatches = [], 0
    for _ in range(12):
        if not plan or rng.random() < 0.3:
            action = rng.choice(solver.candidate_actions(probe, task))
        else:
            action = plan[0]
        probe.step(action)
        dist, ms = _timed(lambda: solver.distance_to_goal(probe, task))
        times.append(ms)
        if baseline and _length(solver.bfs_path(probe, task)) != dist:
            mismatches += 1
        if dist == 0:
            break
        plan = solver.shortest_path(probe, task) or []
    row.update(rollout_queries=len(times), rollout_mean_ms=round(sum(times) / len(times), 2),
               rollout_max_ms=round(max(times), 1))
    if baseline:
        row["rollout_mismatches"] = mismatches
    return row


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("templates", nargs="*")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-baseline", action="store_true")
    args = ap.parse_args()
    rows = []
    for tid in args.templates or sorted(all_templates()):
        rows.append(bench_template(tid, args.seed, not args.no_baseline))
        print(json.dumps(rows[-1]), flush=True)
    cold = sorted(r["cold_ms"] for r in rows)
    summary = {"templates": len(rows), "cold_median_ms": cold[len(cold) // 2], "cold_max_ms": cold[-1],
               "rollout_mean_ms": round(sum(r["rollout_mean_ms"] for r in rows) / len(rows), 2),
               "rollout_max_ms": max(r["rollout_max_ms"] for r in rows)}
    if not args.no_baseline:
        summary["disagreements"] = sum((not r["agrees"]) + r["rollout_mismatches"] for r in rows)
        summary["bfs_median_ms"] = sorted(r["bfs_ms"] for r in rows)[len(rows) // 2]
    print(json.dumps({"summary": summary, "loadavg": open("/proc/loadavg").read().split()[:3]}))


if __name__ == "__main__":
    main()
