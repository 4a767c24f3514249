"""Runs end to end, with real guest processes: values, output, bindings and
errors, once per guest language (``lang``), plus language-specific cases."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest

from tether import Binding, Limits, Runtime, Status
from tether.host.aio.channel import Channel

from .conftest import granted_send_buffer, pick, quick, run

pytestmark = pytest.mark.memory_guest


def test_hello(lang: str) -> None:
    result = run(pick(lang, python='print("hello")\nreturn 42',
                      javascript='console.log("hello")\nreturn 42'), language=lang)
    assert result.status is Status.OK
    assert result.value == 42
    assert result.output == "hello\n"
    assert result.error is None
    assert result.stats.exit_code in (0, -9, None)  # exited, killed at DONE, or reaped later


def test_falling_off_the_end_returns_none(lang: str) -> None:
    assert run(pick(lang, python="x = 1", javascript="const x = 1"), language=lang).value is None


def test_values_cross_both_ways(lang: str) -> None:
    value = {"n": [None, True, 2**70, -1.5, "é", b"\x00", 7], "nested": {"k": [[]]},
             "__proto__": {"odd key": 1}}

    def echo(v: Any) -> Any:
        return v

    source = pick(lang, python="v = await get()\nreturn await echo(v)",
                  javascript="const v = await get()\nreturn await echo(v)")
    result = run(source, language=lang, bindings={"echo": echo, "get": lambda: value})
    assert result.value == value


def test_large_values_cross_both_ways(lang: str) -> None:
    """Frames far above the 64 KiB read and write sizes, in both directions
    (the guest writes a large payload apart from its header)."""
    value = {"text": "é" * 300_000, "bytes": bytes(range(256)) * 1_000, "n": list(range(5_000))}

    def echo(v: Any) -> Any:
        return v

    source = pick(lang, python="v = await get()\nreturn [await echo(v), v]",
                  javascript="const v = await get()\nreturn [await echo(v), v]")
    result = run(source, language=lang, bindings={"echo": echo, "get": lambda: value})
    assert result.value == [value, value]


def test_a_large_result_leaves_the_host_in_one_write(lang: str,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A binding's 1 MB value goes out in one sendmsg, not in turns of the
    kernel's default send buffer, each waiting for the guest to read
    (host/aio/channel.py, SEND_BUFFER_BYTES); the channel's outbox is then
    never flushed later."""
    if granted_send_buffer() < 1_100_000:
        pytest.skip("net.core.wmem_max keeps a socket's send buffer below 1.1 MB here")
    later: list[int] = []
    flush = Channel._flush

    def counted(self: Channel) -> None:
        later.append(self._unsent)
        flush(self)

    monkeypatch.setattr(Channel, "_flush", counted)
    source = pick(lang, python="s = await big()\nreturn len(s)",
                  javascript="const s = await big()\nreturn s.length")
    result = run(source, language=lang, bindings={"big": lambda: "x" * 1_000_000})
    assert (result.status, result.value) == (Status.OK, 1_000_000), result.error
    assert later == []


def test_sync_and_async_bindings(lang: str) -> None:
    async def greet(name: str, punctuation: str = ".") -> str:
        await asyncio.sleep(0)
        return f"hello {name}{punctuation}"

    seen_threads: list[str] = []

    def add(a: int, b: int) -> int:
        seen_threads.append(threading.current_thread().name)
        return a + b

    source = pick(lang, python='return [await greet("bob", punctuation="!"), await add(2, b=3)]',
                  javascript='return [await greet("bob", "!"), await add(2, 3)]')
    result = run(source, language=lang, bindings={"greet": greet, "add": add})
    assert result.value == ["hello bob!", 5]
    assert seen_threads and seen_threads[0] != threading.main_thread().name


def test_async_bindings_run_as_tasks_of_their_own() -> None:
    """Whether a call's task starts eagerly (Python 3.12+) or not, a binding
    runs in a task of its own: asyncio.timeout works, and context variables
    it sets stay its own."""
    import contextvars

    seen: contextvars.ContextVar[int] = contextvars.ContextVar("seen", default=0)

    async def quick() -> list[Any]:
        async with asyncio.timeout(5):
            before = seen.get()
            seen.set(before + 1)
            return [asyncio.current_task() is not None, before]

    async def slow() -> int:
        async with asyncio.timeout(5):
            await asyncio.sleep(0.01)
            return seen.get()

    result = run("return [await quick(), await quick(), await slow()]",
                 bindings=[quick, slow])
    assert result.value == [[True, 0], [True, 0], 0], result.error


def test_bindings_as_an_iterable_of_functions() -> None:
    def double(x: int) -> int:
        return 2 * x

    assert run("return await double(21)", bindings=[double]).value == 42


def test_sequential_calls(lang: str) -> None:
    async def inc(x: int) -> int:
        return x + 1

    source = pick(lang, python="x = 0\nfor _ in range(100):\n    x = await inc(x)\nreturn x",
                  javascript="let x = 0\nfor (let i = 0; i < 100; i++) x = await inc(x)\nreturn x")
    result = run(source, language=lang, bindings=[inc])
    assert result.value == 100
    assert result.stats.calls == 100


