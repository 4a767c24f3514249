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


H, G = Role.HOST, Role.GUEST
S, F = State, FrameType

TRANSITIONS: Final[dict[tuple[State, Role, FrameType], State]] = {
    (S.AWAIT_HELLO, G, F.HELLO): S.AWAIT_RUN,
    (S.AWAIT_RUN, H, F.RUN): S.RUNNING,
    (S.RUNNING, G, F.CALL): S.RUNNING,
    (S.RUNNING, G, F.OUTPUT): S.RUNNING,
    (S.RUNNING, H, F.RESULT): S.RUNNING,
    (S.RUNNING, H, F.CANCEL): S.CANCELLING,
    (S.RUNNING, G, F.DONE): S.FINISHED,
    (S.CANCELLING, G, F.CALL): S.CANCELLING,
    (S.CANCELLING, G, F.OUTPUT): S.CANCELLING,
    (S.CANCELLING, H, F.RESULT): S.CANCELLING,
    (S.CANCELLING, G, F.DONE): S.FINISHED,
    # Frames already on their way when DONE was sent (R-STATE-4).
    (S.FINISHED, H, F.RESULT): S.FINISHED,
    (S.FINISHED, H, F.CANCEL): S.FINISHED,
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
