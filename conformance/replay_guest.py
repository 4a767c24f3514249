"""A scripted guest: plays the guest side of a transcript on fd 3.

Run by the host runner in place of a real guest::

    python -m tether.conformance.replay_guest STEPS.json

Guest steps are sent with their placeholders filled in (``<id:k>`` becomes
the k-th fresh call id, counting from 1); for each host step one frame is
read, only to keep pace with the host. What the host sent is checked by the
runner from its own tap of the wire, so this process may be killed at any
moment without losing the verdict.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sys
from pathlib import Path
from typing import Any

from tether.codec import (
    NEED_DATA,
    FrameDecoder,
    FrameType,
    ProtocolError,
    encode_frame,
    encode_payload,
)

from .transcript import fresh_ids, parse_diag, substitute

CHANNEL_FD = 3
FILLERS = {"text": "replay", "any": ["python", "javascript", "typescript"]}


def main() -> None:
    # As a guest that winds down after CANCEL: the host's SIGTERM (R-TERM-2)
    # does not cut its last frames off; SIGKILL ends it after the grace.
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    spec = json.loads(Path(sys.argv[1]).read_text())
    sock = socket.socket(fileno=CHANNEL_FD)
    steps = spec["steps"]
    bindings = {**FILLERS, **spec["bindings"],
                **fresh_ids(parse_diag(s["payload"]) for s in steps
                            if s["sender"] == "guest" and s["payload"])}
    decoder = FrameDecoder()
    try:
        for step in steps:
            if step["sender"] == "host":
                # Keep pace: wait for one whole frame (the runner checks its content).
                while decoder.next_frame() is NEED_DATA:
                    data = sock.recv(65536)
                    if not data:
                        raise EOFError
                    decoder.feed(data)
            elif step["kind"] == "EOF":
                sock.shutdown(socket.SHUT_WR)
            elif step["kind"] == "RAW":
                sock.sendall(bytes.fromhex(step["raw"]))
            else:
                value: Any = substitute(parse_diag(step["payload"]), bindings)
                sock.sendall(encode_frame(FrameType[step["kind"]], encode_payload(value)))
        while sock.recv(65536):  # hold the stream open until the host ends the run
            pass
    except (OSError, EOFError, ProtocolError):
        pass
    os._exit(0)


if __name__ == "__main__":
    main()
