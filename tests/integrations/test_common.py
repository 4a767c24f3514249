"""What every integration shares: the Runtime it makes when given none."""

from __future__ import annotations

import asyncio

import pytest

from tether import Runtime
from tether.integrations import _common


def test_one_runtime_per_loop_kept_for_later_runs_and_closed_with_the_loop() -> None:
    runtimes = _common.Runtimes()

    async def two_runs() -> Runtime:
        first = await runtimes.get()
        assert (await first.run("return 1")).value == 1
        assert await runtimes.get() is first
        return first

    used = asyncio.run(two_runs())
    assert used._closed  # asyncio.run shut the loop down: its warm guests are gone
    assert asyncio.run(two_runs()) is not used  # a new loop makes its own


def test_a_given_runtime_is_used_and_left_open() -> None:
    async def main() -> None:
        async with Runtime() as given:
            runtimes = _common.Runtimes(given)
            assert await runtimes.get() is given
            await runtimes.aclose()
            assert not given._closed

    asyncio.run(main())


def test_aclose_closes_the_loops_own_runtime() -> None:
    async def main() -> None:
        runtimes = _common.Runtimes()
        runtime = await runtimes.get()
        await runtimes.aclose()
        assert runtime._closed
        assert await runtimes.get() is not runtime

    asyncio.run(main())


def test_every_integration_converts_values_alike() -> None:
    import dataclasses
    import enum

    from pydantic import BaseModel

    class Sky(enum.Enum):
        GREY = "grey"

    @dataclasses.dataclass
    class Point:
        x: int

    class Customer(BaseModel):
        name: str
        sky: Sky

    assert _common.value(Customer(name="Ada", sky=Sky.GREY)) == {"name": "Ada", "sky": "grey"}
    assert _common.value([Point(1), (2, b"\x00")]) == [{"x": 1}, [2, b"\x00"]]
    # Text is parsed as its declared type says, and JSON objects without one.
    assert _common.value("42", declared={"type": "integer"}) == 42
    assert _common.value("42") == "42"
    assert _common.value("42", declared={"type": "string"}) == "42"
    assert _common.value('{"a": 1}') == {"a": 1}
    assert _common.value("[1, x", declared={"type": "array"}) == "[1, x"


def test_a_value_no_program_can_hold_says_what_to_return() -> None:
    with pytest.raises(TypeError, match=r"lookup returned a object.*\.model_dump\(\)"):
        _common.value(object(), "lookup")
