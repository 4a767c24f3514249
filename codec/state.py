"""The connection state table (spec §8), shared by both roles.

Both ends of a connection walk the same table: a frame moves the connection
from one state to the next according to who sent it. A ``(state, sender,
type)`` missing from :data:`TRANSITIONS` is a protocol violation
(UNEXPECTED_MESSAGE). The spec's tables are generated from this one
(``python -m tether.codec.state``), so they cannot drift apart.
"""

from __future__ import annotations

import enum
from typing import Final

from .frames import FrameType
from .messages import Role


class State(enum.Enum):
    AWAIT_HELLO = "AWAIT_HELLO"  # connected; the guest's HELLO comes first
    AWAIT_RUN = "AWAIT_RUN"  # HELLO seen; the host sends RUN next
    RUNNING = "RUNNING"  # the program runs: calls and output flow
    CANCELLING = "CANCELLING"  # CANCEL sent; the guest winds down to DONE
    FINISHED = "FINISHED"  # DONE sent; only late RESULT/CANCEL may still cross
    CLOSED = "CLOSED"  # ERROR sent or received


HOST, GUEST = Role.HOST, Role.GUEST

TRANSITIONS: Final[dict[tuple[State, Role, FrameType], State]] = {
    (State.AWAIT_HELLO, GUEST, FrameType.HELLO): State.AWAIT_RUN,
    (State.AWAIT_RUN, HOST, FrameType.RUN): State.RUNNING,
    (State.RUNNING, GUEST, FrameType.CALL): State.RUNNING,
    (State.RUNNING, GUEST, FrameType.OUTPUT): State.RUNNING,
    (State.RUNNING, HOST, FrameType.RESULT): State.RUNNING,
    (State.RUNNING, HOST, FrameType.CANCEL): State.CANCELLING,
    (State.RUNNING, GUEST, FrameType.DONE): State.FINISHED,
    (State.CANCELLING, GUEST, FrameType.CALL): State.CANCELLING,
    (State.CANCELLING, GUEST, FrameType.OUTPUT): State.CANCELLING,
    (State.CANCELLING, HOST, FrameType.RESULT): State.CANCELLING,
    (State.CANCELLING, GUEST, FrameType.DONE): State.FINISHED,
    # Frames already on their way when DONE was sent (R-STATE-4).
    (State.FINISHED, HOST, FrameType.RESULT): State.FINISHED,
    (State.FINISHED, HOST, FrameType.CANCEL): State.FINISHED,
}
# ERROR is legal from either side in every state but CLOSED (R-ERR-1), except
# from the guest after its DONE: it sends nothing more (R-DONE-4).
for _state in State:
    if _state is not State.CLOSED:
        for _role in Role:
            if (_state, _role) != (State.FINISHED, Role.GUEST):
                TRANSITIONS[(_state, _role, FrameType.ERROR)] = State.CLOSED
del _state, _role


def render_tables() -> str:
    """The spec's state tables (Markdown), one per sender."""
    lines: list[str] = []
    for role in Role:
        lines += [
            f"| state | frame sent by the {role.value} | next state |",
            "| --- | --- | --- |",
        ]
        for (state, sender, frame_type), target in TRANSITIONS.items():
            if sender is role:
                lines.append(f"| {state.value} | {frame_type.name} | {target.value} |")
        lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    print(render_tables())
