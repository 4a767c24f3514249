"""The codec's fuzz target (tether.codec.fuzz): it passes on its seeds and on
what Hypothesis makes, and it reports each kind of broken promise."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from typing import Any

import cbor2
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tether.codec import (
    NEED_DATA,
    Call,
    ErrorCode,
    FrameType,
    Output,
    RemoteProtocolError,
    Result,
    Stream,
    connection,
    encode_frame,
    encode_payload,
    fuzz,
    values,
)
from tether.codec.frames import FrameDecoder
from tether.codec.fuzz import SCENARIOS, BrokenPromise, one_input

from ..strategies import messages

#: The setting's two bytes for a host in RUNNING, reading a byte at a time.
HOST_RUNNING = bytes([SCENARIOS.index(next(s for s in SCENARIOS if s.receiver.value == "host"
                                           and s.state.value == "RUNNING")), 1 << 4])
OUTPUT = encode_frame(FrameType.OUTPUT, encode_payload(Output(Stream.STDOUT, "hi").to_wire()))


@pytest.mark.parametrize("seed", list(fuzz.seeds()), ids=lambda seed: seed[:12].hex())
def test_the_seeds_keep_every_promise(seed: bytes) -> None:
    one_input(seed)


@given(st.binary(max_size=600))
def test_any_bytes_keep_every_promise(data: bytes) -> None:
    """R-CBOR-9, R-ERR-1: a message or a connection error, however read."""
    one_input(data)


@given(st.integers(0, 255), st.integers(0, 255), st.lists(messages, max_size=4))
def test_streams_of_real_frames_keep_every_promise(first: int, second: int,
                                                   sent: list[Any]) -> None:
    """R-CBOR-2: what is accepted is its value's preferred serialization."""
    one_input(bytes([first & 0x7F, second]) + b"".join(
        encode_frame(m.TYPE, encode_payload(m.to_wire())) for m in sent))


@given(st.integers(0, 1), st.binary(max_size=300))
def test_payloads_alone_keep_every_promise(limits: int, payload: bytes) -> None:
    one_input(bytes([0x80, limits]) + payload)


def test_a_crash_is_not_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    def crash(*args: Any, **kwargs: Any) -> Any:
        raise KeyError("decoder bug")

    monkeypatch.setattr(connection, "decode_payload", crash)
    with pytest.raises(KeyError):
        one_input(HOST_RUNNING + OUTPUT)


def test_a_stream_that_depends_on_its_reads_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    feed = FrameDecoder.feed

    def lose_single_bytes(self: FrameDecoder, data: Any) -> None:
        feed(self, data if len(data) > 1 else b"")

    monkeypatch.setattr(FrameDecoder, "feed", lose_single_bytes)
    with pytest.raises(BrokenPromise, match="1 bytes at a time"):
        one_input(HOST_RUNNING + OUTPUT)


def test_decoding_in_steps_that_differs_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    in_steps = values.decode_payload_in_steps

    def other(*args: Any, **kwargs: Any) -> Any:
        envelope = in_steps(*args, **kwargs)
        return {**envelope, "stream": "stderr"} if "stream" in envelope else envelope

    monkeypatch.setattr(connection, "decode_payload_in_steps", other)
    with pytest.raises(BrokenPromise, match="in steps"):
        one_input(HOST_RUNNING + OUTPUT)


def test_a_payload_not_in_preferred_serialization_is_reported(
        monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("decode_payload", "decode_payload_in_steps"):
        monkeypatch.setattr(connection, name, lambda payload, *limits, **steps: cbor2.loads(
            payload))
    longer = b"\xa2fstreamfstdoutdtext\x79\x00\x02hi"  # "hi" with a 2-byte length
    with pytest.raises(BrokenPromise, match="preferred serialization"):
        one_input(HOST_RUNNING + encode_frame(FrameType.OUTPUT, longer))


def test_an_error_that_does_not_last_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    next_event = connection.Connection.next_event
    raised: set[int] = set()

    def forgetful(self: connection.Connection) -> Any:
        if id(self) in raised:
            return NEED_DATA
        try:
            return next_event(self)
        except RemoteProtocolError:
            raised.add(id(self))
            raise

    monkeypatch.setattr(connection.Connection, "next_event", forgetful)
    with pytest.raises(BrokenPromise, match="went on"):
        one_input(HOST_RUNNING + b"XX" + OUTPUT[2:])


def test_a_message_that_does_not_survive_its_encoding_is_reported(
        monkeypatch: pytest.MonkeyPatch) -> None:
    to_wire = Call.to_wire
    monkeypatch.setattr(Call, "to_wire", lambda self: {**to_wire(self), "id": self.id + 1})
    call = encode_frame(FrameType.CALL, encode_payload({"id": 3, "name": "f", "args": [],
                                                        "kwargs": {}}))
    with pytest.raises(BrokenPromise, match="sent again"):
        one_input(HOST_RUNNING + call + call.replace(b"\x03", b"\x04", 1))


def test_decoders_that_disagree_are_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(payload: Any, depth: int) -> Any:
        raise RemoteProtocolError(ErrorCode.MALFORMED_PAYLOAD, "no")

    monkeypatch.setattr(fuzz, "decode_sparse", refuse)
    with pytest.raises(BrokenPromise, match="disagree"):
        one_input(b"\x80\x00" + encode_payload({"id": 1}))


def test_a_result_read_into_its_buffer_keeps_every_promise() -> None:
    guest_running = next(i for i, s in enumerate(SCENARIOS)
                         if s.receiver.value == "guest" and s.state.value == "RUNNING")
    large = encode_payload(Result(id=1, value="y" * 100_000).to_wire())
    one_input(bytes([guest_running, 4 | 15 << 4]) + encode_frame(FrameType.RESULT, large))


def test_the_seeds_are_written_where_asked(tmp_path: Path) -> None:
    subprocess.run([sys.executable, "-m", "tether.codec.fuzz", "--write-seeds", str(tmp_path)],
                   check=True)
    written = sorted(tmp_path.iterdir())
    assert [path.read_bytes() for path in written] == list(fuzz.seeds())


@pytest.mark.skipif(importlib.util.find_spec("atheris") is None,
                    reason="Atheris is not installed (pip install 'tether[fuzz]')")
def test_atheris_runs_the_target(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    subprocess.run([sys.executable, "-m", "tether.codec.fuzz", "--write-seeds", str(corpus)],
                   check=True)
    done = subprocess.run([sys.executable, "-m", "tether.codec.fuzz", str(corpus), "-runs=300",
                           "-timeout=20"], check=False, cwd=tmp_path, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]  # 0: the runs ended with no finding
