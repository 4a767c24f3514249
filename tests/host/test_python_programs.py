"""Python programs end to end, as models write them: a script that ends in
``asyncio.run(main())`` (R-RUN-8), the program as a script of the
interpreter (R-RUN-9), and errors as the interpreter prints them (R-DONE-2).
Where the plain interpreter is the reference, the same program runs under it
too (``python3 -I``, the guest's interpreter outside the sandbox)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

from tether import Status

from .conftest import quick, run

#: The guest's interpreter, outside the test's virtual environment.
PYTHON = getattr(sys, "_base_executable", sys.executable)


def plain(source: str) -> subprocess.CompletedProcess[str]:
    """``source`` run by the plain interpreter as the file ``<program>``,
    its path in what it prints made ``<program>``."""
    with tempfile.TemporaryDirectory() as top:
        path = Path(top, "<program>")
        path.write_text(source)
        done = subprocess.run([PYTHON, "-I", "-u", str(path)], capture_output=True, text=True,
                              cwd=top, timeout=60, check=False)
        done.stdout, done.stderr = (text.replace(str(path), "<program>")
                                    for text in (done.stdout, done.stderr))
        return done


async def add(a: int, b: int) -> int:
    await asyncio.sleep(0.001)
    return a + b


async def slow() -> None:
    await asyncio.sleep(3600)


# -- R-RUN-8: a script that starts its own event loop --------------------------

def test_asyncio_run_ends_a_script_and_its_bindings_work() -> None:
    """R-RUN-8: the program's top level runs as a script's; the loop
    asyncio.run starts reads the binding calls."""
    source = ("import asyncio\n\nasync def main():\n"
              "    values = await asyncio.gather(*(add(i, i) for i in range(5)))\n"
              "    print(values)\n    return sum(values)\n\n"
              "total = asyncio.run(main())\nprint('total', total)\n"
              "if __name__ == '__main__':\n    asyncio.run(main())\n"
              "return total")
    result = run(source, bindings={"add": add})
    assert result.status is Status.OK, result.error
    assert result.output == "[0, 2, 4, 6, 8]\ntotal 20\n[0, 2, 4, 6, 8]\n"
    assert result.value == 20


def test_every_way_to_start_a_loop_reads_binding_calls() -> None:
    """R-RUN-8: asyncio.run twice, asyncio.Runner, a new loop's
    run_until_complete, and asyncio.get_event_loop() as in a script."""
    source = ("import asyncio\n"
              "a = asyncio.run(add(1, 1))\nb = asyncio.run(add(a, 1))\n"
              "with asyncio.Runner() as runner:\n    c = runner.run(add(b, 1))\n"
              "loop = asyncio.new_event_loop()\nd = loop.run_until_complete(add(c, 1))\n"
              "loop.close()\n"
              "return [a, b, c, d]")
    result = run(source, bindings={"add": add})
    assert result.status is Status.OK, result.error
    assert result.value == [2, 3, 4, 5]


def test_calls_on_the_programs_loop_queue_beyond_max_calls_in_flight() -> None:
    """R-RUN-8, R-CALL-3: the limit holds on a loop the program started."""
    in_flight = 0
    most = 0

    async def track(n: int) -> int:
        nonlocal in_flight, most
        in_flight += 1
        most = max(most, in_flight)
        await asyncio.sleep(0.01)
        in_flight -= 1
        return n

    source = ("import asyncio\nasync def main():\n"
              "    return await asyncio.gather(*(track(i) for i in range(6)))\n"
              "return asyncio.run(main())")
    result = run(source, bindings={"track": track}, limits=quick(max_calls_in_flight=2))
    assert result.status is Status.OK, result.error
    assert result.value == list(range(6))
    assert most == 2


@pytest.mark.parametrize(("body", "line"), [
    ("    await slow()", 4),
    ("    await asyncio.sleep(3600)", 4),
])
def test_a_script_stopped_in_its_own_loop_says_where_it_waited(body: str, line: int) -> None:
    """R-RUN-8, R-CANCEL-2, R-CANCEL-4: stopped while asyncio.run waits,
    the program's cleanup runs and the result says the line it waited on,
    inside main(), not only the asyncio.run line."""
    source = ("import asyncio\n\nasync def main():\n" + body + "\n\n"
              "try:\n    asyncio.run(main())\nfinally:\n    print('cleanup')\n")
    result = run(source, bindings={"slow": slow}, limits=quick(timeout=0.5))
    assert result.status is Status.TIMEOUT
    assert result.error is not None and result.error.line == line, result.error
    assert "line 7, in <module>" in result.error.traceback
    assert "in main" in result.error.traceback
    assert result.output == "cleanup\n"


def test_asyncio_run_under_top_level_await_says_what_to_write() -> None:
    """R-RUN-8: with top-level await the program runs on the guest's loop;
    asyncio.run fails as in the language, and says what to write instead."""
    source = ("import asyncio\nasync def main():\n    return 1\n"
              "await asyncio.sleep(0)\nasyncio.run(main())\n")
    result = run(source)
    assert result.status is Status.ERROR and result.error is not None
    assert result.error.type == "RuntimeError"
    assert result.error.message == "asyncio.run() cannot be called from a running event loop"
    assert result.error.line == 5
    assert "write `await main()` instead" in result.error.traceback


def test_a_script_calling_a_binding_on_another_threads_loop_fails_at_once() -> None:
    """R-RUN-8: only the main thread's loops read the calls."""
    source = ("import asyncio, threading\nout = []\n"
              "def other():\n    try:\n        asyncio.run(add(1, 2))\n"
              "    except RuntimeError as exc:\n        out.append(str(exc))\n"
              "thread = threading.Thread(target=other)\nthread.start()\nthread.join()\n"
              "return [out, asyncio.run(add(1, 2))]")
    result = run(source, bindings={"add": add}, limits=quick(timeout=20))
    assert result.status is Status.OK, result.error
    [message], value = result.value
    assert "another thread" in message and value == 3


