"""phonesim stands alone: its modules import nothing of the project and never each other in a cycle.

The graph is read from the source with `ast`, so every import counts: module level, inside
`if TYPE_CHECKING:` and inside functions (a function-local import still makes a cycle).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "phonesim"
PROJECT_ROOMS = {"ops", "training", "assets", "resources", "pipelines", "mobileforge", "notebooks"}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_names(path: Path, modules: set[str] = frozenset()) -> set[str]:
    """Absolute names of the modules `path` imports: `from a import b` is `a.b` if that is one of
    `modules`, else `a` (as import-linter reads it)."""
    module = module_name(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            for alias in node.names:
                names.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base)
    return names


def import_graph() -> dict[str, set[str]]:
    """phonesim module → the phonesim modules it imports."""
    paths = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    return {m: {n for n in imported_names(p, set(paths)) if n in paths and n != m} for m, p in paths.items()}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle as a path [a, b, ..., a], or None (depth-first search, three colours)."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def test_phonesim_import_graph_has_no_cycle():
    graph = import_graph()
    assert {"phonesim.phone", "phonesim.render", "phonesim.apps.contacts.screens"} <= set(graph)
    assert "phonesim.app" in graph["phonesim.phone"]  # the graph does see phonesim's own imports
    assert find_cycle(graph) is None, " → ".join(find_cycle(graph))


def test_find_cycle_reports_one():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_phonesim_imports_nothing_of_the_project():
    offenders = {m: sorted(n for n in imported_names(p) if n.split(".")[0] in PROJECT_ROOMS)
                 for m, p in ((module_name(p), p) for p in PACKAGE.rglob("*.py"))}
    assert not {m: names for m, names in offenders.items() if names}


def test_importing_all_of_phonesim_loads_no_project_module():
    code = ("import pkgutil, importlib, sys, phonesim\n"
            "for m in pkgutil.walk_packages(phonesim.__path__, 'phonesim.'):\n"
            "    importlib.import_module(m.name)\n"
            f"print(sorted(m for m in sys.modules if m.split('.')[0] in {sorted(PROJECT_ROOMS)!r}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=PACKAGE.parent).stdout
    assert out.strip() == "[]"
