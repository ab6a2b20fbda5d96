"""The layers of DESIGN.md hold: import-linter's contracts (pyproject's [tool.importlinter])
pass, and the simulator imports nothing of the project."""

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PROJECT_PACKAGES = {"ops", "training", "assets", "resources", "pipelines", "mobileforge"}


def test_import_contracts_are_kept():
    lint = Path(sys.executable).with_name("lint-imports")
    result = subprocess.run([str(lint), "--no-cache"], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert "0 broken" in result.stdout


def test_phonesim_loads_without_the_rest_of_the_project():
    code = ("import pkgutil, importlib, sys, phonesim\n"
            "for m in pkgutil.walk_packages(phonesim.__path__, 'phonesim.'):\n"
            "    importlib.import_module(m.name)\n"
            f"print(sorted({{m.split('.')[0] for m in sys.modules}} & set({sorted(PROJECT_PACKAGES)!r})))")
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip() == "[]"
