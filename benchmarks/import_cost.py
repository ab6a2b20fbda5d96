"""CPU cost of importing the asset graph, against the heavy libraries it leaves to first use:
`python benchmarks/import_cost.py [--repeat 3]`.

Every Dagster run and every step process of a multiprocess job imports `pipelines.definitions`
afresh, so its import cost is paid ~20 times per `mobileforge run`. Each module is imported alone
in a fresh interpreter; the figure is that process's user+system CPU seconds (the best of
`--repeat`, since CPU time, unlike wall time, hardly depends on the machine's load), minus the
bare interpreter's. Prints one JSON object: seconds per module, and whether the project's
bytecode is cached (without it, under PYTHONDONTWRITEBYTECODE, every process compiles the
project's sources again).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

# as ops.agent.llm sets it before litellm loads: otherwise litellm fetches its model cost map at import
ENV = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
GRAPH = ("dagster", "pipelines.definitions")
LAZY = ("openai", "litellm", "matplotlib.pyplot", "pyarrow.dataset", "pandas", "duckdb", "adbutils",
        "torch", "transformers", "trl")


def import_cpu_s(statement: str, repeat: int) -> float:
    """Best user+system CPU seconds of a fresh interpreter running `statement`."""
    best = float("inf")
    for _ in range(repeat):
        before = os.times()
        subprocess.run([sys.executable, "-c", statement], cwd=REPO, check=True, env=ENV)
        after = os.times()
        best = min(best, (after.children_user - before.children_user)
                   + (after.children_system - before.children_system))
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    interpreter = import_cpu_s("pass", args.repeat)
    seconds = {m: round(import_cpu_s(f"import {m}", args.repeat) - interpreter, 2) for m in GRAPH + LAZY}
    definitions = REPO / "pipelines" / "definitions.py"
    print(json.dumps({
        "interpreter_cpu_s": round(interpreter, 2),
        "graph_import_cpu_s": {m: seconds[m] for m in GRAPH},
        "lazy_library_import_cpu_s": {m: seconds[m] for m in LAZY},
        "project_bytecode_cached": Path(importlib.util.cache_from_source(str(definitions))).exists(),
        "dont_write_bytecode": sys.flags.dont_write_bytecode == 1,
    }, indent=2))


if __name__ == "__main__":
    main()
