"""The sans-IO connection: paired endpoints, the state table, call ids."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tether.codec import (
    CONNECTION_CLOSED,
    NEED_DATA,
    TRANSITIONS,
    Binding,
    Call,
    CallError,
    Cancel,
    Connection,
    Done,
    Error,
    ErrorCode,
    Event,
    FrameType,
    Hello,
    LocalProtocolError,
    Message,
    Output,
    ProgramError,
    ProtocolError,
    RemoteProtocolError,
    Result,
    Role,
    Run,
    RunLimits,
    State,
    Stream,
    encode_frame,
    encode_payload,
)

LIMITS = RunLimits(output_bytes=1 << 20, value_bytes=1 << 20, frame_bytes=2 << 20,
                   max_depth=64, max_calls_in_flight=8)

SAMPLES: dict[FrameType, Message] = {
    FrameType.HELLO: Hello(implementation="test", languages=("python",)),
    FrameType.RUN: Run(source="return 1", language="python", bindings=(Binding("f"),),
                       limits=LIMITS),
    FrameType.CALL: Call(id=1, name="f"),
    FrameType.RESULT: Result(id=1, value=2),
    FrameType.OUTPUT: Output(stream=Stream.STDOUT, text="hi\n"),
    FrameType.DONE: Done(value=None),
    FrameType.CANCEL: Cancel(reason="test"),
    FrameType.ERROR: Error(code=ErrorCode.INTERNAL_ERROR, message="test"),
}


class Pair:
    """A host and a guest wired back to back, as in h11's ConnectionPair."""

    def __init__(self) -> None:
        self.host = Connection(Role.HOST)
        self.guest = Connection(Role.GUEST)

    def send(self, sender: Role, message: Message) -> Event:
        src, dst = (self.host, self.guest) if sender is Role.HOST else (self.guest, self.host)
        dst.receive_data(src.send(message))
        event = dst.next_event()
        assert event is not NEED_DATA
        return event


def _force(conn: Connection, state: State, in_flight: int | None = None) -> None:
    conn.state = state
    if in_flight is not None:
        conn._in_flight.add(in_flight)
        conn._last_call_id = in_flight


def test_a_whole_run() -> None:
    pair = Pair()
    assert pair.send(Role.GUEST, SAMPLES[FrameType.HELLO]) == SAMPLES[FrameType.HELLO]
    pair.send(Role.HOST, SAMPLES[FrameType.RUN])
    pair.send(Role.GUEST, Output(Stream.STDOUT, "thinking\n"))
    pair.send(Role.GUEST, Call(id=1, name="f", args=[1]))
    pair.send(Role.GUEST, Call(id=2, name="f", args=[2]))
    assert pair.host.calls_in_flight == {1, 2}
    pair.send(Role.HOST, Result(id=2, value=4))
    pair.send(Role.HOST, Result(id=1, error=CallError(ErrorCode.BINDING_ERROR, "E", "m")))
    assert pair.send(Role.GUEST, Done(value=[1, 2])) == Done(value=[1, 2])
    assert pair.host.state is pair.guest.state is State.FINISHED
    pair.guest.receive_eof()
    assert pair.guest.next_event() is CONNECTION_CLOSED


@pytest.mark.parametrize("state", list(State))
@pytest.mark.parametrize("sender", list(Role))
@pytest.mark.parametrize("frame_type", list(FrameType))
def test_every_state_sender_and_type(state: State, sender: Role, frame_type: FrameType) -> None:
    """R-STATE-1: a listed triple transitions, every other one is refused, on
    both the sending and the receiving side."""
    message = SAMPLES[frame_type]
    receiver_role = Role.GUEST if sender is Role.HOST else Role.HOST
    src, dst = Connection(sender), Connection(receiver_role)
    for conn in (src, dst):
        _force(conn, state, in_flight=1 if frame_type is FrameType.RESULT else None)
    expected = TRANSITIONS.get((state, sender, frame_type))
    legal_sender = message.SENDER in (None, sender)
    if expected is None or not legal_sender:
        with pytest.raises(LocalProtocolError):
            src.send(message)
        dst.receive_data(encode_frame(message.TYPE, _payload(message)))
        if state is State.CLOSED:  # a closed connection reads nothing more
            assert dst.next_event() is CONNECTION_CLOSED
            return
        with pytest.raises(RemoteProtocolError) as info:
            dst.next_event()
        assert info.value.code is ErrorCode.UNEXPECTED_MESSAGE
        return
    data = src.send(message)
    assert src.state is expected
    dst.receive_data(data)
    assert dst.next_event() == message
    assert dst.state is expected