CONCURRENT = {
    "python": "import asyncio\nreturn len(await asyncio.gather(*(slow(i) for i in range(N))))",
    "javascript": "return (await Promise.all([...Array(N).keys()].map((i) => slow(i)))).length",
}


def _tracking_binding() -> tuple[Any, list[int]]:
    active = [0]
    peak = [0]

    async def slow(i: int) -> int:
        active[0] += 1
        peak[0] = max(peak[0], active[0])
        await asyncio.sleep(0.05)
        active[0] -= 1
        return i

    return slow, peak


def test_100_concurrent_calls_run_concurrently(lang: str) -> None:
    slow, peak = _tracking_binding()
    source = CONCURRENT[lang].replace("N", "100")
    result = run(source, language=lang, bindings=[slow], limits=quick(max_calls_in_flight=100))
    assert result.value == 100
    assert peak[0] == 100


def test_calls_beyond_the_in_flight_limit_queue_in_the_guest(lang: str) -> None:
    slow, peak = _tracking_binding()
    source = CONCURRENT[lang].replace("N", "30")
    result = run(source, language=lang, bindings=[slow], limits=quick(max_calls_in_flight=3))
    assert result.value == 30
    assert peak[0] == 3


def test_binding_error_caught_by_the_program(lang: str) -> None:
    def fail() -> None:
        raise KeyError("no such city")

    source = pick(
        lang,
        python="try:\n    await fail()\nexcept BindingError as e:\n"
               "    return [e.type, e.message, e.code, e.binding]",
        javascript="try { await fail() } catch (e) {\n"
                   "  return [e instanceof BindingError && e.type, e.message, e.code, e.binding]\n}",
    )
    assert run(source, language=lang, bindings=[fail]).value == [
        "KeyError", "'no such city'", 100, "fail"]


def test_uncaught_binding_error_shows_no_host_internals(lang: str) -> None:
    def fail() -> None:
        raise ValueError("bad query")

    result = run(pick(lang, python="x = 1\nawait fail()", javascript="const x = 1\nawait fail()"),
                 language=lang, bindings=[fail])
    assert result.status is Status.ERROR
    assert result.error is not None
    assert result.error.type == "BindingError"
    assert result.error.message == "ValueError: bad query"
    assert result.error.line == 2
    for internal in (__file__, "shim.py", "drivers.py", "aio.py", "channel.py", "main.mjs",
                     "node:internal"):
        assert internal not in result.error.traceback


def test_program_error_traceback_has_only_program_frames(lang: str) -> None:
    source = pick(lang, python="def f(x):\n    return 1 / x.y\n\nprint('before')\nf(0)\n",
                  javascript="function f(x) {\n  return 1 / x.y.z\n}\nconsole.log('before')\nf(0)\n")
    result = run(source, language=lang)
    assert result.status is Status.ERROR
    assert result.error is not None
    assert result.error.type == pick(lang, python="AttributeError", javascript="TypeError")
    assert result.error.line == 2
    frames = [ln.strip() for ln in result.error.traceback.splitlines()
              if ln.strip().startswith(("File", "at "))]
    assert frames == pick(lang, python=['File "<program>", line 5, in <module>',  # type: ignore[comparison-overlap]
                                        'File "<program>", line 2, in f'],
                          javascript=["at f (<program>:2:18)", "at <program>:5:1"])
    assert result.output == "before\n"


@pytest.mark.parametrize("end", ["", "\n"])
def test_the_caret_points_at_the_name_on_a_last_line_with_or_without_newline(end: str) -> None:
    result = run("x = 1\nreturn undefined_name + 1" + end)
    assert result.error is not None
    code, caret = result.error.traceback.splitlines()[2:4]
    assert code.strip() == "return undefined_name + 1"
    assert caret.index("^") == code.index("undefined_name")


def test_a_program_indented_wrong_is_a_syntax_error() -> None:
    """R-DONE-6: what the guest cannot compile is typed SyntaxError, its
    subclasses too."""
    result = run("x = 1\n  y = 2\nreturn x")
    assert result.error is not None
    assert (result.status, result.error.type, result.error.message, result.error.line) == (
        Status.ERROR, "SyntaxError", "unexpected indent", 2)


