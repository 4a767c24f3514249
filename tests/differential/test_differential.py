"""The standing differential test: programs run through tether and through the
plain interpreter side by side, compared on what they print (stdout and
stderr, each in order), how they end (the exit status), and the type,
message and line of the error that ended them.

Corpora:

- ``python``: ``corpus/python/*.py``, model-style programs this project
  writes itself, run as ``python3 -I -u FILE`` (``-u``: a terminal's order of
  print and raw writes, which tether keeps) and as ``Runtime.run(source)``.
- ``cpython-doctests``: the doctests of the interpreter's own standard
  library and ``Lib/test``, found at test time with ``doctest.DocTestFinder``
  in the installed interpreter (nothing is copied here): each docstring's
  examples are one program that runs them in order and prints what the
  interactive interpreter would. Skipped where the interpreter has too few.
- ``javascript``, ``typescript``: ``corpus/javascript/*.js`` and
  ``corpus/typescript/*.ts``, for a ``Language`` that knows plain Node
  (``node FILE``, and Node's type stripping for TypeScript).

A program of a corpus either matches, or is listed with its reason in
``known_differences.toml``; a listed program that matches fails the test
(the entry is stale), as protobuf's conformance failure lists do.

The plain run's output is made comparable first: the program's path becomes
``<program>`` (tether's name for it), memory addresses become ``0x…``, and
tracebacks keep the program's own frames only (R-DONE-2: tether's do).
tether's error is printed as the interpreter prints it at exit: a
traceback, or an exit's text and status (KeyboardInterrupt: as of SIGINT);
where that stands among what the program printed as it ended (atexit,
``__del__``) tether cannot say, so either place matches. What the run
contract makes different is no difference: every compile error is typed
SyntaxError (R-DONE-6).

A language is a ``Language`` in ``LANGUAGES``, under the name of its
corpus folder: how its plain interpreter runs a file and how both sides'
runs become an ``Outcome``. Every program runs once on each side, all at
once (``CONCURRENCY`` at a time each, through one Runtime and its pool).

Match rates, printed at the end of every test session that runs this
module; "before" is the tree before the fixes of issue #41 run against the
same corpus and harness:

- python: 324 of 413 programs before (78.5%), 409 of 413 after (99.0%;
  the other 4 are known differences);
- cpython-doctests: 105 of 105 programs (1167 examples) before and after;
- javascript and typescript: 183 of 274 programs before (66.8%), 266 of 274
  after (97.1%; the other 8 are known differences).
"""

from __future__ import annotations

import asyncio
import dataclasses
import difflib
import doctest
import importlib
import os
import re
import sys
import tempfile
import tomllib
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tether import Limits, PoolConfig, RunResult, Runtime

from . import node

HERE = Path(__file__).parent
CORPUS = HERE / "corpus"
KNOWN = HERE / "known_differences.toml"
#: The name tether's tracebacks give the program's file.
PROGRAM = "<program>"
TIMEOUT = 20.0
#: Runs at once on each side (a machine of two cores runs both sides together).
CONCURRENCY = 4
#: Lines of a difference shown at most.
DIFF_LINES = 30


@dataclass(frozen=True, slots=True)
class Outcome:
    """A run as the plain interpreter shows it: its two streams, its exit
    status, and the error that ended it (None where not known)."""

    stdout: str
    stderr: str
    exit_code: int
    error_type: str | None = None
    message: str | None = None
    line: int | None = None
    #: tether's error as the interpreter prints it at exit (a traceback, an
    #: exit's text), apart from ``stderr``: where it stands among what the
    #: program printed as it ended (``atexit``, ``__del__``) is not known.
    report: str = ""


@dataclass(frozen=True, slots=True)
class Plain:
    """What a plain interpreter's run left: its streams and exit status, and
    the path the program had."""

    stdout: str
    stderr: str
    exit_code: int
    path: str


@dataclass(frozen=True)
class Language:
    """What the harness needs to know of one language."""

    #: tether's name for it (``Runtime.run(language=...)``).
    name: str
    suffix: str
    #: The name of the program's file for the plain interpreter (the corpus
    #: file's own name when empty).
    file_name: str
    #: The plain interpreter's command line for a program file.
    command: Callable[[Path], list[str]]
    #: Why the plain interpreter cannot run here, or None.
    unavailable: Callable[[], str | None]
    #: A plain run, as an outcome.
    plain: Callable[[Plain], Outcome]
    #: A tether run, as an outcome.
    tether: Callable[[RunResult], Outcome]


@dataclass(frozen=True)
class Program:
    corpus: str
    id: str
    source: str
    language: Language


