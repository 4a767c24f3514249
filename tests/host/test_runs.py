"""Runs end to end, with real guest processes: values, output, bindings,
errors and every status."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest

from tether import Limits, Runtime, Status

from .conftest import quick, run


def test_hello() -> None:
    result = run('print("hello")\nreturn 42')
    assert result.status is Status.OK
    assert result.value == 42
    assert result.output == "hello\n"
    assert result.error is None
    assert result.stats.exit_code == 0


def test_falling_off_the_end_returns_none() -> None:
    assert run("x = 1").value is None


def test_values_cross_both_ways() -> None:
    value = {"n": [None, True, 2**70, -1.5, "é", b"\x00"], "nested": {"k": [[]]}}

    def echo(v: Any) -> Any:
        return v

    result = run(f"return await echo({value!r})", bindings={"echo": echo})
    assert result.value == value


def test_sync_and_async_bindings_with_keyword_arguments() -> None:
    async def greet(name: str, *, punctuation: str = ".") -> str:
        await asyncio.sleep(0)
        return f"hello {name}{punctuation}"

    seen_threads: list[str] = []

    def add(a: int, b: int) -> int:
        seen_threads.append(threading.current_thread().name)
        return a + b

    result = run('return [await greet("bob", punctuation="!"), await add(2, b=3)]',
                 bindings={"greet": greet, "add": add})
    assert result.value == ["hello bob!", 5]
    assert seen_threads and seen_threads[0] != threading.main_thread().name


def test_bindings_as_an_iterable_of_functions() -> None:
    def double(x: int) -> int:
        return 2 * x

    assert run("return await double(21)", bindings=[double]).value == 42


def test_sequential_calls() -> None:
    async def inc(x: int) -> int:
        return x + 1

    result = run("x = 0\nfor _ in range(100):\n    x = await inc(x)\nreturn x", bindings=[inc])
    assert result.value == 100
    assert result.stats.calls == 100


def test_100_concurrent_calls_run_concurrently() -> None:
    active = 0
    peak = 0

    async def slow(i: int) -> int:
        nonlocal active, peak
        active += 1
        peak = max(peak, active)
        await asyncio.sleep(0.05)
        active -= 1
        return i

    source = "import asyncio\nreturn sum(await asyncio.gather(*(slow(i) for i in range(100))))"
    result = run(source, bindings=[slow], limits=quick(max_calls_in_flight=100))
    assert result.value == sum(range(100))
    assert peak == 100


def test_calls_beyond_the_in_flight_limit_queue_in_the_guest() -> None:
    active = 0
    peak = 0

    async def slow(i: int) -> int:
        nonlocal active, peak
        active += 1
        peak = max(peak, active)
        await asyncio.sleep(0.01)
        active -= 1
        return i

    source = "import asyncio\nreturn len(await asyncio.gather(*(slow(i) for i in range(30))))"
    result = run(source, bindings=[slow], limits=quick(max_calls_in_flight=3))
    assert result.value == 30
    assert peak == 3


def test_binding_error_caught_by_the_program() -> None:
    def fail() -> None:
        raise KeyError("no such city")

    source = """
try:
    await fail()
except BindingError as e:
    return [e.type, e.message, e.code, e.binding]
"""
    result = run(source, bindings=[fail])
    assert result.value == ["KeyError", "'no such city'", 100, "fail"]


def test_uncaught_binding_error_shows_no_host_internals() -> None:
    def fail() -> None:
        raise ValueError("bad query")

    result = run("x = 1\nawait fail()", bindings=[fail])
    assert result.status is Status.ERROR
    assert result.error is not None
    assert result.error.type == "BindingError"
    assert result.error.message == "ValueError: bad query"
    assert result.error.line == 2
    assert __file__ not in result.error.traceback
    assert "shim.py" not in result.error.traceback
    assert 'File "<program>", line 2' in result.error.traceback


def test_program_error_traceback_has_only_program_frames() -> None:
    source = "def f(x):\n    return 1 / x\n\nprint('before')\nf(0)\n"
    result = run(source)
    assert result.status is Status.ERROR
    assert result.error is not None
    assert (result.error.type, result.error.message, result.error.line) == (
        "ZeroDivisionError", "division by zero", 2)
    frames = [ln for ln in result.error.traceback.splitlines() if ln.strip().startswith("File")]
    assert frames == ['  File "<program>", line 5, in <module>', '  File "<program>", line 2, in f']
    assert result.output == "before\n"


def test_syntax_error() -> None:
    result = run("x = 1\nreturn (\n")
    assert result.status is Status.ERROR
    assert result.error is not None
    assert result.error.type == "SyntaxError"
    assert result.error.line == 2


def test_return_inside_functions_and_try_blocks() -> None:
    source = """
