"""The suite's module scheduling (tests/support/scheduling.py) names modules that exist: a renamed module would
silently lose its shared worker or its early start."""

from pathlib import Path

from tests.support.scheduling import LONGEST_FIRST, SAME_WORKER, SuiteScheduling

REPO = Path(__file__).resolve().parents[2]


def test_every_scheduled_module_exists():
    named = {*SAME_WORKER, *SAME_WORKER.values(), *LONGEST_FIRST}
    assert [m for m in sorted(named) if not (REPO / m).is_file()] == []
    assert len(set(LONGEST_FIRST)) == len(LONGEST_FIRST) and not set(SAME_WORKER) & set(LONGEST_FIRST)


def test_modules_sharing_a_worker_are_one_scope():
    scheduler = SuiteScheduling.__new__(SuiteScheduling)  # the scope split reads no state (its __init__ wants workers)
    for module, joined in SAME_WORKER.items():
        assert scheduler._split_scope(f"{module}::test_x[a::b]") == joined
        assert scheduler._split_scope(f"{joined}::test_y") == joined
    assert scheduler._split_scope("tests/phonesim/test_solver.py::test_z") == "tests/phonesim/test_solver.py"