# -- what both sides' texts are made comparable by --------------------------

_ADDRESS = re.compile(r"0x[0-9a-fA-F]{4,}")
_FRAME = re.compile(r'^(?P<prefix>[ |+\-]*?)  File "(?P<file>[^"]*)", line (?P<line>\d+)')
_HEADER = re.compile(
    r"^(?P<prefix>[ |]*)(?:\+ )?(?:Exception Group )?Traceback \(most recent call last\):$")


def _addresses(text: str) -> str:
    return _ADDRESS.sub("0x…", text)


def own_frames(text: str) -> str:
    """``text`` with the frames of tracebacks that are not the program's
    left out (each frame: its ``File`` line and the lines indented under
    it), and a ``Traceback`` header left without frames with them."""
    lines = text.split("\n")
    kept: list[str] = []
    index = 0
    while index < len(lines):
        line = lines[index]
        frame = _FRAME.match(line)
        if frame is None:
            kept.append(line)
            index += 1
            continue
        body = frame["prefix"] + "    "
        end = index + 1
        while end < len(lines) and lines[end].startswith(body) and not _FRAME.match(lines[end]):
            end += 1
        if frame["file"] == PROGRAM:
            kept.extend(lines[index:end])
        index = end
    # A header whose frames all went (an error raised in library code only).
    return "\n".join(line for i, line in enumerate(kept) if not (
        _HEADER.match(line) and (i + 1 == len(kept) or not _FRAME.match(kept[i + 1]))))


# -- Python ------------------------------------------------------------------

#: The interpreter the Python guest runs on, outside the test's virtual
#: environment (the guest sees the standard library only).
PYTHON = getattr(sys, "_base_executable", sys.executable)


#: Compile errors of every kind are typed SyntaxError (R-DONE-6).
_COMPILE_ERRORS = {"IndentationError": "SyntaxError", "TabError": "SyntaxError"}


def _python_plain(run: Plain) -> Outcome:
    stdout = _addresses(run.stdout.replace(run.path, PROGRAM))
    stderr = own_frames(_addresses(run.stderr.replace(run.path, PROGRAM)))
    if run.exit_code == 0:
        return Outcome(stdout, stderr, 0)
    error_type, message, line = _python_report(stderr)
    if error_type is None:  # no traceback: an exit with a status, or with text
        error_type = "SystemExit"
        message = str(run.exit_code) if run.exit_code != 1 or not stderr else None
    return Outcome(stdout, stderr, run.exit_code, _COMPILE_ERRORS.get(error_type, error_type),
                   message, line)


def _python_report(stderr: str) -> tuple[str | None, str | None, int | None]:
    """The type, message and line of the error the interpreter reported at
    the end of ``stderr`` (the last exception of a chain, a group's own)."""
    lines = stderr.rstrip("\n").split("\n")
    start = next((i for i in range(len(lines) - 1, -1, -1)
                  if re.match(r"^(  \+ Exception Group )?Traceback \(most recent call last\):$",
                              lines[i])), None)
    if start is None:  # a SyntaxError: its File line, no header
        start = next((i for i in range(len(lines) - 1, -1, -1)
                      if _FRAME.match(lines[i]) and ", in " not in lines[i]), None)
        if start is None:
            return None, None, None
    line = None
    after = start + 1 if lines[start].endswith(":") else start
    prefix = ""
    for index in range(start, len(lines)):
        frame = _FRAME.match(lines[index])
        # The report's own frames, not those of a group's members.
        if frame is not None and len(frame["prefix"]) <= 4 and frame["file"] == PROGRAM:
            line, prefix = int(frame["line"]), frame["prefix"]
            after = index + 1
            while after < len(lines) and lines[after].startswith(prefix + "    "):
                after += 1
    while after < len(lines) and lines[after].strip().startswith("[Previous line repeated"):
        after += 1
    if after >= len(lines):
        return None, None, line
    text = "\n".join(row[len(prefix):] if row.startswith(prefix) else row
                     for row in lines[after:])
    first = text.split("\n", 1)[0]
    qualified, _, _ = first.partition(": ")
    if not re.fullmatch(r"[\w.]+", qualified):
        return None, None, line
    return qualified.rsplit(".", 1)[-1], text[len(qualified) + 2:], line