def test_javascript_leaves_out_positional_arguments_past_the_parameters() -> None:
    """``xs.map(binding)`` passes each element's index and the array too: from
    JavaScript, positional arguments past a binding's parameters are left
    out, as JavaScript leaves them; from Python they are refused."""
    async def upper(text: str) -> str:
        return text.upper()

    result = run("return await Promise.all(['a', 'b'].map(upper))", language="javascript",
                 bindings=[upper])
    assert result.status is Status.OK, result.error
    assert result.value == ["A", "B"]
    result = run("return await upper('a', 1)", bindings=[upper])
    assert result.error is not None
    assert result.error.message == "TypeError: upper() takes 1 positional argument but 2 were given"
    # A long list: each call carries its element only, not the whole array.
    result = run("const xs = Array.from({length: 3000}, (_, i) => 'w' + i)\n"
                 "return (await Promise.all(xs.map(upper))).length", language="javascript",
                 bindings=[upper])
    assert result.status is Status.OK, result.error
    assert result.value == 3000 and result.stats.bytes_in < 400_000, result.stats
    # An explicit binding takes one object: the map's index and array are left out too.
    weather = Binding(name="weather", description="The weather.",
                      function=lambda city: city.upper(),
                      parameters={"type": "object", "properties": {"city": {"type": "string"}},
                                  "required": ["city"]})
    result = run("return await Promise.all([{city: 'oslo'}, {city: 'rome'}].map(weather))",
                 language="javascript", bindings=[weather])
    assert result.status is Status.OK, result.error
    assert result.value == ["OSLO", "ROME"]


def test_a_bare_yield_is_awaited_without_asyncio() -> None:
    """A program that does not import asyncio may still await a bare yield
    (``types.coroutine``, asyncio's ``sleep(0)``): it waits for nothing."""
    async def add(a: int, b: int) -> int:
        return a + b

    source = "import types\n@types.coroutine\ndef tick():\n    yield\nawait tick()\n" \
             "return await add(1, 1)"
    result = run(source, bindings=[add])
    assert result.status is Status.OK, result.error
    assert result.value == 2


def test_a_program_yielding_without_asyncio_says_where_it_was_stopped() -> None:
    """R-CANCEL-4: a program that loops on a bare yield, with no asyncio to
    read fd 3, still reads the host's CANCEL at each yield."""
    source = ("import types\n@types.coroutine\ndef tick():\n    yield\n"
              "while True:\n    await tick()\n")
    for _ in range(5):  # where the host's signal lands varies from run to run
        result = run(source, limits=quick(timeout=0.5))
        assert result.status is Status.TIMEOUT
        # 2: the signal landed as tick's frame began (its first line is its decorator's)
        assert result.error is not None and result.error.line in (2, 4, 6), result.error


def test_syntax_error(lang: str) -> None:
    result = run(pick(lang, python="x = 1\nreturn (\n", javascript="const x = 1\nreturn )\n"),
                 language=lang)
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


@pytest.mark.parametrize("handler", ["except:", "except BaseException:",
                                     "except BaseException as e:"])
def test_a_top_level_return_is_not_caught_by_the_programs_handlers(handler: str) -> None:
    """R-RUN-2: ``return`` ends the program, whatever the try around it
    catches (model-written code often wraps its work in a bare except)."""
    source = f"for x in [0, 1]:\n    try:\n        return 10 // x\n    {handler}\n" \
             f"        continue\nreturn 'fell through'"
    assert run(source).value == 10  # 10 // 0 raised and was handled; 10 // 1 returned
    source = f"try:\n    try:\n        return 'inner'\n    {handler}\n        return 'caught'\n" \
             f"{handler}\n    return 'outer'"
    assert run(source).value == "inner"


def test_a_return_inside_a_task_group_waits_for_its_tasks() -> None:
    """R-RUN-2: the program is the body of a function, so a ``return``
    inside ``async with TaskGroup()`` (or any ``with``) leaves it normally:
    the group waits for its calls, and the names stay the run's variables."""
    async def lookup(city: str) -> str:
        await asyncio.sleep(0.01)
        return city.upper()

    source = ("import asyncio\nfound = []\nasync def one(city):\n"
              "    found.append(await lookup(city))\n"
              "async with asyncio.TaskGroup() as group:\n"
              "    for city in ['oslo', 'rome']:\n        group.create_task(one(city))\n"
              "    return 'started'\n")
    result = run(source, bindings=[lookup], variables={})
    assert result.status is Status.OK, result.error
    assert result.value == "started"
    assert sorted(result.variables["found"]) == ["OSLO", "ROME"]
    assert result.variables["city"] == "rome"


def test_tasks_and_generators_the_program_leaves_are_ended_as_asyncio_run_ends_them() -> None:
    """As the program ends, the tasks it left are cancelled and awaited and its
    async generators closed, before DONE: their cleanup runs, binding calls
    included, and what it prints is output."""
    released: list[str] = []

    async def hold() -> None:
        await asyncio.sleep(3600)

    async def release(name: str) -> str:
        released.append(name)
        return f"released {name}"

    source = ("import asyncio\nasync def holder():\n    try:\n        await hold()\n"
              "    finally:\n        print(await release('lock'))\n"
              "async def stream():\n    try:\n        yield 1\n        yield 2\n"
              "    finally:\n        print('stream closed')\n"
              "task = asyncio.create_task(holder())\nawait asyncio.sleep(0.01)\n"
              "async for x in stream():\n    break\nreturn x\n")
    result = run(source, bindings=[hold, release])
    assert result.status is Status.OK, result.error
    assert result.value == 1
    assert released == ["lock"]
    assert sorted(result.output.splitlines()) == ["released lock", "stream closed"]


