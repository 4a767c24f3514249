"""tether's sans-IO codec: frames, strict CBOR payloads, messages and the
connection state machine of the wire spec (``spec/``). No I/O happens here."""

from .connection import CONNECTION_CLOSED, Connection, ConnectionClosed, Event
from .errors import ErrorCode, LocalProtocolError, ProtocolError, RemoteProtocolError
from .frames import (
    DEFAULT_MAX_FRAME_BYTES,
    HEADER_SIZE,
    MAGIC,
    MIN_MAX_FRAME_BYTES,
    NEED_DATA,
    VERSION,
    Frame,
    FrameDecoder,
    FrameType,
    encode_frame,
)
from .messages import (
    ENVELOPE_DEPTH,
    ENVELOPE_OVERHEAD,
    MAX_CALL_ID,
    MAX_VARIABLES_BYTES,
    PROTOCOL_VERSION,
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
    envelope_depth,
    variable_name_problem,
)
from .state import TRANSITIONS, State
from .values import (
    DEFAULT_MAX_DEPTH,
    DEFAULT_VALUE_BYTES,
    ENVELOPE_ITEMS,
    MAX_MAX_DEPTH,
    MIN_MAX_DEPTH,
    Excess,
    Value,
    ValueModelError,
    check_value,
    count_items,
    decode_payload,
    decode_payload_in_steps,
    encode_payload,
    encode_payload_in_steps,
    exceeds_value_items,
    to_wire,
    to_wire_plain,
    value_excess,
    value_items,
)

__all__ = [
    "CONNECTION_CLOSED", "DEFAULT_MAX_DEPTH", "DEFAULT_MAX_FRAME_BYTES", "DEFAULT_VALUE_BYTES",
    "ENVELOPE_DEPTH", "ENVELOPE_ITEMS", "ENVELOPE_OVERHEAD", "HEADER_SIZE", "MAGIC",
    "MAX_CALL_ID", "MAX_MAX_DEPTH", "MAX_VARIABLES_BYTES",
    "MIN_MAX_DEPTH", "MIN_MAX_FRAME_BYTES", "NEED_DATA", "PROTOCOL_VERSION", "TRANSITIONS",
    "VERSION", "Binding", "Call", "CallError", "Cancel", "Connection", "ConnectionClosed",
    "Done", "Error", "ErrorCode", "Event", "Excess", "Frame", "FrameDecoder", "FrameType", "Hello",
    "LocalProtocolError", "Message", "Output", "ProgramError", "ProtocolError", "Result",
    "RemoteProtocolError", "Role", "Run", "RunLimits", "State", "Stream", "Value",
    "ValueModelError", "check_value", "count_items", "decode_payload",
    "decode_payload_in_steps", "encode_frame", "encode_payload", "encode_payload_in_steps",
    "envelope_depth", "exceeds_value_items", "to_wire", "to_wire_plain", "value_excess",
    "value_items",
    "variable_name_problem",
]
