"""The host's pure pieces, without a guest: limits to the wire, a binding's
value to its RESULT, DONE's variables checked, a run's request to its RUN
and checkpoint (host behaviour end to end is in the other host tests)."""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import socket
import time
from typing import Any

import pytest

from tether import Limits
from tether.codec import Call, Done, ErrorCode, Run, decode_payload, encode_payload
from tether.host.aio.channel import channel_pair
from tether.host.bindings.prepared import prepare_bindings
from tether.host.guests.process import readable
from tether.host.limits import MAX_CPU_SECONDS, MAX_RESOURCE
from tether.host.run.checkpoints import CheckpointKeys, LoggedCall, open_checkpoint
from tether.host.run.request import RunRequest
from tether.host.run.serving import binding_error, result_for
from tether.host.run.variables import returned_variables_problem

from .conftest import granted_send_buffer

CALL = Call(id=7, name="get", args=[], kwargs={})


def test_a_channel_pair_sends_from_larger_buffers_never_smaller() -> None:
    """Both ends get what asking for SEND_BUFFER_BYTES grants, where that is
    more than the kernel's default (host/aio/channel.py)."""
    plain, other = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    with plain, other:
        default = plain.getsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF)
    host_end, guest_end = channel_pair()
    with host_end, guest_end:
        sizes = {end.getsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF)
                 for end in (host_end, guest_end)}
    assert sizes == {max(default, granted_send_buffer())}


@pytest.mark.parametrize("variables", [False, True])
def test_limits_on_the_wire(variables: bool) -> None:
    """RUN carries the protocol and resource limits, variables_bytes exactly
    when the run has variables (R-VARS-1), cpu_seconds from the timeout."""
    limits = Limits(timeout=2.5, variables_bytes=1000)
    wire = limits.wire(variables=variables)
    assert wire.cpu_seconds == math.ceil(2.5) + 1
    assert (wire.value_bytes, wire.frame_bytes, wire.max_depth) == \
        (limits.value_bytes, limits.frame_bytes, limits.max_depth)
    assert wire.variables_bytes == (1000 if variables else None)
    assert wire.problem() is None
    assert Limits(cpu_seconds=5).wire().cpu_seconds == 5


@pytest.mark.parametrize(("field", "value"), [
    ("timeout", math.inf), ("timeout", math.nan), ("kill_grace", math.inf),
    ("approval_timeout", math.inf), ("call_timeout", math.inf), ("timeout", 10**400),
    ("memory_bytes", 2**70), ("cpu_seconds", 2**70), ("open_files", 2**70),
    ("file_bytes", 2**70), ("processes", 2**70), ("disk_bytes", 2**70),
    ("memory_bytes", -1), ("cpu_seconds", -1), ("open_files", -1), ("file_bytes", -1),
    ("processes", -1), ("memory_bytes", 1.5e9), ("open_files", True),
])
def test_limits_refuse_what_no_run_could_apply(field: str, value: object) -> None:
    """Infinite times, and resource limits an rlimit cannot hold (or that
    would mean none at all: -1 is RLIM_INFINITY), are refused at once, with
    the field named, not found out by the run."""
    with pytest.raises(ValueError, match=rf"Limits\.{field}\b"):
        Limits(**{field: value})


def test_a_huge_timeout_gives_a_cpu_limit_the_kernel_can_hold() -> None:
    """cpu_seconds follows the timeout, within what RLIMIT_CPU holds: the
    kernel counts it (the hard limit one second more) in nanoseconds, in 64
    bits."""
    assert Limits(timeout=1e300).wire().cpu_seconds == MAX_CPU_SECONDS
    assert (MAX_CPU_SECONDS + 1) * 10**9 < 2**64
    with pytest.raises(ValueError, match=r"Limits\.cpu_seconds"):
        Limits(cpu_seconds=MAX_CPU_SECONDS + 1)
    assert Limits(memory_bytes=MAX_RESOURCE).wire().memory_bytes == MAX_RESOURCE