def _python_tether(result: RunResult) -> Outcome:
    stdout, stderr = _addresses(result.stdout), _addresses(result.stderr)
    error = result.error
    if result.ok or error is None:
        return Outcome(stdout, own_frames(stderr), 0)
    if result.status != "error":
        return Outcome(stdout, own_frames(stderr), -1, f"{result.status}: {error.type}",
                       error.message, error.line)
    if error.type == "SystemExit":
        try:
            status = int({"True": "1", "False": "0"}.get(error.message, error.message))
        except ValueError:  # an exit with text: printed, status 1
            return Outcome(stdout, own_frames(stderr), 1, "SystemExit", None, error.line,
                           report=error.message + "\n")
        return Outcome(stdout, own_frames(stderr), status & 0xFF, "SystemExit", error.message,
                       error.line)
    # The interpreter ends of an uncaught KeyboardInterrupt as of SIGINT.
    status = -2 if error.type == "KeyboardInterrupt" else 1
    return Outcome(stdout, own_frames(stderr), status, error.type, _addresses(error.message),
                   error.line, report=own_frames(_addresses(error.traceback)))


PYTHON_LANGUAGE = Language(
    name="python", suffix=".py", file_name=PROGRAM,  # its basename in sys.argv too
    command=lambda path: [PYTHON, "-I", "-u", str(path)],
    unavailable=lambda: None,
    plain=_python_plain, tether=_python_tether)


# -- the corpora --------------------------------------------------------------

def _files(corpus: str, language: Language) -> list[Program]:
    return [Program(corpus, path.stem, path.read_text(), language)
            for path in sorted((CORPUS / corpus).glob(f"*{language.suffix}"))]


#: Modules whose doctests make the ``cpython-doctests`` corpus: deterministic
#: ones (no clocks, randomness, addresses or files), from the standard
#: library and from ``Lib/test`` where the interpreter has it.
DOCTEST_MODULES = (
    "fractions", "statistics", "difflib", "textwrap", "collections", "heapq", "json",
    "shlex", "ipaddress", "decimal", "functools", "operator", "itertools", "string",
    "test.test_genexps", "test.test_listcomps", "test.test_setcomps", "test.test_unpack",
    "test.test_unpack_ex", "test.test_extcall", "test.test_descrtut", "test.test_generators",
    "test.test_deque", "test.test_metaclass", "test.test_defaultdict",
)
#: Fewer examples than this: the corpus is skipped as unavailable.
DOCTEST_EXAMPLES = 100
#: Examples per program at most (a long docstring becomes several programs).
EXAMPLES_PER_PROGRAM = 40

_DOCTEST_RUNNER = '''\
import sys


def __example(source):
    """One example, as the interactive interpreter runs it."""
    try:
        exec(compile(source, "<example>", "single"), globals())
    except BaseException as exc:
        print(f"{type(exc).__name__}: {exc}")


'''


def _doctests() -> tuple[list[Program], str | None]:
    """The doctest programs, and why there are none where the interpreter
    has too few doctests."""
    finder = doctest.DocTestFinder(exclude_empty=True)
    programs: list[Program] = []
    examples = 0
    missing = []
    for name in DOCTEST_MODULES:
        try:
            module = importlib.import_module(name)
        except ImportError:
            missing.append(name)
            continue
        for test in sorted(finder.find(module), key=lambda t: t.name):
            for start in range(0, len(test.examples), EXAMPLES_PER_PROGRAM):
                chunk = test.examples[start:start + EXAMPLES_PER_PROGRAM]
                source = _DOCTEST_RUNNER + "".join(
                    f"__example({example.source!r})\n" for example in chunk)
                programs.append(Program("cpython-doctests", f"{test.name}-{start}", source,
                                        PYTHON_LANGUAGE))
                examples += len(chunk)
    if examples < DOCTEST_EXAMPLES:
        return [], (f"the interpreter has {examples} doctests in "
                    f"{', '.join(DOCTEST_MODULES)} (missing: {', '.join(missing)})")
    return programs, None


# -- JavaScript and TypeScript (node.py knows plain Node) -----------------------

def _node_language(name: str, suffix: str) -> Language:
    return Language(
        name=name, suffix=suffix, file_name="", command=node.command,
        unavailable=node.unavailable,
        plain=lambda run: Outcome(**node.plain(run.stdout, run.stderr, run.exit_code, run.path)),
        tether=lambda result: Outcome(**node.tether(result)))


#: Each corpus folder's language (``corpus/<name>/*<suffix>``).
LANGUAGES: dict[str, Language] = {
    "python": PYTHON_LANGUAGE,
    "javascript": _node_language("javascript", ".js"),
    "typescript": _node_language("typescript", ".ts"),
}


def _corpora() -> tuple[list[Program], dict[str, str]]:
    """Every program, and why a corpus cannot run here."""
    programs: list[Program] = []
    unavailable: dict[str, str] = {}
    for corpus, language in LANGUAGES.items():
        programs += _files(corpus, language)
        why = language.unavailable()
        if why is not None:
            unavailable[corpus] = why
    doctests, why = _doctests()
    programs += doctests
    if why is not None:
        unavailable["cpython-doctests"] = why
    return programs, unavailable


