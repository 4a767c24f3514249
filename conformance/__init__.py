"""Recorded transcripts of both sides of the protocol, and the runner that
plays them against a guest or the host (``tether conformance``)."""

from pathlib import Path

#: The committed transcripts, one directory per scenario.
TRANSCRIPTS = Path(__file__).resolve().parent / "transcripts"
#: The cases our own guests do not pass yet, with their reasons.
KNOWN_FAILURES = Path(__file__).resolve().parent / "known-failures.txt"
