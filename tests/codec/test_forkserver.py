"""The fork server's control messages round-trip (codec/forkserver.py)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from tether.codec.forkserver import (
    EXITED,
    FAILED,
    FORKED,
    REQUEST,
    decode_reply,
    decode_request,
    encode_reply,
    encode_request,
    exit_status,
)


@given(st.integers(0, 2**32 - 1), st.none() | st.integers(1, 2**63), st.booleans(),
       st.booleans(), st.text(min_size=1))
def test_a_request_round_trips(token: int, disk_bytes: int | None, rehearse: bool, heap: bool,
                               workdir: str) -> None:
    request = encode_request(token, disk_bytes, workdir, rehearse=rehearse, heap=heap)
    assert decode_request(request) == (token, disk_bytes or 0, rehearse, heap, workdir)


@given(st.sampled_from([FORKED, FAILED, EXITED]), st.integers(0, 2**32 - 1),
       st.integers(-(2**31), 2**31 - 1))
def test_a_reply_round_trips(kind: bytes, token: int, value: int) -> None:
    assert decode_reply(encode_reply(kind, token, value)) == (kind, token, value)


def test_what_is_not_a_message() -> None:
    assert decode_request(b"") is None
    assert decode_request(b"\0" * REQUEST.size) is None  # no work directory
    assert decode_reply(b"") is None  # the template's end of file
    assert decode_reply(encode_reply(EXITED, 1, 0) + b"x") is None


def test_an_exit_status_is_its_code_or_minus_the_signal() -> None:
    """EXITED's value, and every guest's exit status on the host."""
    import os
    import signal

    for code, expected in ((0, 0), (3, 3)):
        pid = os.fork()
        if pid == 0:
            os._exit(code)
        status = os.waitid(os.P_PID, pid, os.WEXITED)
        assert status is not None and exit_status(status) == expected
    pid = os.fork()
    if pid == 0:
        signal.pause()
        os._exit(0)
    os.kill(pid, signal.SIGKILL)
    status = os.waitid(os.P_PID, pid, os.WEXITED)
    assert status is not None and exit_status(status) == -signal.SIGKILL
