"""Values that cost more than their bytes, and claims the host must not
believe: a payload of millions of tiny items, honest programs that build
such values, and a DONE that says "out of memory" when nothing ran out."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tether import Limits, RunResult, Runtime, Status
from tether.codec import Done, FrameType, ProgramError, encode_frame, encode_payload, value_items

from .conftest import BLOCK, pick, quick, run, write_fd3

ITEMS = value_items(Limits().value_bytes)


#: A program that writes, straight to fd 3, ``times`` (at most 23) CALLs of
#: ``echo`` whose args are ``count`` empty arrays (one byte an item), and
#: never reads a RESULT.
FLOOD = """
import os
count, times = {count}, {times}
for call_id in range(1, times + 1):
    payload = (b"\\xa4\\x62id" + bytes([call_id]) + b"\\x64args\\x9a" + count.to_bytes(4, "big")
               + b"\\x80" * count + b"\\x64name\\x64echo\\x66kwargs\\xa0")
    view = memoryview(b"TH\\x01\\x03\\x00\\x00" + len(payload).to_bytes(4, "big") + payload)
    while view:
        view = view[os.write(3, view):]
""" + BLOCK["python"]


def echo(value: Any) -> Any:
    return value


def test_a_call_of_millions_of_empty_arrays_is_refused_before_decoding() -> None:
    """16 million one-byte items fit a 16 MiB frame; decoded they would take
    gigabytes. The host counts the items first and ends the run."""
    source = FLOOD.format(count=16_000_000, times=1)
    result = run(source, bindings=[echo], limits=quick(timeout=60))
    assert result.status is Status.PROTOCOL_ERROR, result.error
    assert result.error is not None and "data items" in result.error.message


def test_runs_beside_a_flooding_run_keep_their_timeouts_and_results() -> None:
    """While one run sends its worst (calls just inside the item bound, one
    after another, to a binding that sends them back, and never reads the
    results), runs beside it still end as they should: one by its timeout,
    one with its value."""
    flood = FLOOD.format(count=ITEMS - 100, times=20)

    async def go() -> list[RunResult]:
        async with Runtime() as rt:
            hostile = asyncio.ensure_future(rt.run(flood, bindings=[echo],
                                                   limits=quick(timeout=8)))
            await asyncio.sleep(0.1)
            beside = await asyncio.gather(
                rt.run("import time\ntime.sleep(5)", limits=quick(timeout=1)),
                rt.run("return 'fine'", limits=quick(timeout=30)))
            return [await hostile, *beside]

    hostile, timed_out, fine = asyncio.run(go())
    assert hostile.status is Status.TIMEOUT, hostile.error  # blocked on its own full socket
    assert hostile.stats.calls >= 1
    assert timed_out.status is Status.TIMEOUT
    assert (fine.status, fine.value) == (Status.OK, "fine")


def test_an_honest_return_of_too_many_values_is_a_limit(lang: str) -> None:
    source = pick(lang, python=f"return [[] for _ in range({ITEMS + 1})]",
                  javascript=f"return Array.from({{ length: {ITEMS + 1} }}, () => [])")
    result = run(source, language=lang, limits=quick(timeout=60))
    assert (result.status, result.limit) == (Status.LIMIT, "value_bytes"), result.error
    assert result.error is not None and "values" in result.error.message


def test_honest_arguments_of_too_many_values_fail_at_the_call(lang: str) -> None:
    source = pick(lang, python=f"""
try:
    await echo([[] for _ in range({ITEMS})])
except ValueError as e:
    return str(e)
""", javascript=f"""
try {{ await echo(Array.from({{ length: {ITEMS} }}, () => [])) }} catch (e) {{ return e.message }}
""")
    result = run(source, language=lang, bindings=[echo], limits=quick(timeout=60))
    assert result.status is Status.OK, result.error
    assert "more than" in result.value and "values" in result.value


def test_a_binding_result_of_too_many_values_is_refused(lang: str) -> None:
    def many() -> list[list[int]]:
        return [[] for _ in range(ITEMS + 1)]

    source = pick(lang, python="try:\n    await many()\nexcept BindingError as e:\n    return e.type",
                  javascript="try { await many() } catch (e) { return e.type }")
    result = run(source, language=lang, bindings=[many], limits=quick(timeout=60))
    assert (result.status, result.value) == (Status.OK, "ValueTooLarge"), result.error


def test_values_at_the_bound_still_cross(lang: str) -> None:
    """The bound counts every item: a value just inside it is fine, both
    ways and as the result."""
    n = ITEMS - 10
    source = pick(lang, python=f"x = await echo([0] * {n})\nreturn len(x)",
                  javascript=f"const x = await echo(new Array({n}).fill(0))\nreturn x.length")
    result = run(source, language=lang, bindings=[echo], limits=quick(timeout=60))
    assert (result.status, result.value) == (Status.OK, n), result.error


@pytest.mark.parametrize("how", ["raised", "forged"])
def test_a_claimed_memory_error_is_not_a_memory_limit(lang: str, how: str) -> None:
    """The status comes from what the host measures: a program that raises
    MemoryError, or forges a DONE saying so, has used next to nothing."""
    if how == "raised":
        source = pick(lang, python="raise MemoryError('pretend')",
                      javascript="throw new RangeError('Array buffer allocation failed')")
    else:
        kind = pick(lang, python="MemoryError", javascript="RangeError")
        done = Done(error=ProgramError(type=kind, message="allocation failed"))
        frame = encode_frame(FrameType.DONE, encode_payload(done.to_wire()))
        source = write_fd3(lang, frame) + BLOCK[lang]
    result = run(source, language=lang, limits=quick(memory_bytes=256 << 20))
    assert result.status is Status.ERROR, result
    assert result.limit is None
