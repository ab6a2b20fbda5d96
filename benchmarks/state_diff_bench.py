"""Cost of `phonesim.state.diff_paths` on real before/after states, against the flatten-everything
baseline in the same run: `python benchmarks/state_diff_bench.py [--tasks 40] [--repeat 3]`.

The pairs come from the solver's plans of train-split template instances: the logical state
before and after every action (most actions change nothing or one record, as in rollouts and
exploration replays). Prints one JSON object: microseconds per diff for the subtree-skipping
diff and for the baseline (flatten both states, compare every leaf), their ratio, and whether
both gave the same paths on every pair.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from phonesim import instantiate, solve, templates  # noqa: E402
from phonesim.state import copy_json, diff_paths, flatten  # noqa: E402


def flatten_diff(before, after) -> list[str]:
    """The baseline: every leaf of both states, compared."""
    a, b = flatten(before), flatten(after)
    missing = object()
    return sorted(p for p in a.keys() | b.keys() if a.get(p, missing) != b.get(p, missing))


def state_pairs(n_tasks: int) -> list[tuple[dict, dict]]:
    pairs = []
    for template in templates(split="train")[:n_tasks]:
        task = instantiate(template.id, 0)
        phone = task.make_phone()
        try:
            plan = solve(phone.fork(), task)
        except RuntimeError:
            continue
        for action in plan:
            before = copy_json(phone.logical_state())
            phone.step(action)
            pairs.append((before, copy_json(phone.logical_state())))
    return pairs


def _per_call_us(fn, pairs, repeat: int) -> float:
    t0 = time.perf_counter()
    for _ in range(repeat):
        for before, after in pairs:
            fn(before, after)
    return (time.perf_counter() - t0) / (repeat * len(pairs)) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=40)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    pairs = state_pairs(args.tasks)
    same = all(diff_paths(b, a) == flatten_diff(b, a) for b, a in pairs)
    fast = _per_call_us(diff_paths, pairs, args.repeat)
    slow = _per_call_us(flatten_diff, pairs, args.repeat)
    changed = sum(bool(diff_paths(b, a)) for b, a in pairs)
    print(json.dumps({"pairs": len(pairs), "pairs_with_changes": changed, "leaves_per_state": len(flatten(pairs[0][0])),
                      "diff_paths_us": round(fast, 1), "flatten_baseline_us": round(slow, 1),
                      "speedup": round(slow / fast, 1), "same_paths": same}))


if __name__ == "__main__":
    main()
