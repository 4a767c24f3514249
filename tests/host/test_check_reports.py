"""The check before a run says whether it ran: in the result
(``result.check``), from ``Runtime.check`` (``checked``, ``reason``), on
``tether run --check``'s stderr and in ``tether doctor``; and it is
installed with every extra whose docs promise it."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from tether import Runtime, Status
from tether.host.check import python as check_python
from tether.host.check.checker import MAX_CHECK_SOURCE_BYTES
from tether.host.check.processes import NotChecked

ROOT = Path(__file__).resolve().parents[2]
#: The extras of the framework integrations, each of which checks every program.
INTEGRATIONS = ["pydantic-ai", "openai-agents", "anthropic", "langchain", "smolagents", "mcp"]


def test_every_integration_extra_installs_the_python_checker() -> None:
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]
    for extra in [*INTEGRATIONS, "check"]:
        assert any(d.startswith("ty>=") for d in extras[extra]), extra


def test_a_program_with_no_checker_runs_and_says_it_was_not_checked(
        monkeypatch: pytest.MonkeyPatch) -> None:
    def missing() -> str:
        raise NotChecked("ty is not installed")

    monkeypatch.setattr(check_python, "find_ty", missing)

    async def go() -> tuple[Any, Any]:
        async with Runtime(pool=None) as rt:
            return await rt.run("return 1 + 'a'", check=True), await rt.check("x: int = 'a'")

    ran, found = asyncio.run(go())
    assert ran.status is Status.ERROR and ran.error.type == "TypeError"
    assert ran.check is not None and not ran.check.checked
    assert ran.check.reason == "ty is not installed"
    assert ran.to_dict()["check"] == {"checked": False, "reason": "ty is not installed"}
    assert found == () and not found.checked and found.reason == "ty is not installed"


def test_a_checked_run_says_so_and_an_unchecked_one_says_nothing() -> None:
    async def go() -> tuple[Any, Any]:
        async with Runtime(pool=None) as rt:
            return await rt.run("return 1", check=True), await rt.run("return 1")

    checked, plain = asyncio.run(go())
    assert checked.ok and checked.check is not None and checked.check.checked
    assert plain.ok and plain.check is None


def tether(*args: str, stdin: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tether", *args], input=stdin,
                          capture_output=True, text=True, timeout=120, cwd=ROOT, check=False)


def test_run_check_says_on_one_line_when_the_check_could_not_run() -> None:
    program = "x = 1\n" * (MAX_CHECK_SOURCE_BYTES // 6 + 1) + "return x\n"
    done = tether("run", "-", "--check", stdin=program)
    assert done.returncode == 0, done.stderr
    [line] = [line for line in done.stderr.splitlines() if "not checked" in line]
    assert line.startswith("tether: not checked: the program is ")
    done = tether("run", "-", "--check", "--json", stdin=program)
    assert json.loads(done.stdout)["check"]["checked"] is False
    assert "tether: not checked: " in done.stderr
    done = tether("run", "-", "--check", stdin="return 1\n")
    assert "not checked" not in done.stderr, done.stderr


def test_doctor_says_whether_each_language_is_checked() -> None:
    out = subprocess.run([sys.executable, "-m", "tether", "doctor", "--repeat", "1"],
                         capture_output=True, text=True, timeout=300, check=True).stdout
    assert "python check           available under " in out, out
    assert "javascript check       available under " in out, out
