"""Importing the asset graph loads no heavy library that only some code paths use.

Every Dagster run and every step process of a multiprocess job imports `pipelines.definitions`
afresh, so these libraries load where they are used (the LLM client's call, a chart, a catalog,
an adb device, a trainer), never with the graph. The module set is asserted, not a time: a time
would measure the machine's load. The time is printed for reference (`pytest -s`)."""

import functools
import json
import os
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


# what the production profile requires (pipelines/resources.py)
PRODUCTION = {"MOBILEFORGE_PROFILE": "production", "MOBILEFORGE_STORAGE_ROOT": "s3://bucket/runs",
              "MOBILEFORGE_POLICY_MODEL": "openai/policy", "MOBILEFORGE_CRITIC_MODEL": "openai/critic"}


@functools.cache
def _preload(variables: tuple[tuple[str, str], ...] = ()) -> tuple[str, ...]:
    """FORKSERVER_PRELOAD as a process whose environment names no LLM endpoint but `variables` computes it (one
    process per environment: the list is built when pipelines.definitions is imported)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MOBILEFORGE_")} | dict(variables)
    code = "import json; from pipelines.definitions import FORKSERVER_PRELOAD as p; print(json.dumps(p))"
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    return tuple(json.loads(result.stdout.strip().splitlines()[-1]))


def test_training_preload_names_modules_that_exist():
    """multiprocessing's forkserver skips a preload module that fails to import without a word, so a
    renamed trainer would silently bring back the per-step import cost."""
    import importlib.util

    preload = _preload(tuple(PRODUCTION.items()))  # the longest list: litellm too
    missing = [name for name in preload if importlib.util.find_spec(name) is None]
    assert missing == [], f"FORKSERVER_PRELOAD names modules that do not exist: {missing}"


def test_litellm_is_preloaded_only_where_the_deployment_names_an_llm_endpoint(monkeypatch):
    from pipelines.resources import LLM_ENDPOINT_VARIABLES, names_llm_endpoints

    assert "litellm" not in _preload()  # embedded: no step calls an LLM
    preload = _preload(tuple(PRODUCTION.items()))
    assert "litellm" in preload and preload.index("ops.agent.llm") < preload.index("litellm")
    # the preload follows `names_llm_endpoints` (above); which variables name an endpoint:
    for name in LLM_ENDPOINT_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("MOBILEFORGE_PROFILE", "local")
    assert not names_llm_endpoints()
    for name, value in {"MOBILEFORGE_CRITIC_MODEL": "openai/critic",
                        "MOBILEFORGE_CRITIC_API_BASE": "http://127.0.0.1:8001/v1",
                        "MOBILEFORGE_TEACHER_MODEL": "openai/teacher"}.items():
        with monkeypatch.context() as each:
            each.setenv(name, value)
            assert names_llm_endpoints(), name
