"""Every way a run can end other than "ok": limits, timeouts, crashes,
protocol violations and cancellation, once per guest language where it
applies. Each must return (or, for a cancelled run() call, raise) promptly
and leave nothing behind."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from tether import Runtime, Status

from .conftest import (
    BLOCK,
    MARKER,
    SPIN,
    cancellation_probe,
    no_marked_processes,
    pick,
    quick,
    run,
    write_fd3,
)

# A grandchild that ignores SIGTERM, leaves the guest's pipes and keeps fd 3;
# its pid is printed as JSON so the test can check it is gone afterwards.
SPAWN_STUBBORN = {
    "python": f"""
import json, subprocess, sys
code = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(60)"
child = subprocess.Popen([sys.executable, "-c", code, "{MARKER}"], pass_fds=(3,),
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
print(json.dumps({{"pid": child.pid}}))
""",
    "javascript": f"""
const {{ spawn }} = require('child_process')
const code = "process.on('SIGTERM', () => {{}}); setInterval(() => {{}}, 1000)"
const child = spawn(process.execPath, ['-e', code, '{MARKER}'],
                    {{ stdio: ['ignore', 'ignore', 'ignore', 3] }})
child.unref()  // as under plain Node, a child the program waits for keeps it running
console.log(JSON.stringify({{ pid: child.pid }}))
""",
}


def test_timeout(lang: str) -> None:
    result = run(SPIN[lang], language=lang, limits=quick(timeout=0.5))
    assert result.status is Status.TIMEOUT
    assert result.error is not None and result.error.type == "Timeout"


def test_timeout_while_a_promise_never_settles(lang: str) -> None:
    source = pick(lang, python="import asyncio\nprint('waiting')\nawait asyncio.sleep(3600)",
                  javascript="console.log('waiting')\n"
                             "await new Promise((done) => setTimeout(done, 3_600_000))")
    result = run(source, language=lang, limits=quick(timeout=0.5))
    assert result.status is Status.TIMEOUT
    assert result.output == "waiting\n"


def test_timeout_with_calls_in_flight_cancels_them(lang: str) -> None:
    """R-TERM-3: the binding calls still running are cancelled with the run."""
    slow, cancelled = cancellation_probe()
    result = run("await slow()", language=lang, bindings=[slow], limits=quick(timeout=0.5))
    assert result.status is Status.TIMEOUT
    assert cancelled.is_set()


def test_a_program_that_swallows_the_cancellation_still_times_out(lang: str) -> None:
    """R-DONE-5: the guest sends the value the program returned after the
    CANCEL; the host reports its own reason for cancelling."""
    slow, _ = cancellation_probe()
    source = pick(lang, python="import asyncio\ntry:\n    await slow()\n"
                               "except asyncio.CancelledError:\n    return 'swallowed'",
                  javascript="try { await slow() } catch (e) { return 'swallowed' }")
    result = run(source, language=lang, bindings=[slow], limits=quick(timeout=0.5))
    assert result.status is Status.TIMEOUT
    assert result.value is None


def test_per_call_timeout(lang: str) -> None:
    async def hang() -> None:
        await asyncio.sleep(3600)

    source = pick(lang,
                  python="try:\n    await hang()\nexcept BindingError as e:\n    return [e.type, e.code]",
                  javascript="try { await hang() } catch (e) { return [e.type, e.code] }")
    result = run(source, language=lang, bindings=[hang], limits=quick(call_timeout=0.2))
    assert result.value == ["CallTimeout", 105]


def test_a_binding_raising_timeout_error_is_not_a_call_timeout() -> None:
    async def f() -> None:
        raise TimeoutError("upstream timed out")

    source = "try:\n    await f()\nexcept BindingError as e:\n    return [e.type, e.code, e.message]"
    assert run(source, bindings=[f], limits=quick(call_timeout=5)).value == [
        "TimeoutError", 100, "upstream timed out"]


def test_output_cap_keeps_head_and_tail_and_the_run_goes_on(lang: str) -> None:
    source = pick(lang, python="for i in range(1000):\n    print('x' * 99)\nreturn 'finished'",
                  javascript="for (let i = 0; i < 1000; i++) console.log('x'.repeat(99))\n"
                             "return 'finished'")
    result = run(source, language=lang, limits=quick(output_bytes=1000))
    assert result.status is Status.OK
    assert result.value == "finished"
    line = "x" * 99 + "\n"
    assert result.output == line * 5 + "[tether: 99000 bytes of output dropped]\n" + line * 5
    assert result.stats.output_truncated


def test_printing_100_mb(lang: str) -> None:
    source = pick(lang,
                  python="chunk = 'y' * (1 << 20)\nfor _ in range(100):\n    print(chunk)\nreturn 1",
                  javascript="const chunk = 'y'.repeat(1 << 20)\n"
                             "for (let i = 0; i < 100; i++) console.log(chunk)\nreturn 1")
    result = run(source, language=lang, limits=quick(output_bytes=1 << 16))
    assert result.status is Status.OK
    head, marker, tail = result.output.split("\n", 2)
    assert (head, tail) == ("y" * (1 << 15), "y" * ((1 << 15) - 1) + "\n")
    assert marker == f"[tether: {100 * ((1 << 20) + 1) - (1 << 16)} bytes of output dropped]"
    assert result.stats.output_truncated


def test_output_cap_never_splits_a_character(lang: str) -> None:
    source = pick(lang, python="print('é' * 100)", javascript="console.log('é'.repeat(100))")
    assert run(source, language=lang, limits=quick(output_bytes=11)).output == (
        "éé\n[tether: 190 bytes of output dropped]\nééé\n")


def test_raw_output_cap() -> None:
    """The Node guest leaves fd 1 to the host (the Python guest captures it
    into the program's output, R-OUTPUT-5)."""
    result = run("require('fs').writeSync(1, 'z'.repeat(100000))", language="javascript",
                 limits=quick(raw_output_bytes=100))
    assert result.raw_stdout == "z" * 100
    assert result.stats.raw_output_truncated


def test_return_value_too_large_is_a_limit(lang: str) -> None:
    source = pick(lang, python="return 'v' * 200_000", javascript="return 'v'.repeat(200000)")
    result = run(source, language=lang, limits=quick(value_bytes=100_000))
    assert result.status is Status.LIMIT
    assert result.limit == "value_bytes"


def test_arguments_too_large_raise_in_the_program(lang: str) -> None:
    def f(x: Any) -> None:
        raise AssertionError("never called")

    source = pick(lang,
                  python="try:\n    await f('a' * 200_000)\nexcept ValueError as e:\n    return str(e)",
                  javascript="try { await f('a'.repeat(200000)) } catch (e) { return e.message }")
    result = run(source, language=lang, bindings=[f], limits=quick(value_bytes=100_000))
    assert "value_bytes" in result.value  # type: ignore[operator]


def test_binding_result_too_large(lang: str) -> None:
    """R-RESULT-4: sent as call error VALUE_TOO_LARGE instead."""
    def big() -> str:
        return "b" * 200_000

    source = pick(lang, python="try:\n    await big()\nexcept BindingError as e:\n    return e.code",
                  javascript="try { await big() } catch (e) { return e.code }")
    result = run(source, language=lang, bindings=[big], limits=quick(value_bytes=100_000))
    assert result.value == 103


def test_return_value_nested_too_deeply(lang: str) -> None:
    source = pick(lang, python="x = []\nfor _ in range(100):\n    x = [x]\nreturn x",
                  javascript="let x = []\nfor (let i = 0; i < 100; i++) x = [x]\nreturn x")
    result = run(source, language=lang, limits=quick(max_depth=50))
    assert result.status is Status.ERROR
    assert result.error is not None and "nested too deeply" in result.error.message


def test_return_value_with_a_cycle(lang: str) -> None:
    source = pick(lang, python="x = {}\nx['self'] = x\nreturn x",
                  javascript="const x = {}\nx.self = x\nreturn x")
    result = run(source, language=lang)
    assert result.error is not None and "$.self: cycle" in result.error.message


def test_memory_limit(lang: str) -> None:
    source = pick(lang, python="x = []\nwhile True:\n    x.append(bytearray(1 << 20))",
                  javascript="const a = []\nwhile (true) a.push(new Array(1e6).fill(1.5))")
    result = run(source, language=lang, limits=quick(memory_bytes=256 << 20, timeout=30))
    assert result.status is Status.LIMIT
    assert result.limit == "memory_bytes"


def test_one_allocation_past_the_limit_is_the_program_s_error() -> None:
    """It fails at once, before the run uses any memory: the host cannot
    tell it from a program that raises MemoryError itself (test_hostile)."""
    result = run("x = bytearray(512 * 1024 * 1024)", limits=quick(memory_bytes=256 << 20))
    assert result.status is Status.ERROR
    assert result.error is not None and result.error.type == "MemoryError"


def test_cpu_limit(lang: str) -> None:
    result = run(SPIN[lang], language=lang, limits=quick(timeout=20, cpu_seconds=1))
    assert result.status is Status.LIMIT
    assert result.limit == "cpu_seconds"


def test_file_size_limit(lang: str) -> None:
    source = pick(lang,
                  python="try:\n    open('big', 'wb').write(b'x' * 100_000)\nexcept OSError as e:\n"
                         "    return e.errno",
                  javascript="try { require('fs').writeFileSync('big', 'x'.repeat(100000)) }\n"
                             "catch (e) { return e.code }")
    expected = pick(lang, python="27", javascript="EFBIG")
    assert str(run(source, language=lang, limits=quick(file_bytes=10_000)).value) == expected


def test_open_files_limit(lang: str) -> None:
    source = pick(lang, python="""
files = []
try:
    for i in range(100):
        files.append(open(f"f{i}", "w"))
except OSError as e:
    return [e.errno, len(files) < 100]
""", javascript="""
const fs = require('fs')
const fds = []
try { for (let i = 0; i < 100; i++) fds.push(fs.openSync('f' + i, 'w')) }
catch (e) { return [e.code, fds.length < 100] }
""")
    expected = [pick(lang, python="24", javascript="EMFILE"), True]
    value = run(source, language=lang, limits=quick(open_files=32)).value
    assert [str(value[0]), value[1]] == expected  # type: ignore[index]


def test_guest_exits_mid_call(lang: str) -> None:
    slow, cancelled = cancellation_probe()
    source = pick(lang,
                  python="import asyncio, os\nasyncio.ensure_future(slow())\n"
                         "await asyncio.sleep(0.2)\nos._exit(3)",
                  javascript="slow()\nawait new Promise((r) => setTimeout(r, 200))\n"
                             "process.reallyExit(3)")  # as os._exit: process.exit ends the run
    result = run(source, language=lang, bindings=[slow])
    assert result.status is Status.CRASHED
    assert result.error is not None and "exit status 3" in result.error.message
    assert cancelled.is_set()


def test_guest_killed_by_a_signal(lang: str) -> None:
    source = pick(lang, python="import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)",
                  javascript="process.kill(process.pid, 'SIGSEGV')")
    result = run(source, language=lang)
    assert result.status is Status.CRASHED
    assert result.error is not None and "SIGSEGV" in result.error.message


def test_garbage_on_fd_3_is_a_protocol_error(lang: str) -> None:
    result = run(write_fd3(lang, b"this is not a frame at all") + BLOCK[lang], language=lang)
    assert result.status is Status.PROTOCOL_ERROR
    assert result.error is not None and "FRAME_MALFORMED" in result.error.message


def test_huge_declared_length_on_fd_3(lang: str) -> None:
    header = b"TH\x01\x05\x00\x00\xff\xff\xff\xff"
    result = run(write_fd3(lang, header) + BLOCK[lang], language=lang)
    assert result.status is Status.PROTOCOL_ERROR
    assert result.error is not None and "FRAME_TOO_LARGE" in result.error.message


def test_closing_fd_3(lang: str) -> None:
    source = pick(lang, python="import os\nos.close(3)\n",
                  javascript="require('fs').closeSync(3)\n") + BLOCK[lang]
    result = run(source, language=lang, limits=quick(timeout=5))
    assert result.status is Status.CRASHED


def test_stubborn_grandchild_is_killed_after_a_timeout(lang: str) -> None:
    result = run(SPAWN_STUBBORN[lang] + SPIN[lang], language=lang, limits=quick(timeout=1))
    assert result.status is Status.TIMEOUT
    assert json.loads(result.output)["pid"]
    assert no_marked_processes()


def test_stubborn_grandchild_is_killed_after_a_normal_end(lang: str) -> None:
    """R-TERM-4: the guest's exit is seen although a descendant keeps fd 3 and
    the pipes open."""
    result = run(SPAWN_STUBBORN[lang] + "return 'done'", language=lang)
    assert result.status is Status.OK
    assert json.loads(result.output)["pid"]
    assert no_marked_processes()


def test_a_run_ends_at_done_even_with_timers_alive() -> None:
    """R-DONE-4: an interval the program let go of (unref) does not outlive DONE."""
    result = run("setInterval(() => console.log('tick'), 5).unref()\nreturn 5", language="javascript")
    assert (result.status, result.value) == (Status.OK, 5)


def test_an_interval_keeps_the_program_alive_until_the_timeout() -> None:
    """R-DONE-9: as under plain Node, a pending interval keeps the program running."""
    source = "setInterval(() => {}, 5)\nconsole.log('started')\nreturn 5"
    result = run(source, language="javascript", limits=quick(timeout=0.5))
    assert (result.status, result.output) == (Status.TIMEOUT, "started\n")


def test_uncaught_errors_from_callbacks_end_the_run() -> None:
    source = "setTimeout(() => { throw new RangeError('late') }, 10)\n" \
             "await new Promise(() => {})"
    result = run(source, language="javascript", limits=quick(timeout=5))
    assert result.status is Status.ERROR
    assert result.error is not None and result.error.type == "RangeError"


def test_unhandled_rejections_end_the_run() -> None:
    source = "Promise.reject(new TypeError('nobody caught me'))\n" \
             "await new Promise(() => {})"
    result = run(source, language="javascript", limits=quick(timeout=5))
    assert result.status is Status.ERROR
    assert result.error is not None and result.error.message == "nobody caught me"


def test_cancelling_run_raises_promptly_and_cleans_up(lang: str) -> None:
    async def go() -> None:
        async with Runtime() as rt:
            task = asyncio.ensure_future(rt.run(SPIN[lang], language=lang, limits=quick()))
            await asyncio.sleep(0.3)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await asyncio.wait_for(task, 5)

    asyncio.run(go())


def test_closing_the_runtime_cancels_runs(lang: str) -> None:
    async def go() -> Any:
        rt = Runtime()
        task = asyncio.ensure_future(rt.run(SPIN[lang], language=lang, limits=quick()))
        await asyncio.sleep(0.3)
        await rt.aclose()
        return await task

    result = asyncio.run(go())
    assert result.status is Status.CANCELLED
    assert result.error is not None and result.error.type == "Cancelled"
