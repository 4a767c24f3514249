"""The README's module table: one row for each module, and the tree matches it."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


#: Every folder of modules the layout table covers, and their endings.
FOLDERS = ("codec", "host", "host/aio", "host/bindings", "host/check", "host/guests",
           "host/run", "host/sandbox", "guest", "guest/python", "conformance", "tether",
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
    offenders = [str(p) for p in sorted((ROOT / "host").rglob("*.py"))
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


def _import_graph(folder: str) -> dict[str, set[str]]:
    """Each module of ``folder`` (dotted, from the folder; its sub-packages
    too) and the modules of the folder it imports, imports only for type
    checking left out."""
    import ast

    top = ROOT / folder
    graph: dict[str, set[str]] = {}
    # Only the host has sub-packages; elsewhere a sub-folder holds data.
    for path in top.rglob("*.py") if folder == "host" else top.glob("*.py"):
        parts = path.relative_to(top).with_suffix("").parts
        package = parts[:-1]
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                node.body = []
        imported: set[str] = set()
        for node in ast.walk(tree):
            if not isinstance(node, ast.ImportFrom) or node.level == 0:
                continue
            base = package[:len(package) - node.level + 1]
            module = (*base, *(node.module or "").split(".")) if node.module else base
            for alias in node.names:
                if (top.joinpath(*module, f"{alias.name}.py")).exists():
                    imported.add(".".join((*module, alias.name)))
                else:
                    imported.add(".".join(module))
        graph[".".join(parts)] = imported
    return graph


def test_no_module_imports_itself_in_a_circle() -> None:
    """Within each folder the modules import each other as a tree: data
    flows down the layers (imports only for type checking do not count)."""
    for folder in ("codec", "host", "guest/python", "conformance", "tether/integrations"):
        graph = _import_graph(folder)
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


#: The host's rooms, each importing only rooms after it (and the modules of
#: the public face at the bottom: limits, result); the public face at the
#: top (runtime, sync, tracing, __init__) imports any of them.
HOST_ROOMS = ("check", "run", "guests", "bindings", "sandbox", "aio")
HOST_GROUND = ("limits", "result")


def test_the_host_rooms_import_only_downward() -> None:
    """A room of the host never reaches up: not into a room above it, nor
    into the public face that wraps it."""
    upward = []
    for module, imported in _import_graph("host").items():
        room = module.split(".")[0]
        if room not in HOST_ROOMS:
            continue
        below = HOST_ROOMS[HOST_ROOMS.index(room) + 1:]
        upward += [f"{module} -> {target}" for target in imported
                   if target.split(".")[0] not in (room, *below, *HOST_GROUND)]
    assert upward == []


def test_the_host_keeps_only_its_public_face_outside_its_rooms() -> None:
    """Every module of the host is in a room but the public face."""
    face = {"__init__", "runtime", "sync", "tracing", *HOST_GROUND}
    loose = {p.stem for p in (ROOT / "host").glob("*.py")} - face
    rooms = {p.name for p in (ROOT / "host").iterdir() if (p / "__init__.py").exists()}
    assert loose == set()
    assert rooms == set(HOST_ROOMS)


def test_limits_are_applied_in_one_place() -> None:
    """A process's rlimits and its cgroup's ceilings are set by
    GuestProcess.apply_limits alone (host/guests/launch.py), a run's and the
    checker's alike, from one ProcessLimits."""
    setters: list[str] = []
    for path in sorted((ROOT / "host").rglob("*.py")):
        tree = ast.parse(path.read_text())
        for function in ast.walk(tree):
            if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for call in ast.walk(function):
                if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)):
                    continue
                sets_rlimit = call.func.attr in ("prlimit", "setrlimit") and len(call.args) >= 3
                if sets_rlimit or call.func.attr == "set_limits":
                    setters.append(f"{path.relative_to(ROOT)}:{function.name}")
    assert sorted(set(setters)) == ["host/guests/launch.py:apply_limits",
                                    "host/guests/launch.py:apply_rlimits"]
