"""What the CI-size whole graph costs per stage: the `ci` experiment of tests/pipelines/test_end_to_end.py
(every stage, each as small as its tests allow) run as `mobileforge run` runs it (a persistent instance, the
workspace's code location, run workers forked from the zygote), on a temporary instance and storage root.
Most of its time is starting processes and importing into them, not the work; compare commits by running this
at each, alternating, on an otherwise idle machine (the host's speed drifts).

Prints, per round, the seconds of each stage and the whole run, then the medians.

Run: python benchmarks/ci_graph_stages.py [--rounds 2]
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

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
os.chdir(REPO)  # workspace.yaml's code location loads from here


def one_round() -> dict[str, float]:
    os.environ["MOBILEFORGE_STORAGE_ROOT"] = tempfile.mkdtemp(prefix="ci_graph_storage_")
    import dagster as dg

    from pipelines.definitions import ASSETS, CHECKS, STAGES
    from pipelines.resources import resources_for
    from pipelines.run.experiment import run_experiment
    from pipelines.run.observer import LineObserver
    from tests.pipelines.test_end_to_end import FAST
    from tests.support.instances import project_instance

    began = time.perf_counter()
    with project_instance(tempfile.mkdtemp(prefix="ci_graph_home_")) as instance:
        defs = dg.Definitions(assets=ASSETS, asset_checks=CHECKS, resources=resources_for("local"), jobs=STAGES)
        stages = run_experiment("ci", FAST, instance=instance, observer=LineObserver(lambda _line: None), defs=defs)
    return {**{stage: round(seconds, 1) for stage, seconds in stages.items()},
            "total": round(time.perf_counter() - began, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2)
    rounds = [one_round() for _ in range(parser.parse_args().rounds)]
    for measured in rounds:
        print(json.dumps(measured))
    print(json.dumps({"median": {key: round(statistics.median(r[key] for r in rounds), 1) for key in rounds[0]}}))


if __name__ == "__main__":
    main()
