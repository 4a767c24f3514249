"""A fuzz target for the codec: whatever a peer sends, checked against what
the codec promises about it.

:func:`one_input` takes any bytes. The first two choose a setting (which
side receives, the state its connection has reached through real frames
from a real peer, the run's limits, how the stream is cut, whether the sizes
at which the codec changes path are lowered); the rest is what the peer
sends. It returns when every promise held, and raises otherwise:
:class:`BrokenPromise` for a promise broken, any other exception for a crash.

The promises, for a stream:

- every frame is received as a message, or the connection raises a
  :class:`RemoteProtocolError` with a connection error code (R-CBOR-9,
  R-ERR-1), and raises it again when asked again;
- how the bytes are cut into reads, and whether large payloads are read
  straight into their buffer, changes nothing;
- decoding in steps changes nothing (:func:`decode_payload_in_steps`);
- a payload accepted is the preferred serialization of what it decoded to
  (R-CBOR-2), and a message accepted encodes to a frame that decodes to it.

For a payload alone (the first byte's top bit set), the decoders that
choose by a payload's shape (dense, sparse, in steps) give the same value
or the same error code.

Run it with Atheris (``pip install tether[fuzz]``; docs/fuzzing.md)::

    python -m tether.codec.fuzz --write-seeds corpus/
    python -m tether.codec.fuzz corpus/ -timeout=5 -rss_limit_mb=2048
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import cbor2

from . import frames, values
from .connection import Connection, ConnectionClosed
from .errors import ErrorCode, ProtocolError, RemoteProtocolError
from .frames import (
    DEFAULT_MAX_FRAME_BYTES,
    EXTENSION_TYPES_START,
    NEED_DATA,
    FrameDecoder,
    FrameType,
    encode_frame,
)
from .messages import (
    Binding,
    Call,
    CallError,
    Cancel,
    Done,
    Error,
    Hello,
    Message,
    Output,
    ProgramError,
    Result,
    Role,
    Run,
    RunLimits,
    Stream,
)
from .state import State
from .values import decode_dense, decode_payload_in_steps, decode_sparse, encode_payload


class BrokenPromise(AssertionError):
    """The codec broke one of the promises this module checks."""


#: Run limits a setting may choose: the smallest the spec allows, and roomy.
LIMITS: Final = (
    RunLimits(output_bytes=1024, value_bytes=1024, frame_bytes=65536, max_depth=16,
              max_calls_in_flight=2),
    RunLimits(output_bytes=1 << 20, value_bytes=1 << 20, frame_bytes=1 << 21, max_depth=64,
              max_calls_in_flight=64),
)
#: How far a stream may be read in steps (Connection's ``step_bytes``).
STEP_BYTES: Final = 64


@dataclass(frozen=True)
class Scenario:
    """Which side receives the stream, after which frames of a real run."""

    receiver: Role
    state: State
    #: The frames before the stream, each sent by (role, message).
    prefix: Callable[[RunLimits, bool], list[tuple[Role, Message]]]


def _hello() -> list[tuple[Role, Message]]:
    return [(Role.GUEST, Hello(implementation="fuzz", languages=("python",)))]


def _run(limits: RunLimits, variables: bool) -> list[tuple[Role, Message]]:
    if variables:
        limits = dataclasses.replace(limits, variables_bytes=limits.value_bytes)
    return [*_hello(), (Role.HOST, Run(source="await f(1)", language="python",
                                       bindings=(Binding("f"),), limits=limits,
                                       variables={"x": 1} if variables else None))]


def _calls(limits: RunLimits, variables: bool) -> list[tuple[Role, Message]]:
    return [*_run(limits, variables), (Role.GUEST, Call(id=1, name="f", args=[1])),
            (Role.GUEST, Call(id=2, name="f", kwargs={"k": "v"}))]


def _done(variables: bool) -> Done:
    return Done(value=1, variables={} if variables else None, dropped={} if variables else None)


SCENARIOS: Final = (
    Scenario(Role.HOST, State.AWAIT_HELLO, lambda limits, variables: []),
    Scenario(Role.HOST, State.RUNNING, _run),
    Scenario(Role.HOST, State.RUNNING, _calls),
    Scenario(Role.HOST, State.CANCELLING,
             lambda limits, variables: [*_calls(limits, variables), (Role.HOST, Cancel("stop"))]),
    Scenario(Role.HOST, State.FINISHED,
             lambda limits, variables: [*_run(limits, variables), (Role.GUEST, _done(variables))]),
    Scenario(Role.GUEST, State.AWAIT_RUN, lambda limits, variables: _hello()),
    Scenario(Role.GUEST, State.RUNNING, _calls),
    Scenario(Role.GUEST, State.CANCELLING,
             lambda limits, variables: [*_calls(limits, variables), (Role.HOST, Cancel("stop"))]),
    Scenario(Role.GUEST, State.FINISHED,
             lambda limits, variables: [*_calls(limits, variables),
                                        (Role.GUEST, _done(variables))]),
)


@dataclass(frozen=True)
class Setting:
    """What the first two bytes of an input choose."""

    scenario: Scenario
    limits: RunLimits
    variables: bool
    reserve_payloads: bool  # as a guest receives from its host
    short_paths: bool  # see short_paths()
    cut: int  # bytes per read; 0: all at once

    @classmethod
    def from_bytes(cls, first: int, second: int) -> Setting:
        scenario = SCENARIOS[(first & 0x7F) % len(SCENARIOS)]
        return cls(scenario=scenario, limits=LIMITS[second & 1], variables=bool(second & 2),
                   reserve_payloads=scenario.receiver is Role.GUEST and bool(second & 4),
                   short_paths=bool(second & 8), cut=second >> 4)

    def connect(self, step_bytes: int | None = None) -> Connection:
        """The receiving side's connection, in the scenario's state."""
        conn = Connection(self.scenario.receiver, step_bytes=step_bytes,
                          reserve_payloads=self.reserve_payloads)
        for message, sent in _prefix(self.scenario, self.limits, self.variables):
            if sent is None:
                conn.send(message)
                continue
            conn.receive_data(sent)
            if conn.next_event() != message:
                raise BrokenPromise(f"the scenario's own {message!r} did not arrive as sent")
        if conn.state is not self.scenario.state:
            raise BrokenPromise(f"the scenario reached {conn.state}, not {self.scenario.state}")
        return conn


@functools.cache
def _prefix(scenario: Scenario, limits: RunLimits, variables: bool
            ) -> tuple[tuple[Message, bytes | None], ...]:
    """The scenario's frames before the stream, each with what a real peer
    sent for it (None: the receiver sends it): made once per setting, not
    once per input."""
    receiver = scenario.receiver
    mirror = Connection(receiver)
    peer = Connection(Role.GUEST if receiver is Role.HOST else Role.HOST)
    sent: list[tuple[Message, bytes | None]] = []
    for sender, message in scenario.prefix(limits, variables):
        source, target = (mirror, peer) if sender is receiver else (peer, mirror)
        data = source.send(message)
        target.receive_data(data)
        target.next_event()
        sent.append((message, None if sender is receiver else data))
    return tuple(sent)


#: What receiving a stream gave: each message's encoding, then the error
#: code (None: the stream ended cleanly).
Outcome = tuple[tuple[bytes, ...], ErrorCode | None]


def receive(conn: Connection, stream: bytes, cut: int = 0, *,
            into_view: bool = False) -> tuple[Outcome, list[Message]]:
    """Feed ``stream`` to ``conn`` (``cut`` bytes at a time; ``into_view``:
    large payloads written into :meth:`Connection.payload_view` as a guest
    does), then its end; every event is taken as soon as it can be."""
    messages: list[Message] = []
    pos, step = 0, cut or max(len(stream), 1)
    try:
        while pos < len(stream):
            view = conn.payload_view() if into_view else None
            if view is not None:
                with view:
                    size = min(len(view), step, len(stream) - pos)
                    view[:size] = stream[pos:pos + size]
                conn.received(size)
            else:
                size = min(step, len(stream) - pos)
                conn.receive_data(stream[pos:pos + size])
            pos += size
            _drain(conn, messages)
        conn.receive_eof()
        _drain(conn, messages)
    except RemoteProtocolError as exc:
        _check_final(conn, exc)
        return (_encodings(messages), exc.code), messages
    return (_encodings(messages), None), messages


def _drain(conn: Connection, messages: list[Message]) -> None:
    while (event := conn.next_event()) is not NEED_DATA:
        if isinstance(event, ConnectionClosed):
            return
        messages.append(event)


def _check_final(conn: Connection, exc: RemoteProtocolError) -> None:
    if not isinstance(exc.code, ErrorCode) or not exc.code.fatal:
        raise BrokenPromise(f"a connection failed with {exc.code!r}, not a connection error")
    try:
        conn.next_event()
    except RemoteProtocolError as again:
        if again.code is not exc.code:
            raise BrokenPromise(f"{exc.code.name} raised, then {again.code.name}") from None
    else:
        raise BrokenPromise(f"{exc.code.name} raised once, then the connection went on")


def _encodings(messages: list[Message]) -> tuple[bytes, ...]:
    return tuple(encode_frame(m.TYPE, encode_payload(m.to_wire())) for m in messages)


def check_stream(setting: Setting, stream: bytes) -> None:
    """The promises for a stream (this module's docstring)."""
    whole, messages = receive(setting.connect(), stream)
    cut, _ = receive(setting.connect(), stream, setting.cut, into_view=True)
    if cut != whole:
        raise BrokenPromise(f"read {setting.cut or 'all'} bytes at a time, the stream gave "
                            f"{_show(cut)}; read at once, {_show(whole)}")
    stepped, _ = receive(setting.connect(step_bytes=STEP_BYTES), stream)
    if stepped != whole:
        raise BrokenPromise(f"decoded in steps, the stream gave {_show(stepped)}; "
                            f"at once, {_show(whole)}")
    _check_payloads(setting, stream, messages)
    again, _ = receive(setting.connect(), b"".join(whole[0]))
    if again != (whole[0], None):
        raise BrokenPromise(f"the {len(whole[0])} messages accepted, sent again as encoded, "
                            f"gave {_show(again)}")


def _check_payloads(setting: Setting, stream: bytes, messages: list[Message]) -> None:
    """Each core frame that became a message: its payload is the preferred
    serialization of what it decodes to (R-CBOR-2)."""
    prefix = _prefix(setting.scenario, setting.limits, setting.variables)
    ran = any(isinstance(message, Run) for message, _ in prefix)
    decoder = FrameDecoder(setting.limits.frame_bytes if ran else DEFAULT_MAX_FRAME_BYTES)
    decoder.feed(stream)
    for message in messages:
        while (frame := decoder.next_frame()) is not NEED_DATA and \
                frame.type >= EXTENSION_TYPES_START:
            pass
        if frame is NEED_DATA or frame.type != message.TYPE:
            raise BrokenPromise(f"{message!r} came from no frame of its type")
        preferred = encode_payload(cbor2.loads(frame.payload))
        if preferred != frame.payload:
            raise BrokenPromise(f"{bytes(frame.payload).hex()} was accepted, but its value's "
                                f"preferred serialization is {preferred.hex()}")
        if isinstance(message, Run):
            decoder.max_frame_bytes = message.limits.frame_bytes


def _show(outcome: Outcome) -> str:
    messages, code = outcome
    return f"{len(messages)} messages and {code.name if code else 'a clean end'}"


def check_payload(payload: bytes, max_depth: int) -> None:
    """The payload decoders agree: the same value's encoding, or the same code."""
    outcomes: dict[str, tuple[str, bytes | ErrorCode]] = {}
    for name, decode in (("dense", decode_dense), ("sparse", decode_sparse),
                         ("in steps", lambda p, d: decode_payload_in_steps(p, d, step_bytes=8))):
        try:
            outcomes[name] = ("value", encode_payload(decode(payload, max_depth)))
        except ProtocolError as exc:
            outcomes[name] = ("error", exc.code)
    if len(set(outcomes.values())) > 1:
        raise BrokenPromise(f"the decoders disagree on {payload.hex()}: {outcomes}")


#: Where the codec takes another path to the same result from a size on, and
#: the size :func:`short_paths` puts it at.
PATH_SIZES: Final = ((frames, "HAND_OVER_BYTES", 80), (values, "SPARSE_MIN_BYTES", 40),
                     (values, "SPARSE_BYTES_PER_ITEM", 8), (values, "LEVELS_MIN_BYTES", 40))


@contextlib.contextmanager
def short_paths(enabled: bool = True) -> Iterator[None]:
    """The sizes at which the codec changes path lowered, so that a short
    input reaches every path: which path is taken changes nothing else."""
    saved = [getattr(module, name) for module, name, _ in PATH_SIZES]
    try:
        if enabled:
            for module, name, size in PATH_SIZES:
                setattr(module, name, size)
        yield
    finally:
        for (module, name, _), size in zip(PATH_SIZES, saved, strict=True):
            setattr(module, name, size)


def one_input(data: bytes) -> None:
    """The fuzz target (this module's docstring)."""
    if len(data) < 2:
        return
    with short_paths(bool(data[1] & 8)):
        if data[0] & 0x80:
            check_payload(data[2:], LIMITS[data[1] & 1].max_depth)
        else:
            check_stream(Setting.from_bytes(data[0], data[1]), data[2:])


def seeds() -> Iterator[bytes]:
    """Inputs to start a fuzzer from: every scenario, followed by frames its
    receiver accepts, and each of those frames' payloads alone."""
    to_host: list[Message] = [
        Output(Stream.STDOUT, "hi\n"), Call(id=3, name="f", args=[1.5, None, [True]],
                                            kwargs={"k": {"a": b"\x00"}}),
        Done(value={"x": [1, -(2**70), 0.1, float("inf")]}),
        Done(error=ProgramError("ValueError", "bad", "Traceback", line=2)),
        Error(ErrorCode.INTERNAL_ERROR, "gone")]
    to_guest: list[Message] = [
        Result(id=1, value="x" * 100), Result(id=2, error=CallError(
            ErrorCode.BINDING_ERROR, "KeyError", "'k'")), Cancel("stop"),
        Error(ErrorCode.INTERNAL_ERROR, "gone")]
    for index, scenario in enumerate(SCENARIOS):
        if scenario.state is State.AWAIT_HELLO:
            follow: list[Message] = [Hello(implementation="x", languages=("python",))]
        elif scenario.state is State.AWAIT_RUN:
            follow = [_run(LIMITS[0], False)[-1][1]]
        else:
            follow = to_host if scenario.receiver is Role.HOST else to_guest
        for message in follow:
            payload = encode_payload(message.to_wire())
            yield bytes([index, 0]) + encode_frame(message.TYPE, payload)
            yield bytes([index, 8 | 3 << 4]) + encode_frame(message.TYPE, payload)
            yield bytes([0x80, 1]) + payload
            yield bytes([0x80, 8]) + payload
        yield bytes([index, 4 | 1 << 4]) + b"".join(
            encode_frame(m.TYPE, encode_payload(m.to_wire())) for m in follow)
    big = encode_payload({"value": "y" * 70000})
    yield bytes([0x80, 1]) + big
    yield bytes([6, 1 | 4 | 15 << 4]) + encode_frame(
        FrameType.RESULT, encode_payload({"id": 1, "value": "y" * 70000}))


def main(argv: list[str]) -> None:
    if argv[1:2] == ["--write-seeds"]:
        folder = Path(argv[2])
        folder.mkdir(parents=True, exist_ok=True)
        for index, seed in enumerate(seeds()):
            (folder / f"seed-{index:03d}").write_bytes(seed)
        return
    try:
        import atheris
    except ImportError:
        sys.exit("python -m tether.codec.fuzz needs Atheris: pip install 'tether[fuzz]'")
    atheris.instrument_all()
    atheris.Setup(argv, one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main(sys.argv)
