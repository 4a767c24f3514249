"""The sans-IO connection (spec §8): bytes in, messages out; messages in,
bytes out. No sockets, no asyncio, no clocks::

    conn = Connection(Role.HOST)
    conn.receive_data(data)
    while (event := conn.next_event()) is not NEED_DATA:
        ...  # a Message, or ConnectionClosed
    sock.send(conn.send(Result(id=1, value=3)))

Every frame received is checked against the frame rules, the strict CBOR
rules, the message schema and the state table, in that order. The first
violation raises :class:`RemoteProtocolError`; from then on the connection
only lets you :meth:`send` an :class:`Error` frame and raises the same
error again on :meth:`next_event`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from .errors import ErrorCode, LocalProtocolError, ProtocolError, RemoteProtocolError
from .frames import (
    DEFAULT_MAX_FRAME_BYTES,
    EXTENSION_TYPES_START,
    NEED_DATA,
    FrameDecoder,
    FrameType,
    NeedData,
    frame_header,
)
from .messages import (
    MESSAGE_TYPES,
    PROTOCOL_VERSION,
    Call,
    Done,
    Error,
    Hello,
    Message,
    Result,
    Role,
    Run,
    envelope_depth,
)
from .state import TRANSITIONS, State
from .values import (
    DEFAULT_MAX_DEPTH,
    DEFAULT_VALUE_BYTES,
    ENVELOPE_ITEMS,
    Payload,
    decode_payload,
    decode_payload_in_steps,
    encode_payload,
    payload_pieces,
    payload_size,
    value_items,
)


@dataclass(frozen=True, slots=True)
class ConnectionClosed:
    """The peer's byte stream ended at a frame boundary (R-TRANS-3)."""


CONNECTION_CLOSED: Final = ConnectionClosed()

Event = Message | ConnectionClosed