def test_async_generators_are_closed_without_asyncio_as_asyncio_run_closes_them() -> None:
    """R-DONE-9, a program that does not import asyncio: an async generator
    left by ``break`` and one still alive at the end are closed before DONE,
    their ``finally`` awaiting a binding included."""
    async def add(a: int, b: int) -> int:
        return a + b

    source = ("async def pages(last):\n    try:\n        for i in range(5):\n"
              "            yield await add(i, 0)\n    finally:\n"
              "        print('cleanup', last, await add(last, 0))\n"
              "async for v in pages(100):\n    if v == 1:\n        break\n"
              "held = pages(200)\nfirst = await held.__anext__()\n"
              "print('after', v, first)\nreturn v")
    result = run(source, bindings=[add])
    assert result.status is Status.OK, result.error
    assert result.value == 1
    assert result.output == "after 1 0\ncleanup 100 100\ncleanup 200 200\n"


@pytest.mark.parametrize(("exit_call", "status", "message"), [
    ("exit()", Status.OK, None), ("quit(0)", Status.OK, None), ("sys.exit(False)", Status.OK, None),
    ("sys.exit(3)", Status.ERROR, "3"), ("exit('no rows')", Status.ERROR, "no rows")])
def test_a_python_program_that_exits_ends_the_run(exit_call: str, status: Status,
                                                  message: str | None) -> None:
    """R-DONE-8: ``exit()``, ``quit()`` and ``sys.exit()`` end the run: status
    0 as a return of nothing, with what was printed and the variables; any
    other as a SystemExit error at the exit's line."""
    result = run(f"import sys\nrows = 2\nprint('leaving')\n{exit_call}\nprint('not reached')",
                 variables={})
    assert result.status is status, result.error
    assert result.output == "leaving\n"
    assert result.variables == {"rows": 2}
    if message is None:
        assert result.value is None and result.error is None
    else:
        assert result.error is not None
        assert (result.error.type, result.error.message, result.error.line) == \
            ("SystemExit", message, 4)


@pytest.mark.real_guest  # the guest as a script (threads, fds, pydoc's pager)
def test_a_python_program_ends_after_its_threads() -> None:
    """R-DONE-9: the program's non-daemon threads are joined before DONE, as
    the interpreter joins them at its exit; idle pool workers and asyncio's
    executor let go."""
    source = ("import threading, time\nfrom concurrent.futures import ThreadPoolExecutor\n"
              "def late():\n    time.sleep(0.2)\n    print('from a thread')\n"
              "threading.Thread(target=late).start()\n"
              "print(ThreadPoolExecutor(2).submit(lambda: 3).result())\n"
              "import asyncio\nprint(await asyncio.to_thread(lambda: 4))\nreturn 'main'")
    result = run(source)
    assert result.status is Status.OK, result.error
    assert result.value == "main"
    assert result.output == "3\n4\nfrom a thread\n"


@pytest.mark.real_guest  # the guest as a script (threads, fds, pydoc's pager)
def test_a_python_program_stopped_with_a_thread_alive_says_where_it_was() -> None:
    """R-DONE-9, R-CANCEL-4: the threads are not waited for when the host
    stopped the program: DONE comes at once, with the line it was on."""
    source = ("import threading, time\n"
              "threading.Thread(target=time.sleep, args=(30,)).start()\n"
              "x = 0\nwhile True:\n    x += 1")
    result = run(source, limits=quick(timeout=1))
    assert result.status is Status.TIMEOUT
    assert result.error is not None and result.error.line in (4, 5), result.error


def test_an_exit_in_an_asyncio_task_ends_the_run_after_the_tasks_cleanup() -> None:
    """R-DONE-8, R-DONE-9: ``sys.exit(0)`` raised in a task ends the run, and,
    as under asyncio.run, the tasks left are cancelled and their cleanup runs."""
    source = ("import asyncio, sys\nasync def held():\n    try:\n"
              "        await asyncio.sleep(10)\n    finally:\n        print('cleaned')\n"
              "async def leave():\n    sys.exit(0)\n"
              "asyncio.create_task(held())\nasyncio.create_task(leave())\n"
              "await asyncio.sleep(5)\nprint('not reached')")
    result = run(source)
    assert result.status is Status.OK, result.error
    assert result.output == "cleaned\n"


@pytest.mark.real_guest  # it sets the process's sys.stdout, which threads share
def test_what_a_python_program_prints_after_restoring_sys_stdout_is_output() -> None:
    """``sys.stdout = sys.__stdout__`` restores the run's output, as it
    restores a script's; sys.__stderr__ likewise."""
    source = ("import io, sys\nprint('one')\nsys.stdout = io.StringIO()\nprint('hidden')\n"
              "sys.stdout = sys.__stdout__\nprint('two')\nprint('err', file=sys.__stderr__)")
    result = run(source)
    assert result.output == "one\ntwo\nerr\n"


