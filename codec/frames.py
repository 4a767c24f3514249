"""Framing (spec §4): bytes in, frames out, with every header rule checked
the moment the header is complete, before any payload is buffered.
"""

from __future__ import annotations

import enum
import struct
from dataclasses import dataclass
from typing import Final

from .errors import ErrorCode, LocalProtocolError, RemoteProtocolError

MAGIC: Final = b"TH"
VERSION: Final = 1
HEADER_SIZE: Final = 10
#: magic, version, type, flags, payload length; big-endian (spec §4.1).
HEADER_STRUCT: Final = struct.Struct(">2sBBHI")

#: Defaults and floors of the frame ceiling (spec §10).
DEFAULT_MAX_FRAME_BYTES: Final = 16 * 1024 * 1024
MIN_MAX_FRAME_BYTES: Final = 64 * 1024
#: The length field is 32 bits; no ceiling can exceed it.
MAX_PAYLOAD_LENGTH: Final = 2**32 - 1


class FrameType(enum.IntEnum):
    """Core frame types (spec §4.2). 0x00 and 0x09-0x7F are reserved."""

    HELLO = 0x01
    RUN = 0x02
    CALL = 0x03
    RESULT = 0x04
    OUTPUT = 0x05
    DONE = 0x06
    CANCEL = 0x07
    ERROR = 0x08


#: Types 0x80-0xFF are extension frames: discarded unless negotiated (R-FRAME-7).
EXTENSION_TYPES_START: Final = 0x80

_CORE_TYPES: Final = frozenset(int(t) for t in FrameType)


#: A payload from this size on is handed over in the buffer it arrived in,
#: not copied out of it: a fresh process pays a page fault for every page a
#: copy touches.
HAND_OVER_BYTES: Final = 64 * 1024


@dataclass(frozen=True, slots=True)
class Frame:
    """One frame: its ``type`` (a :class:`FrameType`, or a plain int in the
    extension range) and its raw ``payload`` bytes (a bytearray from
    ``HAND_OVER_BYTES`` on, no longer the decoder's)."""

    type: int
    payload: bytes | bytearray


class NeedData(enum.Enum):
    """The type of :data:`NEED_DATA`, for annotations."""

    NEED_DATA = "NEED_DATA"

    def __repr__(self) -> str:
        return "NEED_DATA"


#: Returned by :meth:`FrameDecoder.next_frame` when more bytes are needed.
NEED_DATA: Final = NeedData.NEED_DATA


def encode_frame(frame_type: int, payload: bytes | bytearray) -> bytes:
    """Header plus payload, ready to write."""
    return frame_header(frame_type, len(payload)) + payload


def frame_header(frame_type: int, length: int) -> bytes:
    """The header of a frame whose payload is ``length`` bytes (to write a
    large payload after it without copying the two together)."""
    if not 0 < frame_type <= 0xFF or (
        frame_type < EXTENSION_TYPES_START and frame_type not in _CORE_TYPES
    ):
        raise LocalProtocolError(ErrorCode.UNKNOWN_TYPE, f"no frame type 0x{frame_type:02x}")
    if length > MAX_PAYLOAD_LENGTH:
        raise LocalProtocolError(ErrorCode.FRAME_TOO_LARGE, f"payload of {length} bytes")
    return HEADER_STRUCT.pack(MAGIC, VERSION, frame_type, 0, length)


def check_header(header: bytes, max_frame_bytes: int) -> tuple[int, int]:
    """Apply R-FRAME-2..6 to a complete header; return ``(type, length)``."""
    magic, version, frame_type, flags, length = HEADER_STRUCT.unpack(header)
    if magic != MAGIC:
        raise RemoteProtocolError(ErrorCode.FRAME_MALFORMED, f"bad magic {magic.hex()}")
    if version != VERSION:
        raise RemoteProtocolError(
            ErrorCode.UNSUPPORTED_VERSION, f"frame version {version}, expected {VERSION}"
        )
    if flags != 0:
        raise RemoteProtocolError(ErrorCode.FRAME_MALFORMED, f"reserved flags 0x{flags:04x} set")
    if length > max_frame_bytes:
        raise RemoteProtocolError(
            ErrorCode.FRAME_TOO_LARGE,
            f"declared payload of {length} bytes exceeds the ceiling of {max_frame_bytes}",
        )
    if frame_type < EXTENSION_TYPES_START and frame_type not in _CORE_TYPES:
        raise RemoteProtocolError(ErrorCode.UNKNOWN_TYPE, f"reserved frame type 0x{frame_type:02x}")
    return frame_type, length


