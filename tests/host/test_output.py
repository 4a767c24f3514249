"""CappedOutput: the head and the tail of printed output within the cap."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from tether.host.run.output import CappedOutput

MARKER = re.compile(r"\n?\[tether: (\d+) bytes of output dropped\]\n")
pieces = st.lists(st.tuples(st.sampled_from(["stdout", "stderr"]),
                            st.text(alphabet="ab\né€😀", max_size=40)), max_size=30)


def capture(limit: int, writes: list[tuple[str, str]]) -> CappedOutput:
    output = CappedOutput(limit)
    for stream, text in writes:
        output.add(stream, text)
    return output


@given(st.integers(0, 200), pieces)
def test_within_the_cap_nothing_changes_and_past_it_head_and_tail_are_kept(
        limit: int, writes: list[tuple[str, str]]) -> None:
    output = capture(limit, writes)
    chunks = output.chunks()
    whole = "".join(text for _, text in writes)
    if len(whole.encode()) <= limit:
        assert not output.truncated
        assert "".join(chunk.text for chunk in chunks) == whole
        return
    assert output.truncated
    [at] = [i for i, chunk in enumerate(chunks) if MARKER.fullmatch(chunk.text)]
    marker = MARKER.fullmatch(chunks[at].text)
    assert marker is not None
    head = "".join(chunk.text for chunk in chunks[:at])
    tail = "".join(chunk.text for chunk in chunks[at + 1 :])
    assert whole.startswith(head) and whole.endswith(tail)
    assert len(head.encode()) <= limit // 2 and len(head.encode() + tail.encode()) <= limit
    assert int(marker[1]) == len(whole.encode()) - len(head.encode()) - len(tail.encode())


@given(st.integers(0, 200), pieces)
def test_every_kept_piece_keeps_its_stream(limit: int, writes: list[tuple[str, str]]) -> None:
    for stream in ("stdout", "stderr"):
        written = "".join(text for s, text in writes if s == stream)
        for chunk in capture(limit, writes).chunks():
            if chunk.stream == stream and not MARKER.fullmatch(chunk.text):
                assert chunk.text in written


def test_cuts_fall_at_line_ends_where_there_are_some() -> None:
    output = capture(20, [("stdout", f"line {i}\n") for i in range(10)])
    assert "".join(c.text for c in output.chunks()) == (
        "line 0\n[tether: 56 bytes of output dropped]\nline 9\n")


def test_a_line_without_an_end_is_cut_where_the_cap_falls() -> None:
    output = capture(5, [("stdout", "hello world")])
    assert "".join(c.text for c in output.chunks()) == (
        "he\n[tether: 6 bytes of output dropped]\nrld")