def _payload(message: Message) -> bytes:
    return encode_payload(message.to_wire())


def test_call_ids_must_increase() -> None:
    host = Connection(Role.HOST)
    _force(host, State.RUNNING)
    guest = Connection(Role.GUEST)
    _force(guest, State.RUNNING)
    host.receive_data(guest.send(Call(id=5, name="f")))
    host.next_event()
    host.receive_data(encode_frame(FrameType.CALL, _payload(Call(id=5, name="f"))))
    with pytest.raises(RemoteProtocolError) as info:
        host.next_event()
    assert info.value.code is ErrorCode.INVALID_CALL_ID


def test_result_for_unknown_call_is_refused() -> None:
    guest = Connection(Role.GUEST)
    _force(guest, State.RUNNING)
    guest.receive_data(encode_frame(FrameType.RESULT, _payload(Result(id=3, value=1))))
    with pytest.raises(RemoteProtocolError) as info:
        guest.next_event()
    assert info.value.code is ErrorCode.INVALID_CALL_ID


def test_late_result_after_done_is_accepted() -> None:
    """R-STATE-4."""
    pair = Pair()
    pair.send(Role.GUEST, SAMPLES[FrameType.HELLO])
    pair.send(Role.HOST, SAMPLES[FrameType.RUN])
    pair.send(Role.GUEST, Call(id=1, name="f"))
    result = pair.host.send(Result(id=1, value=1))  # crosses DONE on the wire
    pair.host.receive_data(pair.guest.send(Done(value=0)))
    assert pair.host.next_event() == Done(value=0)
    pair.guest.receive_data(result)
    assert pair.guest.next_event() == Result(id=1, value=1)


def test_a_failed_connection_stays_failed_and_may_only_send_error() -> None:
    host = Connection(Role.HOST)
    host.receive_data(b"garbage!!!")
    with pytest.raises(RemoteProtocolError) as first:
        host.next_event()
    with pytest.raises(RemoteProtocolError) as second:
        host.next_event()
    assert first.value is second.value
    with pytest.raises(LocalProtocolError):
        host.send(SAMPLES[FrameType.RUN])
    host.send(Error(first.value.code, first.value.message))
    assert host.state is State.CLOSED


@pytest.mark.parametrize(("protocol", "code"), [
    (2, ErrorCode.UNSUPPORTED_VERSION),
    # Not a uint at all (R-ORDER-1: the CDDL rule is checked before the version).
    (-1, ErrorCode.INVALID_MESSAGE),
    (2**64, ErrorCode.INVALID_MESSAGE),  # a bignum: CDDL's uint is major type 0
])
def test_wrong_protocol_version_in_hello(protocol: int, code: ErrorCode) -> None:
    host = Connection(Role.HOST)
    host.receive_data(encode_frame(FrameType.HELLO, _payload(
        Hello(implementation="x", languages=("python",), protocol=protocol))))
    with pytest.raises(RemoteProtocolError) as info:
        host.next_event()
    assert info.value.code is code


def test_run_limits_replace_the_defaults() -> None:
    pair = Pair()
    pair.send(Role.GUEST, SAMPLES[FrameType.HELLO])
    small = RunLimits(output_bytes=1, value_bytes=100, frame_bytes=65536, max_depth=16,
                      max_calls_in_flight=1)
    pair.send(Role.HOST, Run(source="", language="python", bindings=(), limits=small))
    assert pair.guest._decoder.max_frame_bytes == pair.host._decoder.max_frame_bytes == 65536
    assert pair.guest.max_depth == 16


def test_buffered_counts_what_is_not_yet_taken_off_the_stream() -> None:
    host = Connection(Role.HOST)
    hello = encode_frame(FrameType.HELLO, encode_payload(SAMPLES[FrameType.HELLO].to_wire()))
    extension = encode_frame(0x80, b"\x00" * 5)
    host.receive_data(extension + hello[:4])
    assert host.buffered == len(extension) + 4
    assert host.ready_payload_size() is None  # the extension frame is discarded
    assert host.buffered == 4
    host.receive_data(hello[4:])
    assert host.next_event() == SAMPLES[FrameType.HELLO]
    assert host.buffered == 0


def test_eof_inside_a_frame_is_truncated() -> None:
    host = Connection(Role.HOST)
    host.receive_data(encode_frame(FrameType.HELLO, b"\xa0")[:-1])
    host.receive_eof()
    with pytest.raises(RemoteProtocolError) as info:
        host.next_event()
    assert info.value.code is ErrorCode.TRUNCATED