def f():
    return "inner"
try:
    return f()
except Exception:
    return "swallowed"
"""
    assert run(source).value == "inner"


def test_module_semantics_for_globals() -> None:
    source = "from math import *\ncount = 0\ndef bump():\n    global count\n    count += 1\n" \
             "bump(); bump()\nreturn [count, floor(pi)]"
    assert run(source).value == [2, 3]


def test_stdout_and_stderr_interleave_in_order() -> None:
    source = "import sys\nprint('a')\nprint('b', file=sys.stderr)\nprint('c')\n" \
             "sys.stdout.write('d')"
    result = run(source)
    assert [(c.stream, c.text) for c in result.chunks] == [
        ("stdout", "a\n"), ("stderr", "b\n"), ("stdout", "c\n"), ("stdout", "d")]
    assert result.stdout == "a\nc\nd"
    assert result.stderr == "b\n"


def test_output_before_a_call_arrives_before_it() -> None:
    order: list[str] = []

    def mark() -> None:
        order.append("call")

    result = run("print('x', end='')\nawait mark()\nprint('y')", bindings=[mark])
    assert result.output == "xy\n"


def test_raw_output_below_print_is_kept_apart() -> None:
    result = run("import os\nos.write(1, b'raw out')\nos.write(2, b'raw err')\nprint('p')")
    assert result.output == "p\n"
    assert result.raw_stdout == "raw out"
    assert result.raw_stderr == "raw err"


def test_return_value_outside_the_model_names_the_path() -> None:
    result = run("import datetime\nreturn {'items': [1, {'when': datetime.date.today()}]}")
    assert result.status is Status.ERROR
    assert result.error is not None
    assert result.error.type == "TypeError"
    assert "$.items[1].when" in result.error.message


def test_argument_outside_the_model_raises_at_the_call() -> None:
    def f(x: Any) -> None:
        raise AssertionError("never called")

    result = run("try:\n    await f({1, 2})\nexcept TypeError as e:\n    return str(e)",
                 bindings=[f])
    assert result.value == "f() argument 1: $: set is outside the value model"


def test_binding_result_outside_the_model_is_an_error_for_the_program() -> None:
    def f() -> Any:
        return object()

    result = run("try:\n    await f()\nexcept BindingError as e:\n    return [e.type, e.code]",
                 bindings=[f])
    assert result.value == ["InvalidValue", 102]


def test_the_environment_is_scrubbed_and_the_cwd_private() -> None:
    result = run("import os\nreturn [sorted(os.environ), os.getcwd() == os.environ['HOME'], "
                 "os.listdir('.')]", env={"EXTRA": "1"})
    names, cwd_is_home, listing = result.value  # type: ignore[misc]
    assert names == ["EXTRA", "HOME", "LANG", "LC_ALL", "PATH", "TMPDIR"]
    assert cwd_is_home and listing == []


def test_no_state_carries_between_runs() -> None:
    async def go() -> list[Any]:
        async with Runtime() as rt:
            first = await rt.run("import sys\nsys.marker = 1\nopen('f', 'w').write('x')\n"
                                 "return 1")
            second = await rt.run("import os, sys\nreturn [hasattr(sys, 'marker'), "
                                  "os.path.exists('f')]")
            return [first.value, second.value]

    assert asyncio.run(go()) == [1, [False, False]]


def test_runs_in_parallel_are_independent() -> None:
    async def go() -> list[Any]:
        async with Runtime() as rt:
            results = await asyncio.gather(*(rt.run(f"return {i}") for i in range(10)))
            return [r.value for r in results]

    assert asyncio.run(go()) == list(range(10))


def test_stdin_is_closed() -> None:
    assert run("import sys\nreturn sys.__stdin__.read()").value == ""


def test_misuse_of_the_api_raises() -> None:
    with pytest.raises(ValueError, match="language"):
        run("return 1", language="cobol")
    with pytest.raises(ValueError, match="identifier"):
        run("return 1", bindings={"not valid": print})
    with pytest.raises(TypeError):
        run(b"return 1")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        Limits(timeout=0)


def test_a_slow_sync_binding_does_not_block_the_loop() -> None:
    def slow() -> str:
        time.sleep(0.3)
        return "done"

    async def fast() -> str:
        return "fast"

    source = "import asyncio\nreturn await asyncio.gather(slow(), fast())"
    assert run(source, bindings=[slow, fast]).value == ["done", "fast"]