def test_surrogates_a_python_program_prints_are_replaced_one_by_one() -> None:
    """R-OUTPUT-2: in a Python string each surrogate stands alone, even two
    that would make a pair in UTF-16."""
    assert run('print("\\ud83d\\ude00", "\\udc80")').output == "\ufffd\ufffd \ufffd\n"


@pytest.mark.real_guest  # a deep compile on a thread meets 3.11's shared AST depth count
def test_annotations_after_a_star_import_are_evaluated() -> None:
    """A name a star import brings is defined where it stands: ``NotRequired``
    from ``from typing import *`` marks an optional key, while a forward
    reference and a binding's declared type still become text."""
    source = ("from typing import *\nclass Movie(TypedDict):\n    title: str\n"
              "    year: NotRequired[int]\nclass Node:\n"
              "    def add(self, other: Node) -> list[Hit]:\n        return []\n"
              "return sorted(Movie.__required_keys__)")
    assert run(source).value == ["title"]


@pytest.mark.real_guest  # the guest as a script (threads, fds, pydoc's pager)
def test_the_model_reads_what_a_subprocess_wrote() -> None:
    """R-OUTPUT-5: a subprocess writes to the guest's fds 1 and 2, below
    print: it is the program's output, where it was written (after the line
    printed before the subprocess ran, before the one printed after), and
    what every integration gives the model back has it."""
    from tether.integrations._common import report

    result = run("import subprocess\nprint('listing')\n"
                 "subprocess.run(['echo', 'from echo'])\n"
                 "subprocess.run(['sh', '-c', 'echo to stderr >&2'])\nprint('done')\nreturn 1")
    assert result.status is Status.OK, result.error
    assert result.output == "listing\nfrom echo\nto stderr\ndone\n"
    assert result.stderr == "to stderr\n"
    assert result.raw_stdout == result.raw_stderr == ""
    assert report(result) == "Printed:\nlisting\nfrom echo\nto stderr\ndone\nReturned: 1"
    assert report(run("return 2")) == "Returned: 2"


@pytest.mark.real_guest  # the guest as a script (threads, fds, pydoc's pager)
def test_help_without_a_request_shows_pydocs_welcome() -> None:
    result = run("help()")
    assert result.status is Status.OK, result.error
    assert "help utility" in result.output


def test_a_task_that_swallows_its_cancellation_does_not_hold_the_result() -> None:
    """A task left running under a bare ``except`` (a retry loop) gets a short
    grace once cancelled: the program's value still comes back."""
    async def fetch(query: str) -> str:
        await asyncio.sleep(0.01)
        return query.upper()

    source = ("import asyncio\nasync def worker():\n    while True:\n        try:\n"
              "            await fetch('x')\n        except:\n"
              "            await asyncio.sleep(0.01)\n"
              "asyncio.create_task(worker())\nreturn await fetch('main')\n")
    result = run(source, bindings=[fetch])
    assert result.status is Status.OK, result.error
    assert result.value == "MAIN"


def test_a_task_that_swallows_its_cancellation_keeps_where_a_timed_out_program_was() -> None:
    """R-CANCEL-4: after the host's CANCEL, the tasks the program left are
    cancelled and not waited for; DONE says where the program was."""
    source = ("import asyncio\nasync def stubborn():\n    while True:\n        try:\n"
              "            await asyncio.sleep(10)\n        except asyncio.CancelledError:\n"
              "            pass\nasyncio.create_task(stubborn())\nawait asyncio.sleep(100)\n")
    result = run(source, limits=quick(timeout=1))
    assert result.status is Status.TIMEOUT
    assert result.error is not None and result.error.line == 9, result.error


@pytest.mark.real_guest  # what its left tasks hold is finalized at the process's exit
def test_an_error_raised_in_finally_after_a_return_shows_only_the_program() -> None:
    result = run("try:\n    return 1\nfinally:\n    raise ValueError('cleanup')")
    assert result.status is Status.ERROR and result.error is not None
    assert result.error.type == "ValueError" and result.error.line == 4
    assert "tether" not in result.error.traceback
    assert "During handling" not in result.error.traceback


def test_the_traceback_of_an_exception_group_shows_only_the_program() -> None:
    async def fail() -> None:
        raise KeyError("k")

    source = ("import asyncio\nasync with asyncio.TaskGroup() as group:\n"
              "    group.create_task(fail())\n")
    result = run(source, bindings={"fail": fail})
    assert result.status is Status.ERROR and result.error is not None
    assert result.error.type == "ExceptionGroup"
    assert "BindingError" in result.error.traceback
    assert "tether" not in result.error.traceback, result.error.traceback


def test_a_cancelled_error_the_program_raises_is_its_own() -> None:
    """Only the host's cancellation is reported as ``Cancelled``."""
    async def slow() -> None:
        await asyncio.sleep(30)

    source = ("import asyncio\ntask = asyncio.create_task(slow())\nawait asyncio.sleep(0)\n"
              "task.cancel()\nawait task")
    result = run(source, bindings={"slow": slow})
    assert result.status is Status.ERROR and result.error is not None
    assert result.error.type == "CancelledError", result.error
    result = run("from concurrent.futures import CancelledError\nraise CancelledError('mine')")
    assert result.error is not None
    assert (result.error.type, result.error.message) == ("CancelledError", "mine")


