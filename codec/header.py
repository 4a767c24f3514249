"""The frame header (spec §4), declared with construct.

:data:`HEADER` is the normative declaration that the spec's field table
mirrors. construct interprets it far slower than struct unpacks it, so the
decoder parses with the equivalent :data:`tether.codec.frames.HEADER_STRUCT`;
the test suite proves both agree on every input. This module is not imported
on the hot path (the guests never load construct).
"""

from __future__ import annotations

import construct as c

from .frames import HEADER_SIZE, MAGIC

HEADER = c.Struct(
    "magic" / c.Const(MAGIC),
    "version" / c.Int8ub,
    "type" / c.Int8ub,
    "flags" / c.Int16ub,
    "length" / c.Int32ub,
)

assert HEADER.sizeof() == HEADER_SIZE
