"""Every message type survives encode → strict decode → schema unchanged."""

from __future__ import annotations

import math
from typing import Any

from hypothesis import given

from tether.codec import Message, decode_payload, encode_frame, encode_payload
from tether.codec.messages import MESSAGE_TYPES

from ..strategies import messages


def _nan_safe(x: Any) -> Any:
    """NaN != NaN: compare messages through a representation where it is equal."""
    if isinstance(x, float) and math.isnan(x):
        return "NaN"
    if isinstance(x, list | tuple):
        return [_nan_safe(i) for i in x]
    if isinstance(x, dict):
        return {k: _nan_safe(v) for k, v in x.items()}
    return x


@given(messages)
def test_message_round_trip(message: Message) -> None:
    payload = encode_payload(message.to_wire())
    decoded = MESSAGE_TYPES[message.TYPE](decode_payload(payload, 600))
    assert type(decoded) is type(message)
    assert _nan_safe(decoded.to_wire()) == _nan_safe(message.to_wire())
    assert encode_frame(decoded.TYPE, encode_payload(decoded.to_wire())) == encode_frame(
        message.TYPE, payload
    )
