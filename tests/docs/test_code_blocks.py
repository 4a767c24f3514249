"""Every code block of the README and the docs runs here, as a reader would
run it.

- A Python block that is a whole module is run as a script (next to the
  page's other modules, so a block starting ``# agent.py`` can be imported by
  the next) and type-checked with ``mypy --strict``, the way users call the
  API. Anthropic's SDK talks to a scripted server on localhost.
- A Python, JavaScript or TypeScript block with top-level ``await`` or
  ``return`` is a program body: tether runs it with the demo bindings and it
  must return.
- A shell block's ``tether`` commands must parse, and ``tether run`` ones
  (fed by ``echo`` or not), ``python examples/...`` ones and the codec's
  fuzzer (for a few runs) must succeed;
  ``make`` targets, ``pip install`` extras and files must exist.
- Any other block must be marked as not code (``text``); an unknown language
  fails, so a new kind of block gets a way to run before it is published.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import re
import shlex
import subprocess
import sys
import threading
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tether import Runtime
from tether.cli import _parser
from tether.demo import BINDINGS

ROOT = Path(__file__).resolve().parents[2]
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")),
             ROOT / "conformance" / "README.md", *sorted((ROOT / "spec").glob("*.md"))]
FENCE = re.compile(r"^(?P<fence>`{3,})(?P<lang>[^\n`]*)\n(?P<body>.*?)^(?P=fence)[ \t]*$",
                   re.MULTILINE | re.DOTALL)
PROGRAM_LANGUAGES = {"python": "python", "javascript": "javascript", "js": "javascript",
                     "typescript": "typescript", "ts": "typescript"}
SHELL = {"sh", "bash", "console"}
NOT_CODE = {"", "text", "cddl"}
#: Set-up commands a reader runs on their own machine; the tests do not.
SYSTEM_COMMANDS = {"apt-get", "npm"}


@dataclass(frozen=True)
class Block:
    document: Path
    line: int
    lang: str
    body: str

    @property
    def id(self) -> str:
        return f"{self.document.relative_to(ROOT)}:{self.line}"

    @property
    def module_name(self) -> str | None:
        """A Python block that is a module: its file name (from a first line
        ``# name.py``, else made from where it is)."""
        if self.lang != "python" or _is_program_body(self.body):
            return None
        first = self.body.partition("\n")[0]
        if re.fullmatch(r"# \w+\.py", first):
            return first[2:-3]
        stem = re.sub(r"\W", "_", self.document.relative_to(ROOT).with_suffix("").as_posix())
        return f"{stem}_{self.line}"


def _is_program_body(source: str) -> bool:
    try:
        compile(source, "<block>", "exec")
    except SyntaxError as exc:
        return "outside function" in str(exc.msg)
    return False


def _blocks() -> list[Block]:
    found = []
    for document in DOCUMENTS:
        text = document.read_text(encoding="utf-8")
        for match in FENCE.finditer(text):
            lang = match["lang"].strip()
            if lang.startswith("{"):  # a MyST directive (toctree, include, eval-rst)
                continue
            line = text.count("\n", 0, match.start()) + 1
            found.append(Block(document, line, lang, match["body"]))
    return found


BLOCKS = _blocks()
MODULES = [b for b in BLOCKS if b.module_name is not None]
PROGRAMS = [b for b in BLOCKS if b.lang in PROGRAM_LANGUAGES and b.module_name is None]
SHELL_BLOCKS = [b for b in BLOCKS if b.lang in SHELL]


def test_the_documents_have_code() -> None:
    assert MODULES and PROGRAMS and SHELL_BLOCKS
    assert {b.document.name for b in MODULES} >= {"README.md", "tutorial.md", "usage.md"}


@pytest.mark.parametrize("block", BLOCKS, ids=lambda b: b.id)
def test_every_block_has_a_known_language(block: Block) -> None:
    known = PROGRAM_LANGUAGES.keys() | SHELL | NOT_CODE
    assert block.lang in known, f"{block.id}: a {block.lang!r} block: teach this test to run it"


# -- Python modules ---------------------------------------------------------------


@pytest.fixture(scope="module")
def modules(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every module block as a file, in one folder."""
    folder = tmp_path_factory.mktemp("doc-modules")
    for block in MODULES:
        path = folder / f"{block.module_name}.py"
        assert not path.exists(), f"{block.id}: a second {path.name}"
        path.write_text(block.body, encoding="utf-8")
    return folder


class _ScriptedAnthropic(BaseHTTPRequestHandler):
    """The Messages API, scripted: a program first, then an answer."""

    def do_POST(self) -> None:
        request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        assert request["system"] and request["max_tokens"]
        last = request["messages"][-1]["content"]
        text = ("It is 6 °C in Oslo." if last.startswith("Printed") else
                "```python\nreturn await weather('Oslo')\n```")
        body = json.dumps({
            "id": "msg_1", "type": "message", "role": "assistant", "model": request["model"],
            "content": [{"type": "text", "text": text}], "stop_reason": "end_turn",
            "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1},
        }).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def anthropic_server() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _ScriptedAnthropic)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()
    thread.join()


@pytest.mark.parametrize("block", MODULES, ids=lambda b: b.id)
def test_module_runs(block: Block, modules: Path, anthropic_server: str) -> None:
    env = {**os.environ, "ANTHROPIC_API_KEY": "test", "ANTHROPIC_BASE_URL": anthropic_server,
           "NO_PROXY": "127.0.0.1", "no_proxy": "127.0.0.1"}
    done = subprocess.run([sys.executable, f"{block.module_name}.py"], cwd=modules, env=env,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, f"{block.id}:\n{done.stdout}\n{done.stderr}"


def test_modules_type_check(modules: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--config-file", str(ROOT / "pyproject.toml"),
         "--cache-dir", str(ROOT / ".mypy_cache"), *sorted(p.name for p in modules.glob("*.py"))],
        cwd=modules, env={**os.environ, "MYPYPATH": str(ROOT)},
        capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout + done.stderr


# -- program bodies ---------------------------------------------------------------


@pytest.mark.parametrize("block", PROGRAMS, ids=lambda b: b.id)
def test_program_returns(block: Block) -> None:
    async def go() -> Any:
        async with Runtime(pool=None) as rt:
            return await rt.run(block.body, language=PROGRAM_LANGUAGES[block.lang],
                                bindings=BINDINGS)

    result = asyncio.run(go())
    assert result.ok, f"{block.id}: {result.status}: {result.error}"


# -- shell commands ---------------------------------------------------------------


def _commands(body: str) -> list[list[str]]:
    joined = re.sub(r"\\\n\s*", " ", body)
    return [shlex.split(line, comments=True) for line in joined.splitlines()
            if shlex.split(line, comments=True)]


def _make_targets() -> set[str]:
    text = (ROOT / "Makefile").read_text()
    return set(re.findall(r"^([\w-]+):", text, re.MULTILINE))


#: tether as the docs install it: from a checkout (./tether), or its wheel.
_TETHER = re.compile(r"(?:\./tether|dist/tether-[\w.]+-py3-none-any\.whl)"
                     r"(?:\[(?P<extras>[\w,-]*)\])?")


def _check_pip_install(words: list[str]) -> None:
    extras = set(tomllib.loads((ROOT / "pyproject.toml").read_text())
                 ["project"]["optional-dependencies"])
    for requirement in words:
        tether = _TETHER.fullmatch(requirement)
        if tether is not None:
            assert set(filter(None, (tether["extras"] or "").split(","))) <= extras, requirement
        else:
            # tether is not on PyPI: it is never installed by its bare name.
            assert not requirement.startswith("tether"), requirement
            __import__(requirement)  # a package the docs' code uses: the tests have it


def _run_fuzzer(block: Block, args: list[str], folder: Path) -> None:
    """``python -m tether.codec.fuzz``: writing seeds as written; fuzzing for
    a few runs only, where Atheris is installed."""
    if args[2:3] != ["--write-seeds"]:
        if importlib.util.find_spec("atheris") is None:
            pytest.skip("Atheris is not installed (the fuzz extra)")
        args = [*args, "-runs=50"]
    done = subprocess.run([sys.executable, *args], cwd=folder, capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 0, f"{block.id}: {args}\n{done.stderr[-2000:]}"


@pytest.mark.parametrize("block", SHELL_BLOCKS, ids=lambda b: b.id)
def test_shell_commands(block: Block, tmp_path: Path) -> None:
    for line in _commands(block.body):
        stdin, command = None, line
        if "|" in line:  # echo 'program' | tether run - ...
            echo, command = line[: line.index("|")], line[line.index("|") + 1 :]
            assert echo[0] == "echo" and len(echo) == 2, f"{block.id}: {echo}"
            stdin = echo[1] + "\n"
        program, args = command[0], command[1:]
        if program == "tether":
            _parser().parse_args(args)
            if args[0] == "run":
                done = subprocess.run([sys.executable, "-m", "tether", *args], cwd=ROOT,
                                      input=stdin, capture_output=True, text=True, timeout=60,
                                      check=False)
                assert done.returncode == 0, f"{block.id}: {command}\n{done.stderr}"
        elif program == "make":
            assert set(args) <= _make_targets(), f"{block.id}: {command}"
        elif program == "pip" and args[:1] == ["install"]:
            _check_pip_install(args[1:])
        elif program == "pip" and args[:1] == ["wheel"]:
            assert args[-1] == "./tether", f"{block.id}: {command}"
        elif program == "bash":
            assert (ROOT / args[0]).is_file(), f"{block.id}: {command}"
        elif program == "python" and args[:2] == ["-m", "tether.codec.fuzz"]:
            _run_fuzzer(block, args, tmp_path)
        elif program == "python" and args[:1] and args[0].startswith("examples/"):
            done = subprocess.run([sys.executable, *args], cwd=ROOT, capture_output=True,
                                  text=True, timeout=120, check=False)
            assert done.returncode == 0, f"{block.id}: {command}\n{done.stderr}"
        else:
            assert program in SYSTEM_COMMANDS, f"{block.id}: {command}: teach this test to run it"
