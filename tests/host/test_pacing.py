"""Work the decoding thread does for the loop (a large frame decoded, a
large result encoded) takes one step per turn of the loop
(host/aio/reader.py): the loop's other callbacks run between any two of
its steps, however large the frame."""

from __future__ import annotations

import asyncio
import itertools
import threading
import time

from tether.codec import decode_payload, encode_payload
from tether.codec.values import decode_payload_in_steps
from tether.host.aio.reader import STEP_BYTES, between_steps, decoding, paced

#: About 80 steps' worth of dense items (each empty list is one byte).
FRAME = encode_payload([[] for _ in range(80 * STEP_BYTES)])


def test_a_paced_decode_lets_the_loop_turn_between_every_two_steps() -> None:
    async def go() -> tuple[object, list[int]]:
        loop = asyncio.get_running_loop()
        turns = 0
        ticking = True

        def tick() -> None:  # a turn of a busy loop: a system call, which lets go of the GIL
            nonlocal turns
            turns += 1
            time.sleep(0.001)
            if ticking:
                loop.call_soon(tick)

        seen: list[int] = []  # the loop's turns at each step

        def step() -> None:
            seen.append(turns)
            between_steps()

        loop.call_soon(tick)
        value = await paced(decoding, lambda: decode_payload_in_steps(
            FRAME, step_bytes=STEP_BYTES, between_steps=step))
        ticking = False
        return value, seen

    value, seen = asyncio.run(go())
    assert value == decode_payload(FRAME)
    assert len(seen) > 50
    assert all(later > earlier for earlier, later in itertools.pairwise(seen)), seen


def test_steps_outside_paced_work_do_not_wait_for_a_loop() -> None:
    """Steps on a thread no loop paces (or on the loop's own thread) only
    let go of the interpreter: a loop busy waiting for them cannot stall."""
    done = threading.Event()

    def work() -> None:
        decode_payload_in_steps(FRAME, step_bytes=STEP_BYTES, between_steps=between_steps)
        done.set()

    thread = threading.Thread(target=work)
    thread.start()
    thread.join(60)
    assert done.is_set()
