"""``tether run``: output, --json, exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def tether(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tether", *args], input=stdin,
                          capture_output=True, text=True, timeout=60, cwd=ROOT, check=False)


def test_demo_runs() -> None:
    done = tether("run", "examples/demo.py", "--bindings", "tether.demo:BINDINGS")
    assert done.returncode == 0, done.stderr
    assert "Atlantis: unavailable (KeyError)" in done.stdout
    assert '"mean_celsius": 21.0' in done.stdout


def test_json_is_one_object(tmp_path: Path) -> None:
    program = tmp_path / "p.py"
    program.write_text("print('hi')\nreturn {'b': b'\\x00', 'n': float('nan')}")
    done = tether("run", str(program), "--json")
    assert done.returncode == 0
    result = json.loads(done.stdout)
    assert result["status"] == "ok"
    assert result["value"] == {"b": {"$base64": "AA=="}, "n": {"$float": "nan"}}
    assert result["output"] == "hi\n"
    assert result["error"] is None
    assert set(result["stats"]) >= {"wall_time", "calls", "output_truncated"}


def test_program_error_exits_1_with_the_error(tmp_path: Path) -> None:
    program = tmp_path / "p.py"
    program.write_text("1 / 0")
    done = tether("run", str(program), "--json")
    assert done.returncode == 1
    error = json.loads(done.stdout)["error"]
    assert (error["type"], error["line"]) == ("ZeroDivisionError", 1)
    human = tether("run", str(program))
    assert human.returncode == 1
    assert "ZeroDivisionError: division by zero" in human.stderr


def test_program_from_stdin() -> None:
    done = tether("run", "-", "--lang", "python", stdin="print(6 * 7)")
    assert (done.returncode, done.stdout) == (0, "42\n")


def test_timeout_flag() -> None:
    done = tether("run", "-", "--lang", "python", "--timeout", "0.5", "--json",
                  stdin="while True: pass")
    assert done.returncode == 1
    assert json.loads(done.stdout)["status"] == "timeout"


@pytest.mark.parametrize(
    "args",
    [
        ["run", "missing.py"],
        ["run", "README.md"],
        ["run", "-"],
        ["run", "examples/demo.py", "--bindings", "nomodule:X"],
        ["run", "examples/demo.py", "--bindings", "tether.demo"],
        ["run", "examples/demo.py", "--lang", "cobol"],
        ["run", "examples/demo.py", "--timeout", "-1"],
    ],
)
def test_usage_errors_exit_2_with_one_line(args: list[str]) -> None:
    done = tether(*args, stdin="")
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.strip().count("\n") <= 1 or "usage:" in done.stderr


def test_language_from_the_extension(tmp_path: Path) -> None:
    program = tmp_path / "p.ts"
    program.write_text("const n: number = 6 * 7\nconsole.log(n)\nreturn n")
    done = tether("run", str(program), "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["value"] == 42


def test_describe_prints_the_text_for_the_demo_bindings() -> None:
    golden = ROOT / "tests" / "describe" / "golden"
    for language in ("python", "javascript", "typescript"):
        done = tether("describe", "--bindings", "tether.demo:BINDINGS", "--language", language)
        assert done.returncode == 0, done.stderr
        assert done.stdout == (golden / f"demo-{language}.txt").read_text()
    done = tether("describe", "--bindings", "tether.demo:BINDINGS", "--summary")
    assert "- weather: Current weather for ``city``" in done.stdout


def test_run_check_refuses_a_mistyped_program(tmp_path: Path) -> None:
    program = tmp_path / "p.ts"
    program.write_text("const n: number = await add(1, 2);\nconst s: string = n;\n")
    done = tether("run", str(program), "--check", "--bindings", "tether.demo:BINDINGS")
    assert done.returncode == 1
    assert "line 2, column 7: Type 'number' is not assignable to type 'string'." in done.stderr
    assert "tether: invalid: " in done.stderr