class FrameDecoder:
    """Incremental frame decoder: :meth:`feed` bytes, then call
    :meth:`next_frame` until it returns :data:`NEED_DATA`.

    The buffer is consumed from the front with an offset and compacted only
    when the consumed part dominates, so a stream fed in tiny pieces costs
    linear time. A frame whose declared length exceeds ``max_frame_bytes``
    is rejected as soon as its header is complete.

    A payload of ``HAND_OVER_BYTES`` or more is gathered in a buffer of its
    own, which becomes the frame's payload. With ``reserve_payloads`` that
    buffer is allocated whole when the header arrives, and the rest of the
    payload can be received straight into it (:meth:`payload_view`,
    :meth:`received`): for a peer whose declared lengths are trusted, since
    a header alone then costs its whole length.
    """

    def __init__(self, max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES, *,
                 reserve_payloads: bool = False) -> None:
        self.max_frame_bytes = max_frame_bytes
        self.reserve_payloads = reserve_payloads
        self._buf = bytearray()
        self._pos = 0
        self._pending: tuple[int, int] | None = None  # header checked, payload awaited
        self._large: bytearray | None = None  # the pending payload, when large
        self._filled = 0  # bytes of it received

    @property
    def max_frame_bytes(self) -> int:
        return self._max_frame_bytes

    @max_frame_bytes.setter
    def max_frame_bytes(self, value: int) -> None:
        if not MIN_MAX_FRAME_BYTES <= value <= MAX_PAYLOAD_LENGTH:
            raise ValueError(
                f"max_frame_bytes must be in [{MIN_MAX_FRAME_BYTES}, {MAX_PAYLOAD_LENGTH}]"
            )
        self._max_frame_bytes = value

    @property
    def buffered(self) -> int:
        """Bytes received but not yet returned as a frame."""
        return len(self._buf) - self._pos + self._filled

    def feed(self, data: bytes | bytearray | memoryview) -> None:
        if self._large is not None:
            data = self._fill(data)
            if not data:
                return
        if self._pos and self._pos * 2 >= len(self._buf):
            del self._buf[: self._pos]
            self._pos = 0
        self._buf += data

    def payload_view(self) -> memoryview | None:
        """With ``reserve_payloads``: the part of a large pending payload not
        yet received, to receive into (then call :meth:`received`); else None."""
        if self._large is None or not self.reserve_payloads or self._filled == len(self._large):
            return None
        return memoryview(self._large)[self._filled:]

    def received(self, size: int) -> None:
        """``size`` bytes were written at the start of :meth:`payload_view`."""
        assert self._large is not None and self._filled + size <= len(self._large)
        self._filled += size

    def _fill(self, data: bytes | bytearray | memoryview) -> bytes | bytearray | memoryview:
        """Take what belongs to the large pending payload; return the rest."""
        assert self._large is not None and self._pending is not None
        take = min(len(data), self._pending[1] - self._filled)
        if self.reserve_payloads:
            self._large[self._filled:self._filled + take] = data[:take]
        else:
            self._large += data[:take]
        self._filled += take
        return data[take:]

    def ready_header(self) -> tuple[int, int] | None:
        """``(type, payload length)`` of the next frame if all of it is buffered."""
        if self._pending is None:
            if len(self._buf) - self._pos < HEADER_SIZE:
                return None
            header = bytes(self._buf[self._pos : self._pos + HEADER_SIZE])
            self._pending = check_header(header, self._max_frame_bytes)
            self._pos += HEADER_SIZE
            if self._pending[1] >= HAND_OVER_BYTES:
                self._gather()
        frame_type, length = self._pending
        if self._large is not None:
            return (frame_type, length) if self._filled == length else None
        return (frame_type, length) if len(self._buf) - self._pos >= length else None

    def _gather(self) -> None:
        """Start the pending payload's own buffer with what has arrived of it."""
        assert self._pending is not None
        self._large = bytearray(self._pending[1]) if self.reserve_payloads else bytearray()
        self._filled = 0
        with memoryview(self._buf) as view:
            rest = self._fill(view[self._pos:])
            self._buf = bytearray(rest)
        self._pos = 0

    def next_frame(self) -> Frame | NeedData:
        ready = self.ready_header()
        if ready is None:
            return NEED_DATA
        frame_type, length = ready
        self._pending = None
        if self._large is not None:
            handed, self._large, self._filled = self._large, None, 0
            return Frame(frame_type, handed)
        with memoryview(self._buf) as view:  # one copy, not two
            payload = bytes(view[self._pos : self._pos + length])
        self._pos += length
        return Frame(frame_type, payload)

    def check_eof(self) -> None:
        """Call at end of stream: raises TRUNCATED if a frame was cut off."""
        if self._pending is not None or self.buffered:
            raise RemoteProtocolError(
                ErrorCode.TRUNCATED, f"stream ended inside a frame ({self.buffered} bytes pending)"
            )
