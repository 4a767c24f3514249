"""Third-party packages: importable by programs, read-only, preloaded in
the fork server's template without anything of one run reaching the next."""

from __future__ import annotations

import asyncio
import importlib.util
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import cbor2
import pytest

import tether
from tether import PoolConfig, RunResult, Runtime, Sandbox
from tether.host.sandbox.profiles import detect

NAMESPACES = detect().namespaces
#: Every way a Python guest starts: cold, from a pool, forked by the template.
START_MODES = {
    "cold": None,
    "pool": PoolConfig(size=1, fork_server=False),
    "fork-server": PoolConfig(size=1),
}


@pytest.fixture(scope="module")
def venv() -> Iterator[Path]:
    """A virtual environment (without pip: fast) holding one tiny pure-Python
    package, under the test's TMPDIR: a path the sandbox covers with a
    private /tmp, which the package must still be visible through."""
    with tempfile.TemporaryDirectory(prefix="tether-packages-") as scratch:
        root = Path(scratch) / "venv"
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True)
        [site] = root.glob("lib/python3*/site-packages")
        package = site / "tinypkg"
        package.mkdir()
        (package / "__init__.py").write_text("VALUE = 1\n\ndef double(x):\n    return 2 * x\n")
        (site / "extra").mkdir()  # a .pth file's directory is on the path too
        (site / "extra" / "tinyextra.py").write_text("NAME = 'extra'\n")
        (site / "tiny.pth").write_text("extra\n")
        yield root


def _runs(sources: list[str], **runtime: Any) -> list[RunResult]:
    async def go() -> list[RunResult]:
        async with Runtime(**runtime) as rt:
            return [await rt.run(source) for source in sources]

    return asyncio.run(go())


@pytest.mark.parametrize("mode", list(START_MODES))
def test_a_package_of_a_venv_is_importable(venv: Path, mode: str) -> None:
    [result] = _runs(["import tinypkg, tinyextra\nreturn [tinypkg.double(21), tinyextra.NAME]"],
                     python_packages=venv, pool=START_MODES[mode])
    assert result.ok, result.error
    assert result.value == [42, "extra"]


def test_a_site_packages_directory_works_too(venv: Path) -> None:
    [site] = venv.glob("lib/python3*/site-packages")
    [result] = _runs(["import tinypkg\nreturn tinypkg.VALUE"], python_packages=site)
    assert result.value == 1


def test_tethers_own_modules_stay_out_of_the_import_path(venv: Path) -> None:
    [result] = _runs(["import sys\nreturn sys.path"], python_packages=venv)
    assert isinstance(result.value, list)
    own = {str(Path(m.__file__ or "").resolve().parent.parent) for m in (tether, cbor2)}
    assert not own & set(result.value)
    assert result.value[-2:] == [str(next(venv.glob("lib/python3*/site-packages"))),
                                 str(next(venv.glob("lib/python3*/site-packages")) / "extra")]


@pytest.mark.skipif(not NAMESPACES, reason="the namespaces sandbox is not available here")
@pytest.mark.parametrize("mode", ["cold", "fork-server"])
def test_packages_are_read_only(venv: Path, mode: str) -> None:
    [result] = _runs(["import tinypkg, pathlib\n"
                      "pathlib.Path(tinypkg.__file__).write_text('VALUE = 2')"],
                     python_packages=venv, sandbox=Sandbox.NAMESPACES, pool=START_MODES[mode])
    assert result.error is not None and result.error.type == "OSError"
    assert "Read-only file system" in result.error.message


def test_a_preloaded_module_is_loaded_and_a_runs_change_to_it_stays_in_that_run(
        venv: Path) -> None:
    first, second = _runs(
        ["import sys\nloaded = 'tinypkg' in sys.modules\nimport tinypkg\n"
         "tinypkg.VALUE = 99\ntinypkg.double = None\nreturn [loaded, tinypkg.VALUE]",
         "import sys\nloaded = 'tinypkg' in sys.modules\nimport tinypkg\n"
         "return [loaded, tinypkg.VALUE, tinypkg.double(2)]"],
        python_packages=venv, preload=("tinypkg",), pool=PoolConfig(size=1))
    assert first.value == [True, 99]
    assert second.value == [True, 1, 4]


def test_a_module_that_cannot_be_preloaded_is_the_programs_import_error(venv: Path) -> None:
    [result] = _runs(["import missing_module"], python_packages=venv,
                     preload=("missing_module",))
    assert result.error is not None and result.error.type == "ModuleNotFoundError"


@pytest.mark.parametrize("bad", [("not a module",), "pandas"])
def test_bad_preload_names_are_refused(bad: Any) -> None:
    with pytest.raises(ValueError, match="preload"):
        Runtime(preload=bad)


def test_a_missing_packages_directory_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="python_packages"):
        Runtime(python_packages=tmp_path / "nowhere")
    with pytest.raises(ValueError, match="node_packages"):
        Runtime(node_packages=tmp_path)


@pytest.mark.skipif(importlib.util.find_spec("numpy") is None,
                    reason="numpy is not installed in the interpreter running the tests")
def test_numpy_preloaded_in_the_template() -> None:
    spec = importlib.util.find_spec("numpy")
    assert spec is not None and spec.origin is not None
    site = Path(spec.origin).parent.parent
    [result] = _runs(["import numpy as np\na = np.arange(12.0).reshape(3, 4)\n"
                      "return float((a @ a.T).trace())"],
                     python_packages=site, preload=("numpy",), pool=PoolConfig(size=1))
    assert result.ok, result.error
    assert result.value == 506.0


def test_node_packages_are_required_by_programs(tmp_path: Path) -> None:
    package = tmp_path / "node_modules" / "tinyjs"
    package.mkdir(parents=True)
    (package / "package.json").write_text('{"name": "tinyjs", "main": "index.js"}')
    (package / "index.js").write_text("exports.double = (x) => 2 * x;\n")

    async def go() -> RunResult:
        async with Runtime(node_packages=tmp_path) as rt:
            return await rt.run("return require('tinyjs').double(21)", language="javascript")

    result = asyncio.run(go())
    assert result.ok, result.error
    assert result.value == 42


def test_the_importable_modules_are_listed_for_describing_the_runtime(venv: Path) -> None:
    from tether.host.guests.languages import Packages

    packages = Packages.prepare(venv, None, (), sys.executable)
    assert "tinypkg" in packages.python_modules()
    assert Packages().python_modules() == ()


def test_the_model_is_told_what_it_may_import(venv: Path, tmp_path: Path) -> None:
    (tmp_path / "node_modules" / "tinyjs").mkdir(parents=True)
    rt = Runtime(python_packages=venv, node_packages=tmp_path, pool=None)
    assert "Also importable: tinyextra, tinypkg." in rt.describe({}, language="python")
    assert "Also importable: tinyjs." in rt.describe({}, language="javascript")
    assert "Also importable" not in Runtime(pool=None).describe({}, language="python")


@pytest.mark.filterwarnings("ignore:tether. sandbox='process'")
@pytest.mark.parametrize("mode", list(START_MODES))
def test_packages_under_the_process_profile(venv: Path, mode: str) -> None:
    [result] = _runs(["import tinypkg\nreturn tinypkg.double(21)"], python_packages=venv,
                     pool=START_MODES[mode], sandbox="process")
    assert (result.status, result.value) == ("ok", 42), result.error
