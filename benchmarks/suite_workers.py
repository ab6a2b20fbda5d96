"""What the number of pytest-xdist workers does to the test suite's time on this machine: the README's test
command (`python -m pytest`, pyproject's addopts) run whole with each `-n` asked for, the counts interleaved
round by round (a shared host's speed drifts by a fifth within half an hour; only runs side by side compare).

Per run: wall seconds, the CPU seconds of every process the suite waited for (user + sys, ops.evaluation.cpu_clock's
clock), the cores they kept busy on average (CPU / wall) and the peak memory it added (MemAvailable at the
start less its lowest value, sampled every second; other work starting meanwhile counts too). Prints each
run, then per count the median wall and its ratio to the first count's. A run that fails is reported with its
last line and left out of the medians.

Run: python benchmarks/suite_workers.py [--workers 2,3] [--rounds 2] [-- PYTEST ARGS]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from ops.evaluation.cpu_clock import CpuClock  # noqa: E402


@dataclass(frozen=True)
class SuiteRun:
    workers: int
    wall: float
    cpu: float
    peak_gb: float
    passed: bool
    last_line: str

    @property
    def cores_busy(self) -> float:
        return self.cpu / self.wall


def _meminfo_kb(field: str) -> int:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise KeyError(field)


class PeakMemory:
    """How far (GB) the machine's available memory fell below its level at the start while the block ran."""

    def __enter__(self) -> PeakMemory:
        self._start = self._lowest = _meminfo_kb("MemAvailable")
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def _sample(self) -> None:
        while not self._stop.wait(1.0):
            self._lowest = min(self._lowest, _meminfo_kb("MemAvailable"))

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.gb = (self._start - self._lowest) / 1e6


def run_suite(workers: int, pytest_args: list[str]) -> SuiteRun:
    clock = CpuClock()  # this process and the suite's processes it waited for
    with PeakMemory() as memory:
        done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-n", str(workers), *pytest_args],
                              cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines = done.stdout.strip().splitlines()
    return SuiteRun(workers, clock.wall_seconds(), clock.cpu_seconds(), memory.gb, done.returncode == 0,
                    lines[-1] if lines else "(no output)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--workers", default="2,3", help="comma-separated -n values; the first is the baseline")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("pytest_args", nargs="*", help="after --: passed to every run (e.g. -p no:randomly)")
    args = parser.parse_args()
    counts = [int(n) for n in args.workers.split(",")]
    runs: list[SuiteRun] = []
    for round_ in range(args.rounds):
        # alternate the order too, so that neither count always runs first into a host getting busier
        for workers in counts if round_ % 2 == 0 else counts[::-1]:
            run = run_suite(workers, args.pytest_args)
            runs.append(run)
            print(f"round {round_ + 1} -n {workers}: {run.wall:.1f} s wall, {run.cpu:.0f} CPU s, "
                  f"{run.cores_busy:.2f} cores busy, memory +{run.peak_gb:.1f} GB at the peak"
                  + ("" if run.passed else f"  FAILED: {run.last_line}"), flush=True)
    passed = {n: [r for r in runs if r.workers == n and r.passed] for n in counts}
    if not passed[counts[0]]:
        sys.exit("no run of the baseline count passed")
    baseline = statistics.median(r.wall for r in passed[counts[0]])
    for n, ok in passed.items():
        if ok:
            wall = statistics.median(r.wall for r in ok)
            busy = statistics.median(r.cores_busy for r in ok)
            print(f"-n {n}: median {wall:.1f} s wall, {busy:.2f} cores busy, {wall / baseline:.2f}x the -n {counts[0]} "
                  "median")


if __name__ == "__main__":
    main()