@given(st.binary(max_size=300), st.sampled_from(list(Role)), st.sampled_from(list(State)))
def test_arbitrary_bytes_raise_only_protocol_errors(junk: bytes, role: Role, state: State) -> None:
    """The fuzz invariant: anything a peer sends parses or raises ProtocolError."""
    conn = Connection(role)
    _force(conn, state)
    conn.receive_data(junk)
    conn.receive_eof()
    events: list[Any] = []
    try:
        while (event := conn.next_event()) is not CONNECTION_CLOSED:
            events.append(event)
    except ProtocolError:
        pass


@given(st.data())
def test_valid_frames_with_one_flipped_byte_never_crash(data: st.DataObject) -> None:
    message = data.draw(st.sampled_from(list(SAMPLES.values())))
    raw = bytearray(encode_frame(message.TYPE, _payload(message)))
    index = data.draw(st.integers(0, len(raw) - 1))
    raw[index] ^= data.draw(st.integers(1, 255))
    conn = Connection(Role.HOST if message.SENDER is Role.GUEST else Role.GUEST)
    _force(conn, State.RUNNING, in_flight=1)
    conn.receive_data(bytes(raw))
    conn.receive_eof()
    try:
        while conn.next_event() is not CONNECTION_CLOSED:
            pass
    except ProtocolError:
        pass


@given(st.text())
def test_send_parts_is_send_with_the_header_apart(text: str) -> None:
    message = Hello(implementation=text, languages=("python",))
    header, payload = Connection(Role.GUEST).send_parts(message)
    assert header + payload == Connection(Role.GUEST).send(message)
    assert header + payload == encode_frame(FrameType.HELLO, payload)
    assert len(header) == 10


@pytest.mark.parametrize(("run_variables", "done", "ok"), [
    (None, Done(value=1), True),
    ({}, Done(value=1, variables={"x": 1}, dropped={}), True),
    ({"x": 1}, Done(error=ProgramError("Cancelled", "stopped")), True),  # R-VARS-3's exception
    (None, Done(value=1, variables={}, dropped={}), False),
    ({}, Done(value=1), False),
    ({}, Done(error=ProgramError("KeyError", "'x'")), False),
])
def test_done_has_variables_exactly_when_run_had_them(
        run_variables: dict[str, Any] | None, done: Done, ok: bool) -> None:
    pair = Pair()
    pair.send(Role.GUEST, SAMPLES[FrameType.HELLO])
    limits = LIMITS if run_variables is None else dataclasses.replace(LIMITS, variables_bytes=64)
    pair.send(Role.HOST, Run(source="", language="python", bindings=(), limits=limits,
                             variables=run_variables))
    if ok:
        assert pair.send(Role.GUEST, done) == done
        return
    with pytest.raises(LocalProtocolError) as sent:
        pair.guest.send(done)
    assert sent.value.code is ErrorCode.INVALID_MESSAGE
    pair.guest.state = State.RUNNING  # a guest that sends it anyway: the host refuses it
    pair.guest._variables = not pair.guest._variables
    pair.host.receive_data(pair.guest.send(done))
    with pytest.raises(RemoteProtocolError) as received:
        pair.host.next_event()
    assert received.value.code is ErrorCode.INVALID_MESSAGE


def test_only_done_may_hold_the_items_of_the_variables_too() -> None:
    """R-CBOR-11: with variables in RUN, DONE's bound adds variables_bytes;
    every other frame keeps value_bytes' (1024 items + 64 here)."""
    pair = Pair()
    pair.send(Role.GUEST, SAMPLES[FrameType.HELLO])
    limits = dataclasses.replace(LIMITS, value_bytes=1024, variables_bytes=1 << 20)
    pair.send(Role.HOST, Run(source="", language="python", bindings=(Binding("f"),),
                             limits=limits, variables={}))
    pair.send(Role.GUEST, Call(id=1, name="f"))
    many = [0] * 1100
    assert pair.send(Role.GUEST, Done(value=1, variables={"x": many}, dropped={})) == Done(
        value=1, variables={"x": many}, dropped={})
    pair.guest.receive_data(encode_frame(FrameType.RESULT, encode_payload(
        {"id": 1, "value": many})))
    with pytest.raises(RemoteProtocolError) as info:
        pair.guest.next_event()
    assert info.value.code is ErrorCode.MALFORMED_PAYLOAD
