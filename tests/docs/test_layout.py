"""The README's module table: one row for each module, and the tree matches it."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


#: Every folder of modules the layout table covers, and their endings.
FOLDERS = ("codec", "host", "guest", "guest/python", "conformance", "tether",
           "tether/integrations")


def _modules() -> set[str]:
    found = {str(p.relative_to(ROOT)) for folder in FOLDERS
             for p in (ROOT / folder).glob("*.py") if p.name != "__init__.py"}
    return found | {str(p.relative_to(ROOT)) for p in (ROOT / "guest" / "node").glob("*.mjs")}


def _table() -> list[str]:
    readme = (ROOT / "README.md").read_text()
    section = readme.split("### Modules", 1)[1].split("\n\n", 2)[2].split("\n\n", 1)[0]
    return [line for line in section.splitlines()[2:] if line.startswith("|")]


def test_the_readme_names_every_module_once() -> None:
    """One row per module, saying its job: the table matches the tree."""
    named = [re.fullmatch(r"\| `([\w/]+\.(?:py|mjs))` \| (.+) \|", row) for row in _table()]
    assert all(named), "rows of the module table that are not `module` | job"
    modules = [m.group(1) for m in named if m]
    assert len(modules) == len(set(modules)), "modules the table names twice"
    assert _modules() - set(modules) == set(), "modules the README's layout does not name"
    assert set(modules) - _modules() == set(), "modules the README names that do not exist"


def test_the_host_imports_nothing_of_the_guests() -> None:
    """The host and the guests meet only in the codec (and the spec)."""
    importing = re.compile(r"^\s*(from|import)\s+(tether\.guest|\.\.guest)\b", re.M)
    offenders = [str(p) for p in sorted((ROOT / "host").glob("*.py"))
                 if importing.search(p.read_text())]
    assert offenders == []


def test_the_cli_imports_the_conformance_suite_only_when_it_runs() -> None:
    """``tether run`` loads the parser of ``tether conformance``, not its runner."""
    import subprocess
    import sys

    code = ("import sys, tether.cli; print(sorted(m for m in sys.modules "
            "if m.startswith('tether.conformance')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=ROOT).stdout
    assert out.strip() == "['tether.conformance', 'tether.conformance.cli']"


def test_no_module_imports_itself_in_a_circle() -> None:
    """Within each folder the modules import each other as a tree: data
    flows down the layers (imports only for type checking do not count)."""
    import ast

    for folder in ("codec", "host", "guest/python", "conformance", "tether/integrations"):
        graph: dict[str, set[str]] = {}
        for path in (ROOT / folder).glob("*.py"):
            tree = ast.parse(path.read_text())
            for node in ast.walk(tree):
                if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                    node.body = []
            graph[path.stem] = {
                (node.module or alias.name).split(".")[0]
                for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.level == 1
                for alias in node.names}
        done: set[str] = set()

        def visit(module: str, path: tuple[str, ...], graph: dict[str, set[str]] = graph,
                  done: set[str] = done, folder: str = folder) -> None:
            assert module not in path, f"{folder}: {' -> '.join((*path, module))}"
            if module in done:
                return
            for imported in graph.get(module, ()):
                visit(imported, (*path, module))
            done.add(module)

        for module in graph:
            visit(module, ())