PROGRAMS, UNAVAILABLE = _corpora()


def known_differences() -> dict[tuple[str, str], str]:
    with KNOWN.open("rb") as file:
        entries = tomllib.load(file).get("difference", [])
    return {(entry["corpus"], entry["id"]): entry["reason"] for entry in entries}


KNOWN_DIFFERENCES = known_differences()


# -- running both sides -------------------------------------------------------

async def _plain(program: Program, slots: asyncio.Semaphore) -> Plain:
    async with slots:
        with tempfile.TemporaryDirectory(prefix="tether-differential-") as top:
            language = program.language
            source = Path(top, "src", language.file_name or f"{program.id}{language.suffix}")
            source.parent.mkdir()
            source.write_text(program.source)
            cwd = Path(top, "work")
            cwd.mkdir()
            env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(cwd),
                   "TMPDIR": str(cwd), "LANG": "C.UTF-8"}
            process = await asyncio.create_subprocess_exec(
                *program.language.command(source), cwd=cwd, env=env,
                stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE, start_new_session=True)
            try:
                out, err = await asyncio.wait_for(process.communicate(), TIMEOUT)
            except TimeoutError:
                os.killpg(process.pid, 9)
                out, err = await process.communicate()
                return Plain(out.decode(errors="replace"), err.decode(errors="replace"), -1,
                             str(source))
            return Plain(out.decode(errors="replace"), err.decode(errors="replace"),
                         process.returncode or 0, str(source))


async def _tether(runtime: Runtime, program: Program, slots: asyncio.Semaphore) -> RunResult:
    async with slots:
        return await runtime.run(program.source, language=program.language.name,
                                 limits=Limits(timeout=TIMEOUT))


async def _both(programs: list[Program]) -> dict[str, tuple[Outcome, Outcome]]:
    plain_slots, tether_slots = asyncio.Semaphore(CONCURRENCY), asyncio.Semaphore(CONCURRENCY)
    async with Runtime(pool=PoolConfig(size=CONCURRENCY, max_size=CONCURRENCY)) as runtime:
        plain, tether = await asyncio.gather(
            asyncio.gather(*(_plain(p, plain_slots) for p in programs)),
            asyncio.gather(*(_tether(runtime, p, tether_slots) for p in programs)))
    return {p.id: (p.language.plain(a), p.language.tether(b))
            for p, a, b in zip(programs, plain, tether, strict=True)}


_OUTCOMES: dict[str, dict[str, tuple[Outcome, Outcome]]] = {}


def outcomes(corpus: str) -> dict[str, tuple[Outcome, Outcome]]:
    """Both sides' outcomes of every program of ``corpus``, run once, all at once."""
    if corpus not in _OUTCOMES:
        _OUTCOMES[corpus] = asyncio.run(_both([p for p in PROGRAMS if p.corpus == corpus]))
    return _OUTCOMES[corpus]


def differences(plain: Outcome, tether: Outcome) -> list[str]:
    """Where the two outcomes differ, each said with both sides' values."""
    found = []
    if tether.report and tether.report in plain.stderr:
        # Printed at the end, or before what the program printed as it ended.
        plain = dataclasses.replace(plain, stderr=plain.stderr.replace(tether.report, "", 1))
    else:
        tether = dataclasses.replace(tether, stderr=tether.stderr + tether.report)
    for name in ("stdout", "stderr", "exit_code", "error_type", "line"):
        expected, got = getattr(plain, name), getattr(tether, name)
        if name == "line" and expected is None and plain.error_type == "SystemExit":
            continue  # the interpreter does not say where a program exited
        if expected != got:
            found.append(f"{name}:\n{_contrast(expected, got)}")
    if plain.message is not None and plain.message != tether.message and not (
            tether.message is not None and plain.message.startswith(tether.message + "\n")):
        # The interpreter prints an error's notes under its message.
        found.append(f"message:\n  plain:  {plain.message!r}\n  tether: {tether.message!r}")
    return found


def _contrast(expected: object, got: object) -> str:
    """Both sides' values; of texts, only the lines that differ."""
    if not (isinstance(expected, str) and isinstance(got, str)):
        return f"  plain:  {expected!r}\n  tether: {got!r}"
    lines = list(difflib.unified_diff(expected.splitlines(), got.splitlines(), "plain", "tether",
                                      lineterm="", n=1))
    if len(lines) > DIFF_LINES:
        lines[DIFF_LINES:] = [f"... ({len(lines) - DIFF_LINES} more lines)"]
    return "\n".join(f"  {line}" for line in lines) or \
        f"  plain:  {expected!r}\n  tether: {got!r}"  # they differ in line ends only


