"""What the differential test needs to know of plain Node, for the
``javascript`` and ``typescript`` corpora: how a corpus file runs under
``node`` and how both sides' runs read as the fields of an ``Outcome``
(stdout, stderr, exit_code, error_type, message, line).

A corpus file's first line says how plain Node runs it: ``// mode: module``
(as an ES module, ``.mjs``: top-level await, static imports) or
``// mode: script`` (CommonJS, ``.js``); tether runs either as it is. Node 20
strips no TypeScript types: a ``.ts`` file is stripped with the guest's own
amaro (strip-only, positions kept) and runs as JavaScript.

What Node prints of an uncaught error (the file and line, the source line, a
caret, then the error, or the value thrown) is cut off its stderr and read
as the error's type, message and line; tether's ``uncaught KIND: TEXT`` for
a thrown value that is not an Error (R-DONE-6) reads as Node's TEXT.

The harness's ``Language`` for each corpus (test_differential.py)::

    Language(name="javascript", suffix=".js", file_name="", command=node.command,
             unavailable=node.unavailable,
             plain=lambda run: Outcome(**node.plain(run.stdout, run.stderr,
                                                    run.exit_code, run.path)),
             tether=lambda result: Outcome(**node.tether(result)))

and the same with ``typescript`` and ``.ts``.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

from tether import RunResult

NODE = shutil.which("node") or "node"
GUEST = Path(__file__).resolve().parents[2] / "guest" / "node"
PROGRAM = "<program>"

_STRIP = ("const amaro = require('amaro'); let text = '';"
          "process.stdin.on('data', (d) => { text += d; }).on('end', () =>"
          " process.stdout.write(amaro.transformSync(text, { mode: 'strip-only' }).code));")
_HEADER = re.compile(r"^(?:file://)?(?P<file>\S+?):(?P<line>\d+)$")
_CARET = re.compile(r"^\s*\^+\s*$")
_ERROR = re.compile(r"^(?P<type>[A-Za-z_$][\w$]*)(?: \[\w+\])?: (?P<message>.*)$")
_FRAME = re.compile(r"<program>:(\d+):\d+")
_UNSETTLED = "Warning: Detected unsettled top-level await"
_UNCAUGHT = re.compile(r"^uncaught [a-z]+: ", re.S)


def unavailable() -> str | None:
    """Why plain Node cannot run the corpus here, or None."""
    if shutil.which("node") is None:
        return "no node on PATH"
    if not (GUEST / "node_modules" / "amaro").is_dir():
        return "the Node guest's packages are not installed (npm ci --prefix guest/node)"
    return None


def is_module(source: str) -> bool:
    """Whether the corpus file says plain Node runs it as an ES module (its
    first line, or its second after a shebang)."""
    lines = source.split("\n", 2)
    head = lines[1] if source.startswith("#!") and len(lines) > 1 else lines[0]
    return "mode: module" in head


def _runs_as(path: Path, source: str) -> Path:
    return path.with_suffix(".mjs" if is_module(source) else ".js")


def command(path: Path) -> list[str]:
    """The command that runs the corpus file at ``path`` under plain Node,
    after writing beside it the file Node runs: the file itself as ``.mjs``
    or ``.js``, TypeScript's types stripped."""
    source = path.read_text()
    target = _runs_as(path, source)
    if path.suffix == ".ts":
        source = subprocess.run([NODE, "-e", _STRIP], input=source, capture_output=True,
                                text=True, cwd=GUEST, check=True, timeout=60).stdout
    target.write_text(source)
    return [NODE, str(target)]


def plain(stdout: str, stderr: str, exit_code: int, path: str) -> dict[str, Any]:
    """A plain run's outcome: the program's path is ``<program>``, and Node's
    report of an uncaught error is cut off stderr and read."""
    for name in (str(Path(path).with_suffix(".mjs")), str(Path(path).with_suffix(".js")), path):
        stdout, stderr = (text.replace(f"file://{name}", PROGRAM).replace(name, PROGRAM)
                          for text in (stdout, stderr))
    lines = stderr.split("\n")
    if exit_code == 0:
        return {"stdout": stdout, "stderr": stderr, "exit_code": 0}
    start = next((i for i in range(len(lines) - 1, -1, -1) if _reports(lines, i)), None)
    if start is None:  # an exit with a status: nothing reported
        return {"stdout": stdout, "stderr": stderr, "exit_code": exit_code,
                "error_type": "SystemExit", "message": str(exit_code)}
    kept = lines[:start]
    if kept and kept[-1] == "":  # the blank line Node puts before its report
        kept.pop()
    program_stderr = "\n".join(kept) + "\n" if kept else ""
    report = lines[start:]
    if report[0].startswith(_UNSETTLED):
        where = re.search(r":(\d+)$", report[0])
        return {"stdout": stdout, "stderr": program_stderr, "exit_code": exit_code,
                "error_type": "Error", "message": "unsettled top-level await",
                "line": int(where.group(1)) if where else None}
    header = _HEADER.match(report[0])
    line = int(header["line"]) if header and header["file"] == PROGRAM else None
    if line is None:  # raised in Node's own code: the program's innermost frame
        frame = next((m for row in report for m in [_FRAME.search(row)] if m), None)
        line = int(frame.group(1)) if frame else None
    rest = report[3:]
    while rest and rest[0] == "":
        rest = rest[1:]
    body = []
    for row in rest:
        if row.startswith(("    at ", "(Use `node", "Thrown at:", "Node.js v")):
            break
        body.append(row)
    while body and body[-1] == "":
        body.pop()
    error = _ERROR.match(body[0]) if body else None
    if error is not None:
        error_type, message = error["type"], "\n".join([error["message"], *body[1:]])
    else:  # a thrown value that is not an Error: Node shows it as util.inspect does
        error_type, message = "Error", "\n".join(body)
    if error_type == "UnhandledPromiseRejection":  # a rejection with a value that is not an Error
        reason = re.search(r'rejected with the reason "(.*)"\.', message, re.S)
        error_type, message = "Error", reason.group(1) if reason else message
    return {"stdout": stdout, "stderr": program_stderr, "exit_code": exit_code,
            "error_type": error_type, "message": message, "line": line}


def _reports(lines: list[str], index: int) -> bool:
    """Whether Node's report of an uncaught error starts at ``lines[index]``:
    a file and line, the source line, a caret (or the unsettled await's warning)."""
    line = lines[index]
    return line.startswith(_UNSETTLED) or bool(
        _HEADER.match(line) and index + 2 < len(lines) and _CARET.match(lines[index + 2]))


def tether(result: RunResult) -> dict[str, Any]:
    """A tether run's outcome, with the exit status plain Node would end with."""
    error = result.error
    if result.ok or error is None:
        return {"stdout": result.stdout, "stderr": result.stderr, "exit_code": 0}
    if result.status != "error":
        return {"stdout": result.stdout, "stderr": result.stderr, "exit_code": -1,
                "error_type": f"{result.status}: {error.type}", "message": error.message,
                "line": error.line}
    message, status = error.message, 1
    if error.type == "SystemExit":
        status = int(message) & 0xFF if message.lstrip("-").isdigit() else 1
    elif message.startswith("unsettled top-level await"):
        message, status = "unsettled top-level await", 13
    elif error.type == "Error":
        message = _UNCAUGHT.sub("", message, count=1)
    return {"stdout": result.stdout, "stderr": result.stderr, "exit_code": status,
            "error_type": error.type, "message": message, "line": error.line}
