"""No module over 450 lines (issue #39): a module that long has more than one job. Declarative app and task data
would be the exception; none is that long today."""

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
FOLDERS = ("mobileforge", "pipelines", "assets", "resources", "training", "ops", "phonesim", "benchmarks", "tests",
           "scripts", "deploy", "notebooks")
MAX_LINES = 450


def test_no_module_is_over_450_lines():
    modules = [path for folder in FOLDERS for path in (REPO / folder).rglob("*.py")]
    assert len(modules) > 500  # the folders are where this test thinks they are
    sizes = {str(path.relative_to(REPO)): len(path.read_text().splitlines()) for path in modules}
    assert {path: n for path, n in sizes.items() if n > MAX_LINES} == {}