def _ids(programs: list[Program]) -> Iterator[str]:
    for program in programs:
        yield f"{program.corpus}/{program.id}"


@pytest.mark.parametrize("program", PROGRAMS, ids=list(_ids(PROGRAMS)))
def test_program_runs_as_under_the_plain_interpreter(
        program: Program, tally: dict[str, Counter[str]]) -> None:
    why = UNAVAILABLE.get(program.corpus)
    if why is not None:
        pytest.skip(why)
    plain, tether = outcomes(program.corpus)[program.id]
    found = differences(plain, tether)
    reason = KNOWN_DIFFERENCES.get((program.corpus, program.id))
    seen = tally.setdefault(program.corpus, Counter())
    if not found:
        seen["match"] += 1
        assert reason is None, (f"{program.corpus}/{program.id} now matches: remove it from "
                                f"known_differences.toml ({reason})")
        return
    if reason is not None:
        seen["known"] += 1
        pytest.xfail(reason)
    seen["differ"] += 1
    pytest.fail(f"{program.corpus}/{program.id} differs from the plain interpreter:\n"
                + "\n".join(found), pytrace=False)


def test_every_known_difference_names_a_program() -> None:
    """An entry for a program that is gone (renamed, deleted) is stale too."""
    names = {(p.corpus, p.id) for p in PROGRAMS}
    assert sorted(key for key in set(KNOWN_DIFFERENCES) - names
                  if key[0] not in UNAVAILABLE) == []


# -- the harness's own reading of the interpreter's reports --------------------

_JSON_ERROR = '''\
Traceback (most recent call last):
  File "<program>", line 4, in <module>
    obj = json.loads(raw)
          ^^^^^^^^^^^^^^^
  File "/usr/lib/python3.11/json/__init__.py", line 346, in loads
    return _default_decoder.decode(s)
           ^^^^^^^^^^^^^^^^^^^^^^^^^^
json.decoder.JSONDecodeError: Expecting value: line 1 column 1 (char 0)
'''
_GROUP = '''\
  + Exception Group Traceback (most recent call last):
  |   File "<program>", line 5, in <module>
  |     check([1, -2])
  |   File "<program>", line 4, in check
  |     raise ExceptionGroup("validation failed", errors)
  | ExceptionGroup: validation failed (1 sub-exception)
  +-+---------------- 1 ----------------
    | Traceback (most recent call last):
    |   File "<program>", line 9, in helper
    |     raise ValueError(x)
    | ValueError: bad -2
    +------------------------------------
'''
_CHAIN = '''\
Traceback (most recent call last):
  File "/usr/lib/python3.11/collections/__init__.py", line 1, in f
    x
KeyError: 'k'

During handling of the above exception, another exception occurred:

Traceback (most recent call last):
  File "<program>", line 3, in <module>
    f()
  File "<program>", line 2, in f
    return f()
  [Previous line repeated 2 more times]
RecursionError: deep
with a second line
'''


def test_a_traceback_keeps_the_programs_frames_only() -> None:
    assert own_frames(_JSON_ERROR) == (
        'Traceback (most recent call last):\n  File "<program>", line 4, in <module>\n'
        "    obj = json.loads(raw)\n          ^^^^^^^^^^^^^^^\n"
        "json.decoder.JSONDecodeError: Expecting value: line 1 column 1 (char 0)\n")
    # A traceback left without frames loses its header, as tether's has none.
    assert own_frames(_CHAIN).startswith("KeyError: 'k'\n\nDuring handling")


@pytest.mark.parametrize(("report", "expected"), [
    (_JSON_ERROR, ("JSONDecodeError", "Expecting value: line 1 column 1 (char 0)", 4)),
    (_GROUP, ("ExceptionGroup", "validation failed (1 sub-exception)\n", 4)),
    (_CHAIN, ("RecursionError", "deep\nwith a second line", 2)),
    ('  File "<program>", line 2\n    print "x"\n    ^^^^^^^^^\nSyntaxError: Missing parentheses\n',
     ("SyntaxError", "Missing parentheses", 2)),
    ("no rows\n", (None, None, None)),
])
def test_the_error_is_read_from_the_end_of_the_report(
        report: str, expected: tuple[str | None, str | None, int | None]) -> None:
    error_type, message, line = _python_report(own_frames(report))
    assert (error_type, line) == (expected[0], expected[2])
    assert message is None or expected[1] is None or message.startswith(expected[1])
