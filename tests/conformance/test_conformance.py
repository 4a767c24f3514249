"""The conformance suite: transcripts current, both guests and the host
pass every case, the runner fails a broken guest, and the transcripts walk
every row of the state table."""

from __future__ import annotations

import asyncio
import re
import sys
from pathlib import Path

import pytest

from tether.codec import TRANSITIONS, FrameType, Role, State
from tether.conformance import cli
from tether.conformance.record import TRANSCRIPTS, record_all
from tether.conformance.runner import check_guest, check_host, command_guest, our_guest
from tether.conformance.transcript import Transcript

TRANSCRIPT_LIST = cli.load_all(TRANSCRIPTS)
IDS = [t.scenario for t in TRANSCRIPT_LIST]
SPEC = (Path(__file__).resolve().parents[2] / "spec" / "tether-v1.md").read_text()

#: Rows no real exchange can reach: an ERROR after the peer's CANCEL or DONE
#: is never read (the host kills the guest; a guest exits after DONE).
UNREACHABLE = {
    (State.CANCELLING, Role.HOST, FrameType.ERROR),
    (State.CANCELLING, Role.GUEST, FrameType.ERROR),
    (State.FINISHED, Role.HOST, FrameType.ERROR),
}


@pytest.mark.parametrize("language", ["python", "javascript", "typescript"])
@pytest.mark.parametrize("transcript", TRANSCRIPT_LIST, ids=IDS)
def test_our_guests_pass(transcript: Transcript, language: str) -> None:
    case = asyncio.run(check_guest(transcript, language, our_guest(language), strict=True))
    assert case.verdict in ("pass", "skip"), case.detail


@pytest.mark.parametrize("transcript", TRANSCRIPT_LIST, ids=IDS)
def test_our_host_passes(transcript: Transcript) -> None:
    case = asyncio.run(check_host(transcript, "python", strict=True))
    assert case.verdict in ("pass", "skip"), case.detail


def test_transcripts_are_current() -> None:
    assert asyncio.run(record_all(None, check=True)) == []


def test_a_broken_guest_fails_with_the_first_differing_frame() -> None:
    """A guest that answers RUN with a wrong DONE value."""
    liar = ("import os, struct, cbor2, socket\n"
            "s = socket.socket(fileno=3)\n"
            "def send(t, v):\n"
            "    p = cbor2.dumps(v, canonical=True)\n"
            "    s.sendall(struct.pack('>2sBBHI', b'TH', 1, t, 0, len(p)) + p)\n"
            "send(1, {'protocol': 1, 'implementation': 'liar', 'languages': ['python'], "
            "'capabilities': []})\n"
            "s.recv(1 << 20)\n"
            "send(5, {'stream': 'stdout', 'text': 'hello\\n'})\n"
            "send(6, {'value': 41})\n")
    [hello] = [t for t in TRANSCRIPT_LIST if t.scenario == "hello"]
    case = asyncio.run(check_guest(hello, "python", command_guest([sys.executable, "-c", liar])))
    assert case.verdict == "fail"
    assert "expected 42, got 41" in case.detail


def test_known_failures_that_pass_fail_the_run(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    known = tmp_path / "known.txt"
    known.write_text("guest/python/hello  # fixed long ago\n")
    parser = cli.argparse.ArgumentParser()
    cli.add_parser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["conformance", "guest", "--scenario", "hello",
                              "--known-failures", str(known), "--junit", str(tmp_path / "j.xml")])
    assert cli.main(args) == 1
    out = capsys.readouterr().out
    assert "FIXED guest/python/hello" in out
    assert out.strip().endswith("1 passed, 0 failed, 0 skipped")
    assert 'name="hello"' in (tmp_path / "j.xml").read_text()


def test_the_transcripts_walk_every_reachable_row_of_the_state_table() -> None:
    covered = set()
    for t in TRANSCRIPT_LIST:
        state = State.AWAIT_HELLO
        for step in t.steps:
            if step.kind in ("RAW", "EOF"):
                continue
            key = (state, Role(step.sender), FrameType[step.kind])
            if key in TRANSITIONS:
                covered.add(key)
                state = TRANSITIONS[key]
    missing = set(TRANSITIONS) - covered - UNREACHABLE
    assert not missing, sorted((s.value, r.value, f.name) for s, r, f in missing)


def test_transcripts_cite_only_defined_requirements() -> None:
    defined = set(re.findall(r"\*\*\[(R-[A-Z]+-\d+)\]\*\*", SPEC))
    for t in TRANSCRIPT_LIST:
        assert set(t.requirements) <= defined, (t.scenario, set(t.requirements) - defined)
