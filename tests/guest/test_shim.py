"""The CPython shim's rehearsal: a whole run's path, against an in-memory
host, that leaves the process as it found it."""

from __future__ import annotations

import sys

import pytest

from tether.codec import Call, Done, Hello, Output, ProgramError, encode_payload
from tether.guest.python import shim


def test_the_rehearsal_takes_a_run_through_the_whole_guest_path() -> None:
    stdout, stderr = sys.stdout, sys.stderr
    seen = shim.rehearse()
    assert (sys.stdout, sys.stderr) == (stdout, stderr)
    assert [type(m) for m in seen] == [Hello, Call, Output, Done]
    assert seen[-1].value == [1, {"a": 1.5, "b": None}]


@pytest.mark.parametrize("budget", [1 + 1024, 2000, 4096 + 1024])
def test_a_done_error_is_made_valid_text_and_shortened_to_fit(budget: int) -> None:
    """R-DONE-7: the traceback goes first, then the message, cut at a code
    point with an ellipsis; lone surrogates become U+FFFD."""
    error = ProgramError(type="E" * 300, message="bad \udc80 " + "é" * 3000,
                         traceback="Traceback\n" + "x" * 10000, line=3)
    fitted = shim.fit_error(error, budget)
    assert len(encode_payload({"error": fitted.to_wire()})) <= budget
    assert len(fitted.type.encode()) <= shim.MAX_ERROR_TYPE_BYTES
    assert fitted.line == 3
    for text in (fitted.message, fitted.traceback):
        text.encode()  # valid text
        assert not text or text.endswith("\u2026") or text == error.message
    if fitted.message:
        assert fitted.message.startswith("bad \ufffd ")
    small = ProgramError(type="ValueError", message="no", traceback="")
    assert shim.fit_error(small, budget) == small