# -- R-DONE-2: errors as the interpreter prints them ---------------------------

@pytest.mark.parametrize("source", [
    "d = {'a': 1}\nprint(d.valuse())\n",
    "import json\nprint(jsn.dumps({}))\n",
    "def total(items):\n    return sum(itemz)\ntotal([1])\n",
    "try:\n    {}['k']\nexcept KeyError:\n    [].apend(1)\n",
    "import asyncio\n\ndef main():\n    await asyncio.sleep(1)\n",
    "def f():\nprint('not indented')\n",
    "if True:\n        a = 1\n\tb = 2\n",
    "nonlocal x\n",
])
def test_an_error_reads_as_the_interpreter_prints_it(source: str) -> None:
    """R-DONE-2: the traceback is the interpreter's report at exit (its
    hints, a SyntaxError's lines) and the message its last line's text."""
    result = run(source)
    expected = plain(source)
    assert result.status is Status.ERROR and result.error is not None
    assert expected.returncode == 1
    assert result.error.traceback == expected.stderr
    last = expected.stderr.rstrip("\n").splitlines()[-1]
    assert last.endswith(result.error.message)
    assert last.split(":")[0] in (result.error.type, "IndentationError", "TabError")


def test_a_hint_is_in_the_message() -> None:
    result = run("values = {'a': 1}\nvalues.item()")
    assert result.error is not None
    assert result.error.message == ("'dict' object has no attribute 'item'. "
                                    "Did you mean: 'items'?")


# -- R-RUN-9: the program as a script -------------------------------------------

def test_the_program_is_named_as_a_script() -> None:
    """R-RUN-9: ``sys.argv`` and ``__file__`` are the program's name in its
    tracebacks; the guest's packages cannot be imported and are not in
    sys.modules."""
    source = ("import sys, os\n"
              "try:\n    import tether\n    imported = True\nexcept ImportError:\n"
              "    imported = False\n"
              "own = [m for m in sys.modules if m in ('tether', 'cbor2')]\n"
              "return [sys.argv, __file__, imported, own, os.path.basename(__file__)]")
    result = run(source)
    assert result.status is Status.OK, result.error
    assert result.value == [["<program>"], "<program>", False, [], "<program>"]


STACKS = """\
import inspect, traceback

def where():
    return [len(traceback.extract_stack()), [f.function for f in inspect.stack()]]

async def main():
    return where()

"""


@pytest.mark.parametrize(("ending", "expected"), [
    ("print(where())", "[2, ['where', '<module>']]"),
    ("import asyncio\nprint(asyncio.run(main()))", None),
    ("try:\n    print(where())\nfinally:\n    pass\nreturn 1", "[2, ['where', '<module>']]"),
])
def test_the_stack_a_program_reads_ends_at_its_first_frame(ending: str,
                                                           expected: str | None) -> None:
    """R-RUN-9: no frame of the guest's below the program's, as in a script
    (inside asyncio.run: asyncio's frames, as in a script)."""
    source = STACKS + ending + "\n"
    result = run(source)
    assert result.status is Status.OK, result.error
    if expected is None:
        expected = plain(source).stdout.strip()
    assert result.output == expected + "\n"


def test_traceback_print_stack_shows_the_programs_frames_only() -> None:
    source = "import traceback\n\ndef f():\n    traceback.print_stack()\n\nf()\n"
    result = run(source)
    assert result.stderr == plain(source).stderr
    assert "guest" not in result.stderr


PROBE = """\
import sys

def depth(n):
    try:
        return depth(n + 1)
    except RecursionError:
        return n

"""