class Connection:
    """One end of a tether connection, playing ``role``.

    ``max_frame_bytes`` is the ceiling for frames *received* (checked at the
    header); ``max_depth`` bounds the nesting of values received and
    ``max_items`` the data items of a payload (R-CBOR-11; default: what the
    default ``value_bytes`` allows). All three are replaced by the RUN's
    limits once RUN has crossed (R-LIMIT-2); a DONE's item bound then adds
    RUN's ``variables_bytes``. ``step_bytes``: payloads
    larger than this are decoded in steps of at most this many bytes, with
    ``between_steps`` called between them (:func:`decode_payload_in_steps`;
    None: at once). ``reserve_payloads``: a large payload can be received
    straight into its frame's buffer (:meth:`payload_view`; see
    :class:`~.frames.FrameDecoder`), for a peer whose lengths are trusted.
    """

    def __init__(
        self,
        role: Role,
        *,
        max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES,
        max_depth: int = DEFAULT_MAX_DEPTH,
        max_items: int = value_items(DEFAULT_VALUE_BYTES) + ENVELOPE_ITEMS,
        step_bytes: int | None = None,
        between_steps: Callable[[], None] | None = None,
        reserve_payloads: bool = False,
    ) -> None:
        self.role = role
        self.peer = Role.GUEST if role is Role.HOST else Role.HOST
        self.state = State.AWAIT_HELLO
        self.max_depth = max_depth
        self.max_items = max_items
        self._done_items = max_items  # DONE's bound: with RUN's variables_bytes
        self.step_bytes = step_bytes
        self.between_steps = between_steps
        self._decoder = FrameDecoder(max_frame_bytes, reserve_payloads=reserve_payloads)
        self._eof = False
        self._peer_done = False  # EOF seen at a frame boundary
        self._failure: RemoteProtocolError | None = None
        self._last_call_id = 0
        self._in_flight: set[int] = set()
        self._variables = False  # RUN carried variables: DONE must too (R-VARS-3)
        #: Payload size of the last frame received (it bounds any value in it).
        self.last_payload_size = 0

    @property
    def calls_in_flight(self) -> frozenset[int]:
        """Ids of CALLs sent and not yet answered by a RESULT."""
        return frozenset(self._in_flight)

    # -- receiving ---------------------------------------------------------

    @property
    def buffered(self) -> int:
        """Bytes received and not yet taken off the stream as frames
        (extension frames discarded count as taken)."""
        return self._decoder.buffered

    def receive_data(self, data: bytes | bytearray | memoryview) -> None:
        if self._eof:
            raise LocalProtocolError(ErrorCode.INTERNAL_ERROR, "data after EOF")
        self._decoder.feed(data)

    def payload_view(self) -> memoryview | None:
        """Where the rest of a large frame may be received, or None (then
        :meth:`receive_data`); after writing to it, call :meth:`received`."""
        return self._decoder.payload_view()

    def received(self, size: int) -> None:
        """``size`` bytes were received at the start of :meth:`payload_view`."""
        self._decoder.received(size)

    def receive_eof(self) -> None:
        self._eof = True

    def ready_payload_size(self) -> int | None:
        """The payload length of the next frame if it has arrived whole (so
        that a caller can choose where to pay for decoding it), else None.
        Extension frames before it are discarded here, as :meth:`next_event`
        would (R-FRAME-7)."""
        if self._failure is not None:
            raise self._failure
        try:
            while (ready := self._decoder.ready_header()) is not None:
                frame_type, length = ready
                if frame_type < EXTENSION_TYPES_START:
                    return length
                self._decoder.next_frame()
            return None
        except RemoteProtocolError as exc:
            self._failure = exc
            raise

    def next_event(self) -> Event | NeedData:
        if self._failure is not None:
            raise self._failure
        if self.state is State.CLOSED or self._peer_done:
            return CONNECTION_CLOSED
        try:
            return self._next_event()
        except RemoteProtocolError as exc:
            self._failure = exc
            raise

    def _next_event(self) -> Event | NeedData:
        while True:
            frame = self._decoder.next_frame()
            if frame is NEED_DATA:
                if not self._eof:
                    return NEED_DATA
                self._decoder.check_eof()
                # Only the peer's direction ended: this side may still send
                # what the table allows, e.g. a guest's DONE (R-TRANS-6).
                self._peer_done = True
                return CONNECTION_CLOSED
            if frame.type >= EXTENSION_TYPES_START:
                continue  # no extension negotiated: discard (R-FRAME-7)
            frame_type = FrameType(frame.type)
            self.last_payload_size = len(frame.payload)
            depth = self.max_depth + envelope_depth(frame_type)
            items = self._done_items if frame_type is FrameType.DONE else self.max_items
            if self.step_bytes is None:
                envelope = decode_payload(frame.payload, depth, items)
            else:
                envelope = decode_payload_in_steps(frame.payload, depth, items,
                                                   step_bytes=self.step_bytes,
                                                   between_steps=self.between_steps)
            message = MESSAGE_TYPES[frame_type](envelope)
            self._transition(message, self.peer, RemoteProtocolError)
            return message

    # -- sending -----------------------------------------------------------

    def send(self, message: Message, payload: Payload | None = None) -> bytes:
        """Check ``message`` against the state table and encode it.

        ``payload``, when given, is ``encode_payload(message.to_wire())``
        (or its parts) already computed by the caller (to size a large value
        once)."""
        header, payload = self.send_parts(message, payload)
        return b"".join((header, *payload_pieces(payload)))

    def send_parts(self, message: Message, payload: Payload | None = None
                   ) -> tuple[bytes, Payload]:
        """As :meth:`send`, but the frame's header and payload apart, to be
        written one after the other (a large payload is then not copied)."""
        if self._failure is not None and not isinstance(message, Error):
            raise LocalProtocolError(
                ErrorCode.INTERNAL_ERROR, "connection failed; only ERROR may be sent"
            )
        self._transition(message, self.role, LocalProtocolError)
        if payload is None:
            payload = encode_payload(message.to_wire())
        return frame_header(message.TYPE, payload_size(payload)), payload

    def _transition(
        self, message: Message, sender: Role, error: type[ProtocolError]
    ) -> None:
        key = (self.state, sender, message.TYPE)
        target = TRANSITIONS.get(key)
        if target is None:
            raise error(
                ErrorCode.UNEXPECTED_MESSAGE,
                f"{message.TYPE.name} from the {sender.value} in state {self.state.value}",
            )
        if isinstance(message, Hello) and message.protocol != PROTOCOL_VERSION:
            raise error(
                ErrorCode.UNSUPPORTED_VERSION,
                f"HELLO speaks protocol {message.protocol}, this side {PROTOCOL_VERSION}",
            )
        if isinstance(message, Run):
            self._decoder.max_frame_bytes = message.limits.frame_bytes
            self.max_depth = message.limits.max_depth
            self.max_items = value_items(message.limits.value_bytes) + ENVELOPE_ITEMS
            # DONE alone may carry the variables beside the value (R-CBOR-11, R-VARS-5).
            self._done_items = value_items(message.limits.value_bytes
                                           + (message.limits.variables_bytes or 0)) + ENVELOPE_ITEMS
            self._variables = message.variables is not None
        elif isinstance(message, Done):
            cancelled = message.error is not None and message.error.type == "Cancelled"
            if (message.variables is not None) != self._variables and not (
                    cancelled and message.variables is None):  # R-VARS-3
                raise error(ErrorCode.INVALID_MESSAGE, "DONE has variables exactly when RUN "
                                                       "had them (but for a cancelled run)")
        elif isinstance(message, Call):
            if message.id <= self._last_call_id:
                raise error(
                    ErrorCode.INVALID_CALL_ID,
                    f"CALL id {message.id} is not above the previous {self._last_call_id}",
                )
            self._last_call_id = message.id
            self._in_flight.add(message.id)
        elif isinstance(message, Result):
            if message.id not in self._in_flight:
                raise error(ErrorCode.INVALID_CALL_ID, f"RESULT for unknown call {message.id}")
            self._in_flight.discard(message.id)
        self.state = target
