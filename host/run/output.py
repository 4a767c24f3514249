"""Printed output within ``Limits.output_bytes`` (R-OUTPUT-3).

Past the cap the middle is dropped: the first half and the last half are
kept, because someone reading a long log wants how it began and how it
ended. The head ends, and the tail starts, at a line boundary where the
kept text has one, and a line of its own between them says how much was
dropped. Memory stays within the cap whatever the program prints.
"""

from __future__ import annotations

from collections import deque

from ..result import OutputChunk

MARKER = "[tether: {} bytes of output dropped]\n"


class CappedOutput:
    """Collects OUTPUT text, stream by stream, and gives back what is kept."""

    def __init__(self, limit: int) -> None:
        self._head_left = limit // 2
        self._tail_limit = limit - limit // 2
        self._head: list[OutputChunk] = []
        self._tail: deque[tuple[str, bytes]] = deque()
        self._tail_bytes = 0
        self._tail_starts_a_line = True
        self._dropped = 0

    @property
    def truncated(self) -> bool:
        return self._dropped > 0

    def add(self, stream: str, text: str) -> None:
        if not text:
            return
        data = text.encode()
        if self._head_left > 0:
            if len(data) <= self._head_left:
                self._head_left -= len(data)
                self._head.append(OutputChunk(stream, text))
                return
            cut = _boundary(data, self._head_left)
            self._head.append(OutputChunk(stream, data[:cut].decode()))
            self._tail_limit += self._head_left - cut  # what a character boundary left over
            self._head_left = 0
            data = data[cut:]
        self._tail.append((stream, data))
        self._tail_bytes += len(data)
        while self._tail_bytes > self._tail_limit:
            first_stream, first = self._tail[0]
            excess = self._tail_bytes - self._tail_limit
            cut = len(first) if len(first) <= excess else _boundary(first, excess, up=True)
            if cut == len(first):
                self._tail.popleft()
            else:
                self._tail[0] = (first_stream, first[cut:])
            self._tail_bytes -= cut
            self._dropped += cut
            self._tail_starts_a_line = first[cut - 1] == 0x0A

    def chunks(self) -> tuple[OutputChunk, ...]:
        tail = [OutputChunk(stream, data.decode()) for stream, data in self._tail]
        if not self._dropped:
            return (*self._head, *tail)
        head = list(self._head)
        dropped = self._dropped + _trim_partial_line(head, at_end=True)
        if not self._tail_starts_a_line:
            dropped += _trim_partial_line(tail, at_end=False)
        last = head[-1].stream if head else tail[0].stream if tail else "stdout"
        joined = "".join(c.text for c in head)
        marker = ("" if not joined or joined.endswith("\n") else "\n") + MARKER.format(dropped)
        return (*head, OutputChunk(last, marker), *tail)


def _boundary(data: bytes, at: int, *, up: bool = False) -> int:
    """``at`` moved to a character boundary: down (a cut that keeps at most
    ``at`` bytes), or ``up`` (one that drops at least ``at`` bytes)."""
    while 0 < at < len(data) and data[at] & 0xC0 == 0x80:
        at += 1 if up else -1
    return at


def _trim_partial_line(chunks: list[OutputChunk], *, at_end: bool) -> int:
    """Drop the head's unfinished last line, or the tail's first line whose
    start was dropped, where the kept text has a line boundary to cut at and
    keeps something; returns the bytes dropped."""
    text = "".join(c.text for c in chunks)
    cut = text.rfind("\n") + 1 if at_end else text.find("\n") + 1
    if cut <= 0 or cut >= len(text):
        return 0
    keep, drop = (text[:cut], text[cut:]) if at_end else (text[cut:], text[:cut])
    # Rebuild the chunks around the cut, keeping each piece's stream.
    kept: list[OutputChunk] = []
    position = 0
    start, end = (0, cut) if at_end else (cut, len(text))
    for chunk in chunks:
        lo, hi = max(position, start), min(position + len(chunk.text), end)
        if lo < hi:
            kept.append(OutputChunk(chunk.stream, chunk.text[lo - position:hi - position]))
        position += len(chunk.text)
    assert "".join(c.text for c in kept) == keep
    chunks[:] = kept
    return len(drop.encode())
