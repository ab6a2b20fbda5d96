"""A process a test starts stops on SIGTERM, whatever in-process Dagster run came before it in the same worker
(tests/conftest.py's `pytest_runtest_setup`)."""

import signal
import subprocess
import sys

import dagster as dg

from tests import conftest


@dg.asset
def one() -> int:
    return 1


def test_a_process_started_after_an_in_process_run_stops_on_sigterm_where_sigint_is_ignored():
    sigint = signal.signal(signal.SIGINT, signal.SIG_IGN)  # as in a suite started as a script's background job
    try:
        assert dg.materialize([one]).success
        assert signal.getsignal(signal.SIGTERM) == signal.SIG_IGN  # Dagster maps SIGTERM to SIGINT's handler
        conftest.pytest_runtest_setup(None)
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        child.terminate()
        assert child.wait(timeout=30) == -signal.SIGTERM
    finally:
        signal.signal(signal.SIGINT, sigint)
        conftest.pytest_runtest_setup(None)
