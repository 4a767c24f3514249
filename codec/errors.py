"""The error-code registry (spec §9) and the codec's exception types.

Codes below 100 are *connection* errors: the connection is over once one
is raised or received. Codes from 100 are *call* errors: they travel in a
RESULT's ``error`` and end only the call they belong to.
"""

from __future__ import annotations

import enum


class ErrorCode(enum.IntEnum):
    """Wire error codes (spec §9, registry table)."""

    # connection errors (fatal)
    FRAME_MALFORMED = 1
    UNSUPPORTED_VERSION = 2
    UNKNOWN_TYPE = 3
    FRAME_TOO_LARGE = 4
    MALFORMED_PAYLOAD = 5
    INVALID_MESSAGE = 6
    UNEXPECTED_MESSAGE = 7
    INVALID_CALL_ID = 8
    TRUNCATED = 9
    LANGUAGE_UNSUPPORTED = 10
    INTERNAL_ERROR = 11
    # call errors (scoped to one call)
    BINDING_ERROR = 100
    UNKNOWN_BINDING = 101
    INVALID_VALUE = 102
    VALUE_TOO_LARGE = 103
    TOO_MANY_CALLS = 104
    CALL_TIMEOUT = 105
    CANCELLED = 106

    @property
    def fatal(self) -> bool:
        """True for connection errors, False for call errors."""
        return self < 100


class ProtocolError(Exception):
    """A violation of the tether wire protocol.

    ``code`` is the :class:`ErrorCode` that an ERROR frame reporting it
    carries. Once a connection has raised a ProtocolError it is closed and
    every further use raises again.
    """

    def __init__(self, code: ErrorCode, message: str) -> None:
        super().__init__(f"{code.name}: {message}")
        self.code = code
        self.message = message


class RemoteProtocolError(ProtocolError):
    """The peer sent something the spec forbids (hostile or broken peer)."""


class LocalProtocolError(ProtocolError):
    """This side tried to send something the spec forbids (a bug in the caller)."""
