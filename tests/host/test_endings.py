"""Every way a run can end other than "ok": limits, timeouts, crashes,
protocol violations and cancellation. Each must return (or, for a cancelled
run() call, raise) promptly and leave nothing behind."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from tether import Runtime, Status

from .conftest import MARKER, alive, quick, run

# A grandchild that ignores SIGTERM, leaves the guest's pipes and keeps fd 3:
# printed as JSON so the test can check it is gone afterwards.
SPAWN_STUBBORN = f"""
import json, subprocess, sys
code = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(60)"
child = subprocess.Popen([sys.executable, "-c", code, "{MARKER}"], pass_fds=(3,),
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
print(json.dumps({{"pid": child.pid}}))
"""


def test_timeout() -> None:
    result = run("while True:\n    pass", limits=quick(timeout=0.5))
    assert result.status is Status.TIMEOUT
    assert result.error is not None and result.error.type == "Timeout"


def test_timeout_while_sleeping_forever() -> None:
    result = run("import asyncio\nprint('waiting')\nawait asyncio.sleep(3600)",
                 limits=quick(timeout=0.5))
    assert result.status is Status.TIMEOUT
    assert result.output == "waiting\n"


def test_timeout_with_calls_in_flight_cancels_them() -> None:
    cancelled = asyncio.Event()

    async def forever() -> None:
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            cancelled.set()
            raise

    result = run("await forever()", bindings=[forever], limits=quick(timeout=0.5))
    assert result.status is Status.TIMEOUT
    assert cancelled.is_set()


def test_per_call_timeout() -> None:
    async def hang() -> None:
        await asyncio.sleep(3600)

    source = "try:\n    await hang()\nexcept BindingError as e:\n    return [e.type, e.code]"
    result = run(source, bindings=[hang], limits=quick(call_timeout=0.2))
    assert result.value == ["CallTimeout", 105]


def test_a_binding_raising_timeout_error_is_not_a_call_timeout() -> None:
    async def f() -> None:
        raise TimeoutError("upstream timed out")

    source = "try:\n    await f()\nexcept BindingError as e:\n    return [e.type, e.code]"
    assert run(source, bindings=[f], limits=quick(call_timeout=5)).value == ["TimeoutError", 100]


def test_output_cap_drops_the_rest_and_the_run_goes_on() -> None:
    source = "for i in range(1000):\n    print('x' * 99)\nreturn 'finished'"
    result = run(source, limits=quick(output_bytes=1000))
    assert result.status is Status.OK
    assert result.value == "finished"
    assert result.output == ("x" * 99 + "\n") * 10
    assert result.stats.output_truncated


def test_printing_100_mb() -> None:
    source = "chunk = 'y' * (1 << 20)\nfor _ in range(100):\n    print(chunk)\nreturn 1"
    result = run(source, limits=quick(output_bytes=1 << 16))
    assert result.status is Status.OK
    assert len(result.output.encode()) == 1 << 16
    assert result.stats.output_truncated


def test_output_cap_never_splits_a_character() -> None:
    result = run("print('é' * 100)", limits=quick(output_bytes=11))
    assert result.output == "é" * 5


def test_raw_output_cap() -> None:
    result = run("import os\nos.write(1, b'z' * 100000)", limits=quick(raw_output_bytes=100))
    assert result.raw_stdout == "z" * 100
    assert result.stats.raw_output_truncated


def test_return_value_too_large_is_a_limit() -> None:
    result = run("return 'v' * 200_000", limits=quick(value_bytes=100_000))
    assert result.status is Status.LIMIT
    assert result.limit == "value_bytes"


def test_arguments_too_large_raise_in_the_program() -> None:
    def f(x: Any) -> None:
        raise AssertionError("never called")

    source = "try:\n    await f('a' * 200_000)\nexcept ValueError as e:\n    return str(e)"
    result = run(source, bindings=[f], limits=quick(value_bytes=100_000))
    assert "value_bytes" in result.value  # type: ignore[operator]


def test_binding_result_too_large() -> None:
    def big() -> str:
        return "b" * 200_000

    source = "try:\n    await big()\nexcept BindingError as e:\n    return e.code"
    assert run(source, bindings=[big], limits=quick(value_bytes=100_000)).value == 103


def test_return_value_nested_too_deeply() -> None:
    result = run("x = []\nfor _ in range(100):\n    x = [x]\nreturn x", limits=quick(max_depth=50))
    assert result.status is Status.ERROR
    assert result.error is not None and "nested too deeply" in result.error.message


def test_return_value_with_a_cycle() -> None:
    result = run("x = {}\nx['self'] = x\nreturn x")
    assert result.error is not None and "$.self: cycle" in result.error.message


def test_memory_limit() -> None:
    result = run("x = bytearray(512 * 1024 * 1024)", limits=quick(memory_bytes=256 << 20))
    assert result.status is Status.LIMIT
    assert result.limit == "memory_bytes"


def test_cpu_limit() -> None:
    result = run("while True:\n    pass", limits=quick(timeout=20, cpu_seconds=1))
    assert result.status is Status.LIMIT
    assert result.limit == "cpu_seconds"


def test_file_size_limit() -> None:
    source = "try:\n    open('big', 'wb').write(b'x' * 100_000)\nexcept OSError as e:\n" \
             "    return e.errno"
    assert run(source, limits=quick(file_bytes=10_000)).value == 27  # EFBIG


def test_open_files_limit() -> None:
    source = """
files = []
try:
    for i in range(100):
        files.append(open(f"f{i}", "w"))
except OSError as e:
    return [e.errno, len(files) < 100]
"""
    assert run(source, limits=quick(open_files=32)).value == [24, True]  # EMFILE


def test_guest_exits_mid_call() -> None:
    cancelled = asyncio.Event()

    async def slow() -> None:
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            cancelled.set()
            raise

    source = "import asyncio, os\nasyncio.ensure_future(slow())\nawait asyncio.sleep(0.2)\n" \
             "os._exit(3)"
    result = run(source, bindings=[slow])
    assert result.status is Status.CRASHED
    assert result.error is not None and "exit status 3" in result.error.message
    assert cancelled.is_set()


def test_guest_killed_by_a_signal() -> None:
    result = run("import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)")
    assert result.status is Status.CRASHED
    assert result.error is not None and "SIGSEGV" in result.error.message


def test_garbage_on_fd_3_is_a_protocol_error() -> None:
    result = run("import os\nos.write(3, b'this is not a frame at all')\nimport time\n"
                 "time.sleep(10)")
    assert result.status is Status.PROTOCOL_ERROR
    assert result.error is not None and "FRAME_MALFORMED" in result.error.message


def test_huge_declared_length_on_fd_3() -> None:
    result = run("import os, struct\nos.write(3, struct.pack('>2sBBHI', b'TH', 1, 5, 0, "
                 "2**32 - 1))\nimport time\ntime.sleep(10)")
    assert result.status is Status.PROTOCOL_ERROR
    assert result.error is not None and "FRAME_TOO_LARGE" in result.error.message


def test_closing_fd_3() -> None:
    result = run("import os, time\nos.close(3)\ntime.sleep(10)", limits=quick(timeout=5))
    assert result.status is Status.CRASHED


def test_stubborn_grandchild_is_killed_after_a_timeout() -> None:
    result = run(SPAWN_STUBBORN + "while True:\n    pass", limits=quick(timeout=1))
    assert result.status is Status.TIMEOUT
    pid = json.loads(result.output)["pid"]
    assert not alive(pid)


def test_stubborn_grandchild_is_killed_after_a_normal_end() -> None:
    result = run(SPAWN_STUBBORN + "return 'done'")
    assert result.status is Status.OK
    assert not alive(json.loads(result.output)["pid"])


def test_cancelling_run_raises_promptly_and_cleans_up() -> None:
    async def go() -> None:
        async with Runtime() as rt:
            task = asyncio.ensure_future(rt.run("while True:\n    pass", limits=quick()))
            await asyncio.sleep(0.3)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await asyncio.wait_for(task, 5)

    asyncio.run(go())


def test_closing_the_runtime_cancels_runs() -> None:
    async def go() -> Any:
        rt = Runtime()
        task = asyncio.ensure_future(rt.run("while True:\n    pass", limits=quick()))
        await asyncio.sleep(0.3)
        await rt.aclose()
        return await task

    result = asyncio.run(go())
    assert result.status is Status.CANCELLED
    assert result.error is not None and result.error.type == "Cancelled"
