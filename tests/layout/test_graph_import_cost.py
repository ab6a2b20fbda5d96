"""Importing the asset graph loads no heavy library that only some code paths use.

Every Dagster run and every step process of a multiprocess job imports `pipelines.definitions`
afresh, so these libraries load where they are used (the LLM client's call, a chart, a catalog,
an adb device, a trainer), never with the graph. The module set is asserted, not a time: a time
would measure the machine's load. The time is printed for reference (`pytest -s`)."""

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

# Each costs 0.1-3 s of import; the graph defines itself without any of them.
LAZY_MODULES = ("openai", "litellm", "httpx", "matplotlib", "pandas", "duckdb", "pyarrow.dataset", "adbutils",
                "torch", "transformers", "trl", "datasets", "accelerate")


def test_importing_the_graph_loads_no_lazy_library():
    code = ("import json, sys, time\n"
            "start = time.perf_counter()\n"
            "import pipelines.definitions\n"
            "pipelines.definitions.defs.get_repository_def()\n"
            "seconds = time.perf_counter() - start\n"
            f"print(json.dumps({{'seconds': seconds, 'loaded': [m for m in {LAZY_MODULES!r} if m in sys.modules]}}))")
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(result.stdout.strip().splitlines()[-1])
    print(f"pipelines.definitions imported and resolved in {report['seconds']:.2f} s (wall)")
    assert report["loaded"] == [], f"the graph import loaded {report['loaded']}; import them where they are used"


def test_training_preload_names_modules_that_exist():
    """multiprocessing's forkserver skips a preload module that fails to import without a word, so a
    renamed trainer would silently bring back the per-step import cost."""
    import importlib.util

    from pipelines.definitions import FORKSERVER_PRELOAD

    missing = [name for name in FORKSERVER_PRELOAD if importlib.util.find_spec(name) is None]
    assert missing == [], f"FORKSERVER_PRELOAD names modules that do not exist: {missing}"