@pytest.mark.parametrize("source", [
    "class E(Exception):\n    def __str__(self):\n        raise RuntimeError('no str')\nraise E()",
    "class E(Exception):\n    def __str__(self):\n        return None\nraise E()",
])
def test_an_exception_that_cannot_be_shown_is_still_the_programs_error(source: str) -> None:
    result = run(source)
    assert result.status is Status.ERROR and result.error is not None
    assert result.error.type == "E" and result.error.line == 4


@pytest.mark.parametrize("source", [
    "class D(dict):\n    def items(self):\n        raise RuntimeError('boom')\nreturn D(a=1)",
    "class L(list):\n    def __iter__(self):\n        raise RuntimeError('boom')\nreturn L([1])",
])
def test_a_return_value_whose_own_code_fails_is_an_error_not_a_crash(source: str) -> None:
    result = run(source)
    assert result.status is Status.ERROR and result.error is not None
    assert result.error.type == "TypeError"
    assert "boom" in result.error.message


def test_a_variable_named_help_comes_back_as_it_went() -> None:
    """R-VARS-2: RUN's variables are the program's names, over the guest's own."""
    result = run("return help", variables={"help": "use --verbose"})
    assert result.value == "use --verbose"


def test_stdout_can_be_reconfigured_and_written_as_bytes() -> None:
    source = ("import io, sys\nsys.stdout.reconfigure(encoding='utf-8')\n"
              "sys.stdout.buffer.write('caf\u00e9 '.encode())\n"
              "sys.stdout.buffer.write(b'\\xe2\\x82')\nsys.stdout.buffer.write(b'\\xac\\n')\n"
              "out = io.TextIOWrapper(sys.stdout.buffer, encoding='utf-8')\n"
              "out.write('wrapped\\n')\nout.flush()\nprint('printed')")
    result = run(source)
    assert result.status is Status.OK, result.error
    assert result.output == "caf\u00e9 \u20ac\nwrapped\nprinted\n"
    # R-OUTPUT-4: what is held of a character is flushed before the other stream.
    result = run("import sys\nsys.stdout.buffer.write(b'a\\xe2\\x82')\nprint('b', file=sys.stderr)\n"
                 "sys.stdout.buffer.write(b'\\xacc')")
    assert [(c.stream, c.text) for c in result.chunks] == [
        ("stdout", "a\ufffd"), ("stderr", "b\n"), ("stdout", "\ufffdc")]


def test_a_call_the_program_stops_waiting_for_keeps_its_slot_until_answered(lang: str) -> None:
    """R-CALL-3: a call abandoned by the program is still in flight on the
    host; the next call waits for its slot instead of going over the limit."""
    async def slow() -> str:
        await asyncio.sleep(0.5)
        return "late"

    async def add(a: int, b: int) -> int:
        return a + b

    source = pick(lang, python="import asyncio\ntry:\n    await asyncio.wait_for(slow(), 0.01)\n"
                               "except TimeoutError:\n    pass\nreturn await add(1, 2)",
                  javascript="await Promise.race([slow(), new Promise((r) => setTimeout(r, 10))])\n"
                             "return await add(1, 2)")
    result = run(source, language=lang, bindings={"slow": slow, "add": add},
                 limits=quick(max_calls_in_flight=1))
    assert result.status is Status.OK, result.error
    assert result.value == 3


def test_a_binding_called_from_another_event_loop_fails_at_once() -> None:
    async def add(a: int, b: int) -> int:
        return a + b

    source = ("import asyncio, threading\nout = []\n"
              "def other():\n    try:\n        asyncio.run(add(1, 2))\n"
              "    except Exception as exc:\n        out.append(type(exc).__name__)\n"
              "thread = threading.Thread(target=other)\nthread.start()\nthread.join()\n"
              "return [out, await add(1, 2)]")
    result = run(source, bindings={"add": add}, limits=quick(timeout=20))
    assert result.status is Status.OK, result.error
    assert result.value == [["RuntimeError"], 3]


def test_the_programs_globals_are_its_main_module() -> None:
    """Classes the program defines can be pickled and resolved by name, as
    in any script run as ``__main__``."""
    source = ("import pickle, sys, typing\nclass P:\n    x: 'Q'\nclass Q:\n    pass\n"
              "copy = pickle.loads(pickle.dumps(P()))\n"
              "return [type(copy).__name__, typing.get_type_hints(P)['x'].__name__,\n"
              "        sys.modules['__main__'].P is P]")
    result = run(source)
    assert result.status is Status.OK, result.error
    assert result.value == ["P", "Q", True]


