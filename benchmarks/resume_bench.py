"""Resuming staged episodes: what reading a stage's staged attempts costs, with each attempt's
digests checked once per store vs. on every read.

A resumed benchmark of one policy reads every staged attempt three times: counting what is left
to run (`ParquetAttemptStore.completed` per task), the rollouts' resume (`completed` again) and
the tables (`collect_tables`). Stages N tasks × K attempts × S steps whose screenshots are random
bytes of a phone screenshot's size (hashing and reading cost depend on bytes, not on the picture),
then times those three passes:

  one store      the three passes on one store object, as `benchmark_results` makes them: each
                 attempt's files are hashed on the first read only
  fresh stores   each pass on a new store object, which hashes every attempt again (what every
                 pass cost before summaries were cached; the baseline, measured in this run)

    python benchmarks/resume_bench.py [--tasks 770 --attempts 3 --steps 6 --png-kb 10]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from ops.data.attempt_store import ParquetAttemptStore, collect_tables
from ops.agent.episode import AttemptRecord, CriticFeedback, GroundTruth, StepRecord, TaskSpec

VERSION = "bench-policy"


def _attempt(task: TaskSpec, attempt: int, steps: int, png_bytes: int) -> AttemptRecord:
    records = [StepRecord(step=i, screenshot_png=os.urandom(png_bytes), elements=[{"label": i, "text": "OK"}],
                          a11y=None, app="settings", screen="main", prompt="p" * 2000, raw_output="CLICK(3)",
                          action={"type": "click", "target": 3}, parse_error=None, conclusion="", latency_s=0.1,
                          env_ok=True, env_reason=None, state="{}") for i in range(steps)]
    return AttemptRecord(task=task, attempt=attempt, policy_version=VERSION, hints=[], steps=records,
                         end_reason="terminated", answer=None, final_state="{}",
                         final_screenshot_png=os.urandom(png_bytes),
                         feedback=CriticFeedback(decision=0, reason="judged", failure_step=None, task_feasible=True,
                                                 step_analysis=[], hint=None, critic="judge"),
                         ground_truth=GroundTruth(success=False, progress=0.0, side_effects=0,
                                                  false_complete=False, overdue=False))


def _resume_passes(store_for_pass: Callable[[], ParquetAttemptStore], tasks: list[TaskSpec], staged: int) -> float:
    start = time.perf_counter()
    for _ in range(2):  # what is left to run; the rollouts' resume
        store = store_for_pass()
        resumed = sum(len(store.completed(t, VERSION)) for t in tasks)
    attempts, _, _ = collect_tables(store_for_pass(), VERSION, tasks)
    seconds = time.perf_counter() - start
    assert resumed == attempts.height == staged, (resumed, attempts.height, staged)
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks", type=int, default=770)
    parser.add_argument("--attempts", type=int, default=3)
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--repeats", type=int, default=3, help="timings of each, the best is printed")
    parser.add_argument("--png-kb", type=int, default=10, help="bytes of each screenshot, in KB")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        store = ParquetAttemptStore.from_uri(f"{tmp}/staging")
        tasks = [TaskSpec(task_id=f"bench.task#{i}", instruction=f"Do thing {i}.", step_budget=12,
                          template_id="bench.task", params={"i": i}, seed=i) for i in range(args.tasks)]
        start = time.perf_counter()
        for task in tasks:
            for attempt in range(1, args.attempts + 1):
                store.save(_attempt(task, attempt, args.steps, args.png_kb * 1024))
        staged_s = time.perf_counter() - start
        megabytes = sum(f.stat().st_size for f in Path(tmp).rglob("*") if f.is_file()) / 1e6
        print(f"staged {args.tasks * args.attempts} attempts ({megabytes:.0f} MB) in {staged_s:.1f} s")
        staged = args.tasks * args.attempts
        cached, fresh = float("inf"), float("inf")
        for _ in range(args.repeats):  # alternating, best of each: the page cache and the machine's load vary
            fresh = min(fresh, _resume_passes(lambda: ParquetAttemptStore.from_uri(f"{tmp}/staging"), tasks, staged))
            one = ParquetAttemptStore.from_uri(f"{tmp}/staging")
            cached = min(cached, _resume_passes(lambda: one, tasks, staged))
        print(f"{'three resume passes':<22}{'seconds':>9}{'per attempt ms':>16}")
        for name, seconds in (("one store", cached), ("fresh stores", fresh)):
            print(f"{name:<22}{seconds:>9.2f}{1000 * seconds / (args.tasks * args.attempts):>16.2f}")
        print(f"fresh stores / one store: {fresh / cached:.2f}x")


if __name__ == "__main__":
    main()