@pytest.mark.parametrize(("value", "code"), [
    ({1, 2}, ErrorCode.INVALID_VALUE),  # outside the value model (R-RESULT-4)
    (b"x" * 40_000, ErrorCode.VALUE_TOO_LARGE),  # over value_bytes
    ([0] * 3000, ErrorCode.VALUE_TOO_LARGE),  # over value_bytes / 16 values (R-VAL-1)
])
def test_a_value_that_cannot_be_sent_is_a_call_error(value: Any, code: ErrorCode) -> None:
    result, payload = result_for(CALL, value, Limits(value_bytes=32_768, frame_bytes=65_536))
    assert payload is None and result.error is not None
    assert result.error.code is code and result.id == 7


@pytest.mark.parametrize("in_steps", [False, True])
def test_a_value_is_encoded_once_for_its_size_and_to_send(in_steps: bool) -> None:
    value = {"rows": list(range(50)), "name": "é"}
    result, payload = result_for(CALL, value, Limits(), in_steps=in_steps)
    assert result.error is None and payload is not None
    assert payload == encode_payload(result.to_wire())
    assert decode_payload(payload, 10) == {"id": 7, "value": value}


def test_a_binding_error_carries_only_the_class_and_text() -> None:
    """R-RESULT-3."""
    result = binding_error(3, KeyError("nope"))
    assert result.error is not None
    assert (result.error.code, result.error.type, result.error.message) == \
        (ErrorCode.BINDING_ERROR, "KeyError", "'nope'")


def _done(variables: dict[str, Any], dropped: dict[str, str] | None = None) -> tuple[Done, int]:
    done = Done(value=None, variables=variables, dropped=dropped or {})
    return done, len(encode_payload(done.to_wire()))


@pytest.mark.parametrize(("variables", "budget", "problem"), [
    ({"x": 1}, 100, None),
    ({"bad name": 1}, 100, "'bad name' is not an identifier"),  # R-VARS-1
    ({"_private": 1}, 100, "is private"),
    ({"x": "y" * 200}, 100, "over variables_bytes (100)"),  # R-VARS-5
    ({"x": [0] * 3000}, 32_768, "more than 2048 values"),  # variables_bytes / 16
])
def test_returned_variables(variables: dict[str, Any], budget: int,
                            problem: str | None) -> None:
    done, size = _done(variables)
    found = returned_variables_problem(done, size, budget)
    assert (found is None) if problem is None else (found is not None and problem in found)


def test_a_request_makes_its_run_and_its_checkpoint() -> None:
    def get(key: str) -> str:
        """Look ``key`` up."""
        return key

    bindings = prepare_bindings([get], "python")
    request = RunRequest("return 1", "python", bindings, Limits(), {"n": 1}, True)
    run = request.run_message(request.wire_limits())
    assert isinstance(run, Run) and run.limits.variables_bytes == Limits().variables_bytes
    assert [b.name for b in run.bindings] == ["get"] and run.last_expression
    calls = [LoggedCall("get", ["k"], {}, value="k", answered=True),
             LoggedCall("get", ["in flight"], {}),
             LoggedCall("get", ["later"], {}, suspended=True)]
    sealed = asyncio.run(request.checkpoint(calls, "later"))
    opened = asyncio.run(open_checkpoint(sealed, CheckpointKeys(None), Limits()))
    saved = opened.checkpoint
    assert (saved.source, saved.language, saved.variables, saved.reason) == \
        ("return 1", "python", {"n": 1}, "later")
    assert saved.calls == calls and saved.bindings == ["get"]
    assert 0 < opened.size < len(sealed)


def test_a_wait_for_a_descriptor_that_times_out_as_it_turns_readable_leaves_the_loop_quiet(
        ) -> None:
    """The teardown waits at most a while for the sandbox init's pidfd. When
    the loop was held up past that while, the timeout and the readiness
    arrive together: neither may reach the loop's exception handler."""
    async def late(fd: int, write: int) -> list[dict[str, Any]]:
        reported: list[dict[str, Any]] = []
        asyncio.get_running_loop().set_exception_handler(lambda _, ctx: reported.append(ctx))
        waiting = asyncio.ensure_future(asyncio.wait_for(readable(fd), 0.01))
        await asyncio.sleep(0)
        os.write(write, b"x")
        time.sleep(0.05)  # the loop held up: the timeout is due as the fd turns readable
        with contextlib.suppress(TimeoutError):
            await waiting
        for _ in range(5):
            await asyncio.sleep(0)
        return reported

    read, write = os.pipe()
    try:
        assert asyncio.run(late(read, write)) == []
    finally:
        os.close(read)
        os.close(write)
