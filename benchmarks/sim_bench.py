"""Print phonesim performance figures as JSON: `python benchmarks/sim_bench.py [instances] [steps]`."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from phonesim.bench import run  # noqa: E402

if __name__ == "__main__":
    args = [int(a) for a in sys.argv[1:3]]
    print(json.dumps(run(*args), indent=2))