def test_annotations_naming_declared_types_are_not_evaluated() -> None:
    """A program may annotate with the type names of the bindings'
    declarations (``list[Hit]``), which exist only in the text the model
    reads: those annotations are kept as text (the others are evaluated,
    tests/guest/test_program.py)."""
    source = ("def best(hits: list[Hit]) -> Hit:\n    return hits[0]\n"
              "found: list[Hit] = [{'name': 'a'}]\nreturn best(found)['name']")
    result = run(source)
    assert result.status is Status.OK, result.error
    assert result.value == "a"


def test_module_semantics_for_globals() -> None:
    source = "from math import *\ncount = 0\ndef bump():\n    global count\n    count += 1\n" \
             "bump(); bump()\nreturn [count, floor(pi)]"
    assert run(source).value == [2, 3]


def test_stdout_and_stderr_interleave_in_order(lang: str) -> None:
    source = pick(lang,
                  python="import sys\nprint('a')\nprint('b', file=sys.stderr)\nprint('c')\n"
                         "sys.stdout.write('d')",
                  javascript="console.log('a')\nconsole.error('b')\nconsole.log('c')\n"
                             "process.stdout.write('d')")
    result = run(source, language=lang)
    assert [(c.stream, c.text) for c in result.chunks] == [
        ("stdout", "a\n"), ("stderr", "b\n"), ("stdout", "c\n"), ("stdout", "d")]
    assert result.stdout == "a\nc\nd"
    assert result.stderr == "b\n"


def test_output_before_a_call_arrives_before_it(lang: str) -> None:
    def mark() -> None:
        pass

    source = pick(lang, python="print('x', end='')\nawait mark()\nprint('y')",
                  javascript="process.stdout.write('x')\nawait mark()\nconsole.log('y')")
    assert run(source, language=lang, bindings=[mark]).output == "xy\n"


def test_raw_output_below_print_is_kept_apart() -> None:
    """R-TRANS-2: fds 1 and 2 are pipes the host drains, apart from fd 3
    (the Node guest leaves them to the host)."""
    source = ("const fs = require('fs')\nfs.writeSync(1, 'raw out')\n"
              "fs.writeSync(2, 'raw err')\nconsole.log('p')")
    result = run(source, language="javascript")
    assert result.output == "p\n"
    assert result.raw_stdout == "raw out"
    assert result.raw_stderr == "raw err"


@pytest.mark.real_guest  # the guest as a script (threads, fds, pydoc's pager)
def test_what_a_python_program_writes_to_fds_1_and_2_is_its_output() -> None:
    """R-OUTPUT-5: os.write to fds 1 and 2, before the text printed after it,
    each to its stream, bytes decoded as UTF-8 (a character split between
    two writes whole); ``sys.stdout.fileno()`` is fd 1, so a subprocess can
    be given it. More than a pipe holds does not block the writer."""
    source = ("import os, subprocess, sys\nprint('p1')\nos.write(1, b'raw out\\n')\n"
              "os.write(2, b'raw err\\n')\nos.write(1, b'\\xc3')\nos.write(1, b'\\xa9\\n')\n"
              "subprocess.run(['echo', 'given'], stdout=sys.stdout)\n"
              "os.write(sys.stderr.fileno(), b'x' * 200000)\nprint('p2')")
    result = run(source)
    assert result.status is Status.OK, result.error
    assert result.stdout == "p1\nraw out\n\u00e9\ngiven\np2\n"
    assert result.stderr == "raw err\n" + "x" * 200000
    assert result.raw_stdout == result.raw_stderr == ""


def test_return_value_outside_the_model_names_the_path(lang: str) -> None:
    source = pick(lang,
                  python="import datetime\nreturn {'items': [1, {'when': datetime.date.today()}]}",
                  javascript="return {items: [1, {when: new Date()}]}")
    result = run(source, language=lang)
    assert result.status is Status.ERROR
    assert result.error is not None
    assert result.error.type == "TypeError"
    assert "$.items[1].when" in result.error.message


def test_argument_outside_the_model_raises_at_the_call(lang: str) -> None:
    def f(x: Any) -> None:
        raise AssertionError("never called")

    source = pick(lang, python="try:\n    await f({1, 2})\nexcept TypeError as e:\n    return str(e)",
                  javascript="try { await f(new Set([1])) } catch (e) { return e.message }")
    result = run(source, language=lang, bindings=[f])
    kind = pick(lang, python="set", javascript="Set")
    assert result.value == f"f() argument 1: $: {kind} is outside the value model"


def test_binding_result_outside_the_model_is_an_error_for_the_program(lang: str) -> None:
    """R-RESULT-4: sent as call error INVALID_VALUE instead."""
    def f() -> Any:
        return object()

    source = pick(lang,
                  python="try:\n    await f()\nexcept BindingError as e:\n    return [e.type, e.code]",
                  javascript="try { await f() } catch (e) { return [e.type, e.code] }")
    assert run(source, language=lang, bindings=[f]).value == ["InvalidValue", 102]


