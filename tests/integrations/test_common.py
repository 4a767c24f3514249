"""What every integration shares: the Runtime it makes when given none."""

from __future__ import annotations

import asyncio

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
