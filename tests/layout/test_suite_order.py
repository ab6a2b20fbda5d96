"""The suite's order names its whole-graph modules by path (tests/conftest.py): a renamed module would
silently lose its early start."""

from pathlib import Path

from tests.conftest import WHOLE_GRAPH_MODULES

REPO = Path(__file__).resolve().parents[2]


def test_the_modules_started_first_exist_and_materialize_a_whole_graph():
    for module in WHOLE_GRAPH_MODULES:
        text = (REPO / module).read_text(encoding="utf-8")
        assert "run_experiment(" in text, module