def test_the_environment_is_scrubbed_and_the_cwd_private(lang: str) -> None:
    source = pick(lang,
                  python="import os\nreturn [sorted(os.environ), os.getcwd() == os.environ['HOME'], "
                         "os.listdir('.')]",
                  javascript="return [Object.keys(process.env).sort(), "
                             "process.cwd() === process.env.HOME, require('fs').readdirSync('.')]")
    names, cwd_is_home, listing = run(source, language=lang, env={"EXTRA": "1"}).value  # type: ignore[misc]
    assert names == ["EXTRA", "HOME", "LANG", "LC_ALL", "PATH", "PWD", "TMPDIR"]
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
            results = await asyncio.gather(
                *(rt.run(f"return {i}", language=("python", "javascript")[i % 2])
                  for i in range(10)))
            return [r.value for r in results]

    assert asyncio.run(go()) == list(range(10))


def test_stdin_is_closed(lang: str) -> None:
    """R-TRANS-2: fd 0 is /dev/null."""
    source = pick(lang, python="import sys\nreturn sys.__stdin__.read()",
                  javascript="return require('fs').readFileSync(0, 'utf8')")
    assert run(source, language=lang).value == ""


def test_misuse_of_the_api_raises() -> None:
    with pytest.raises(ValueError, match="language"):
        run("return 1", language="cobol")
    with pytest.raises(ValueError, match="both become 'a_b'"):
        run("return 1", bindings={"a b": abs, "a-b": abs})
    with pytest.raises(TypeError):
        run(b"return 1")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        Limits(timeout=0)
    with pytest.raises(ValueError, match="Unicode"):
        run("return '\udc80'")
    with pytest.raises(ValueError, match="bytes"):
        run("#" * (16 << 20))


def test_a_slow_sync_binding_does_not_block_the_loop() -> None:
    def slow() -> str:
        time.sleep(0.3)
        return "done"

    async def fast() -> str:
        return "fast"

    source = "import asyncio\nreturn await asyncio.gather(slow(), fast())"
    assert run(source, bindings=[slow, fast]).value == ["done", "fast"]


# -- JavaScript and TypeScript specifics ---------------------------------------


def test_typescript_types_are_stripped_and_lines_kept() -> None:
    async def add(a: int, b: int) -> int:
        return a + b

    source = "interface P { x: number }\nconst p: P = { x: await add(1, 2) }\n" \
             "function f(n: number): number {\n  throw new Error(`bad ${n}`)\n}\n" \
             "if (p.x === 3) f(p.x as number)\n"
    result = run(source, language="typescript", bindings=[add])
    assert result.error is not None
    assert (result.error.type, result.error.message, result.error.line) == ("Error", "bad 3", 4)


def test_typescript_that_cannot_be_stripped_names_the_construct() -> None:
    result = run("const a = 1\nenum Color { Red }\nreturn a", language="typescript")
    assert result.status is Status.ERROR
    assert result.error is not None
    assert result.error.type == "SyntaxError"
    assert "enum" in result.error.message and result.error.line == 2


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("undefined", None),
        ("{a: undefined, b: [undefined]}", {"b": [None]}),
        ("2n ** 70n", 2**70),
        ("2 ** 60", float(2**60)),
        ("-0", -0.0),
        ("new Uint8Array([1, 2])", b"\x01\x02"),
        ("Buffer.from('hi')", b"hi"),
        ("new Map([['k', 1]])", {"k": 1}),
        ("Object.assign(Object.create(null), {k: 2})", {"k": 2}),
    ],
)
def test_javascript_value_mapping(expression: str, expected: Any) -> None:
    result = run(f"return {expression}", language="javascript")
    assert result.status is Status.OK, result.error
    assert result.value == expected
    assert type(result.value) is type(expected)


@pytest.mark.parametrize(
    ("expression", "path"),
    [
        ("{when: new Date()}", "$.when: Date"),
        ("[1, () => 1]", "$[1]: function"),
        ("new (class Point {})()", "$: Point"),
        ("new Map([[1, 2]])", "$: map key 1"),
        ("(() => { const a = {}; a.self = a; return a })()", "$.self: cycle"),
        ("new Float32Array(2)", "$: Float32Array"),
        ("Symbol('s')", "$: symbol"),
        ("['ok', 'a\\udc80']", "$[1]: text is not valid Unicode"),
    ],
)
def test_javascript_values_outside_the_model(expression: str, path: str) -> None:
    result = run(f"return {expression}", language="javascript")
    assert result.status is Status.ERROR
    assert result.error is not None and path in result.error.message


def test_javascript_decodes_big_integers_as_bigint() -> None:
    def big() -> list[int]:
        return [2**53 - 1, 2**53, 2**70]

    source = "return (await big()).map((n) => typeof n)"
    assert run(source, language="javascript", bindings=[big]).value == [
        "number", "bigint", "bigint"]


def test_javascript_program_cannot_import_the_guests_packages() -> None:
    result = run("await import('cbor2')", language="javascript")
    assert result.status is Status.ERROR
    assert result.error is not None and "cbor2" in result.error.message
