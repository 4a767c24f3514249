"""``tether run``: output, --json, exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def tether(*args: str, stdin: str | None = None, cwd: Path = ROOT,
           env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tether", *args], input=stdin,
                          capture_output=True, text=True, timeout=60, cwd=cwd, check=False,
                          env=env)


def test_demo_runs() -> None:
    done = tether("run", "examples/demo.py", "--bindings", "tether.demo:BINDINGS")
    assert done.returncode == 0, done.stderr
    assert "Atlantis: unavailable (KeyError)" in done.stdout
    assert '"mean_celsius": 21.0' in done.stdout


def test_the_demo_runs_from_the_package_without_a_checkout(tmp_path: Path) -> None:
    done = tether("run", "--demo", cwd=tmp_path)  # no examples/ there
    assert done.returncode == 0, done.stderr
    assert "Atlantis: unavailable (KeyError)" in done.stdout


def test_the_packaged_demo_is_the_example() -> None:
    from tether import demo

    assert (ROOT / "examples" / "demo.py").read_text(encoding="utf-8") == demo.PROGRAM


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
    assert tether("run", "-", stdin="print(6 * 7)").stdout == "42\n"  # Python by default


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
        ["run", "examples/demo.py", "--bindings", "nomodule:X"],
        ["run", "examples/demo.py", "--bindings", "tether.demo"],
        ["run", "examples/demo.py", "--lang", "cobol"],
        ["run", "examples/demo.py", "--timeout", "-1"],
        ["run", "-", "--timeout", "inf"],
        ["run", "-", "--timeout", "nan"],
        ["run", "-", "--call-timeout", "inf"],
        ["run", "-", "--cpu-seconds", str(2**70)],
        ["run", "-", "--memory", f"{2**40}G"],
        ["run", "-", "--open-files", "-1"],
        ["doctor", "--repeat", "0"],
        ["doctor", "--repeat", "-3"],
        ["run", "-", "--timeout", "soon"],
        ["run", "-", "--no-such-flag"],
        ["run"],
        ["run", "x.py", "--demo"],
        ["mcp", "--memory", "lots"],
        ["frobnicate"],
    ],
)
def test_usage_errors_exit_2_with_one_line(args: list[str]) -> None:
    done = tether(*args, stdin="")
    assert done.returncode == 2
    assert done.stdout == ""
    # One line, even for a flag's bad value: not the whole usage block.
    assert done.stderr.strip().count("\n") == 0, done.stderr
    assert "usage:" not in done.stderr


def test_language_from_the_extension(tmp_path: Path) -> None:
    program = tmp_path / "p.ts"
    program.write_text("const n: number = 6 * 7\nconsole.log(n)\nreturn n")
    done = tether("run", str(program), "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["value"] == 42


def test_a_missing_guest_is_one_line_exit_2_and_json(tmp_path: Path) -> None:
    program = tmp_path / "hello.js"
    program.write_text("console.log(1)")
    no_node = {**os.environ, "PATH": str(tmp_path)}
    done = tether("run", str(program), env=no_node)
    assert done.returncode == 2
    assert done.stderr.startswith("tether: JavaScript/TypeScript need Node.js")
    assert done.stderr.count("\n") == 1
    as_json = tether("run", str(program), "--json", env=no_node)
    assert as_json.returncode == 2
    assert json.loads(as_json.stdout)["error"]["type"] == "GuestUnavailable"


def test_bindings_from_the_current_directory(tmp_path: Path) -> None:
    (tmp_path / "mybind.py").write_text("async def twice(x):\n    return 2 * x\nB = [twice]\n")
    done = tether("run", "-", "--bindings", "mybind:B", stdin="return await twice(21)",
                  cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "=> 42\n"
    (tmp_path / "broken.py").write_text("B = 1 / 0\n")
    broken = tether("run", "-", "--bindings", "broken:B", stdin="", cwd=tmp_path)
    assert broken.returncode == 2
    assert broken.stderr == ("tether: --bindings 'broken:B': importing broken raised "
                             "ZeroDivisionError: division by zero\n")


def test_limit_and_env_flags() -> None:
    program = "import os\nprint('x' * 5000)\nreturn os.environ['GREETING']"
    done = tether("run", "-", "--json", "--output-bytes", "1K", "--memory", "512M",
                  "--env", "GREETING=hi", "--call-timeout", "5", stdin=program)
    result = json.loads(done.stdout)
    assert (result["status"], result["value"]) == ("ok", "hi")
    assert result["stats"]["output_truncated"]
    bad = tether("run", "-", "--memory", "lots", stdin="")
    assert bad.returncode == 2 and "is not a size" in bad.stderr


def test_messages_say_things_once() -> None:
    timeout = tether("run", "-", "--timeout", "0.5", stdin="while True: pass")
    assert timeout.stderr == "tether: timeout: the program did not finish within 0.5 s\n"
    error = tether("run", "-", stdin="raise ValueError('boom')")
    assert error.stderr.count("ValueError: boom") == 1
    assert error.stderr.endswith("ValueError: boom\n")


def test_the_value_starts_its_own_line() -> None:
    done = tether("run", "-", stdin="print('partial', end='')\nreturn 1")
    assert done.stdout == "partial\n=> 1\n"


def test_version_and_help() -> None:
    from tether import __version__

    assert tether("--version").stdout == f"tether {__version__}\n"
    top = tether("--help").stdout
    assert "``" not in top
    assert "(default: 30)" in tether("run", "--help").stdout


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


def test_output_is_live_and_events_are_json_lines(tmp_path: Path) -> None:
    program = tmp_path / "p.py"
    program.write_text("print('a')\nreturn 1\n")
    live = tether("run", str(program))
    buffered = tether("run", str(program), "--buffer")
    assert live.stdout == buffered.stdout == "a\n=> 1\n"
    done = tether("run", str(program), "--json", "--events")
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert lines[0] == {"event": "printed", "stream": "stdout", "text": "a\n"}
    assert lines[-1]["status"] == "ok" and lines[-1]["value"] == 1