@pytest.mark.parametrize(("ending", "options"), [
    ("print(sys.getrecursionlimit(), depth(0))", {}),
    ("import asyncio\nasync def main():\n    return depth(0)\nprint(1000, asyncio.run(main()))",
     {}),
    ("try:\n    print(sys.getrecursionlimit(), depth(0))\nfinally:\n    pass\nreturn 1", {}),
    ("await add(1, 2)\nprint(sys.getrecursionlimit(), depth(0))", {"bindings": {"add": add}}),
])
def test_a_program_has_a_scripts_room_to_recurse(ending: str, options: dict[str, Any]) -> None:
    """R-RUN-9: the guest's frames below the program do not count, whatever
    runs it (as a script, in asyncio.run, as a function, awaited)."""
    result = run(PROBE + ending, **options)
    assert result.status is Status.OK, result.error
    expected = plain(PROBE + "print(sys.getrecursionlimit(), depth(0))").stdout
    if "asyncio.run" in ending:
        expected = plain(PROBE + ending).stdout
    assert result.output == expected


def test_setting_the_recursion_limit_sets_the_programs_room() -> None:
    source = PROBE + "sys.setrecursionlimit(200)\nprint(sys.getrecursionlimit(), depth(0))"
    assert run(source).output == plain(source).stdout


def test_atexit_handlers_run_after_the_threads_and_before_the_result() -> None:
    """R-RUN-9, R-DONE-9: as the interpreter runs them at its exit: after
    the program's threads, last registered first, after an exit too."""
    source = ("import atexit, sys, threading, time\n"
              "atexit.register(print, 'registered first')\n"
              "atexit.register(lambda: print('registered second'))\n"
              "threading.Thread(target=lambda: (time.sleep(0.1), print('thread'))).start()\n"
              "print('body')\nsys.exit(3)\n")
    result = run(source)
    assert result.status is Status.ERROR and result.error is not None
    assert result.error.type == "SystemExit" and result.error.message == "3"
    assert result.output == "body\nthread\nregistered second\nregistered first\n"
    assert result.output == plain(source).stdout


def test_what_the_programs_names_held_is_finalized_as_it_ends() -> None:
    """R-RUN-9: its module's dictionary emptied as at the exit, what it held
    let go in order, so ``__del__`` runs; what that warns, from sys:1."""
    source = ("class Resource:\n    def __init__(self, name):\n        self.name = name\n"
              "    def __del__(self):\n        print('release', self.name)\n\n"
              "db = Resource('db')\n_cache = Resource('cache')\n"
              "async def forgotten():\n    pass\n"
              "pending = forgotten()\nprint('working')\n")
    result = run(source)
    expected = plain(source)
    assert result.status is Status.OK, result.error
    assert result.stdout == expected.stdout == "working\nrelease db\nrelease cache\n"
    assert result.stderr == expected.stderr
    assert result.stderr.startswith("sys:1: RuntimeWarning: coroutine 'forgotten'")


def test_a_stopped_program_is_not_finalized() -> None:
    """R-RUN-9: the host's grace is for DONE: no handler or ``__del__`` runs."""
    source = ("import atexit, time\natexit.register(print, 'atexit')\n"
              "class R:\n    def __del__(self):\n        print('del')\n"
              "r = R()\ntime.sleep(3600)\n")
    result = run(source, limits=quick(timeout=0.5))
    assert result.status is Status.TIMEOUT
    assert result.output == ""
    assert result.error is not None and result.error.line == 7


def test_the_programs_globals_are_a_scripts() -> None:
    """R-RUN-9, R-RUN-6: the guest's own names are built-ins, so ``dir()``
    and ``globals()`` list what a script's do; they stay usable."""
    source = "print(sorted(globals()), dir() == sorted(globals()))\n"
    result = run(source)
    assert result.status is Status.OK, result.error
    assert result.output == plain(source).stdout
    assert run("return [BindingError.__name__, callable(help)]").value == ["BindingError", True]


def test_a_function_mode_program_names_what_it_defines_as_a_module_does() -> None:
    """R-RUN-2: a program compiled as a function (a return under ``try``)
    names its lambdas and generator expressions as a module would."""
    source = ("try:\n    f = lambda: 0\n    g = (x for x in ())\n"
              "    def h():\n        return lambda: 1\n"
              "    return [f.__qualname__, g.__qualname__, h.__qualname__, h().__qualname__]\n"
              "finally:\n    pass\n")
    result = run(source)
    assert result.status is Status.OK, result.error
    assert result.value == ["<lambda>", "<genexpr>", "h", "h.<locals>.<lambda>"]


def test_an_import_error_reads_as_the_interpreter_prints_it() -> None:
    """R-DONE-2: from 3.12 on the interpreter hints at a name's spelling in
    ``from module import name`` too; the message carries what it prints."""
    source = "from collections import OrderedDic\n"
    result = run(source)
    last = plain(source).stderr.rstrip("\n").splitlines()[-1]
    assert result.error is not None and result.error.type == "ImportError"
    assert last == f"ImportError: {result.error.message}"
