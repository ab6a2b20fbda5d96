"""Suite-wide order: the modules that materialize a whole graph start first. Under `--dist loadscope` each
module runs on one worker in collection order; collected last, these two ran alone at the end while the
other worker sat idle. Started first, each runs beside the many short modules."""

import os

# One torch thread per process, as the pipeline's policy and trainers run (PolicyResource.torch_threads): two
# xdist workers on two cores, each torch op on two threads, spin-wait for each other (a decoding step's
# attention 7.6 ms with two threads beside a busy process, 0.02 ms with one). Subprocesses inherit it.
os.environ.setdefault("OMP_NUM_THREADS", "1")

WHOLE_GRAPH_MODULES = ("tests/pipelines/test_your_apps.py", "tests/pipelines/test_end_to_end.py")


def pytest_collection_modifyitems(items):
    items.sort(key=lambda item: item.nodeid.partition("::")[0] not in WHOLE_GRAPH_MODULES)
