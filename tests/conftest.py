"""Suite-wide settings. Under `--dist loadscope` each test module runs on one worker, so a module's
whole-graph run is built once; tests/support/scheduling.py decides which modules share a worker and starts
the longest first."""

import gc
import os
import signal

import pytest

# One torch thread per process, as the pipeline's policy and trainers run (PolicyResource.torch_threads): the
# xdist workers on two cores, each torch op on two threads, spin-wait for each other (a decoding step's
# attention 7.6 ms with two threads beside a busy process, 0.02 ms with one). Subprocesses inherit it.
os.environ.setdefault("OMP_NUM_THREADS", "1")


# Each worker's heap holds everything the suite imports (~0.9 M objects, 0.37 CPU s a full collection), and
# the trainers collect garbage in full (accelerate's `free_memory`). Frozen as each module starts (its
# predecessor's fixtures are torn down by then), those collections walk only the module's own objects:
# 10 % less CPU on the trainers' tests. While a worker collects, imports only add objects: automatic
# collections there are a fifth of its collection's CPU (14.5 -> 11.3 s), so they wait until it is done.
if os.environ.get("PYTEST_XDIST_WORKER"):
    gc.disable()


def pytest_collection_finish(session):
    gc.enable()


_SIGTERM_AT_START = signal.getsignal(signal.SIGTERM)


def pytest_runtest_setup(item):
    # A suite started as a script's background job ignores SIGINT (bash ignores it there, and the workers inherit
    # that), and each in-process Dagster run ends by mapping SIGTERM to SIGINT's handler
    # (dagster._utils.interrupts.setup_interrupt_handlers): the worker then ignored SIGTERM, and so did every process
    # it started later (an ignored signal stays ignored across exec). The `mobileforge run` test_killed_run stops with
    # SIGTERM ran its stages on for 60 s until SIGKILL, beside the other worker's tests (that test 65-74 s -> 12 s).
    signal.signal(signal.SIGTERM, _SIGTERM_AT_START)


_frozen_at = {"module": None}


def pytest_runtest_protocol(item, nextitem):
    module = getattr(item, "module", None)
    if module is not _frozen_at["module"]:
        _frozen_at["module"] = module
        gc.collect()
        gc.freeze()


@pytest.hookimpl(optionalhook=True)  # a run with `-p no:xdist` has no such hook
def pytest_xdist_make_scheduler(config, log):
    if config.getvalue("dist") != "loadscope":
        return None  # another --dist asked for on the command line: xdist's own
    from tests.support.scheduling import SuiteScheduling

    return SuiteScheduling(config, log)
