"""The conformance suite: transcripts current, both guests and the host
pass every case, the runner fails a broken guest, and the transcripts walk
every row of the state table."""

from __future__ import annotations

import asyncio
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from tether.codec import TRANSITIONS, FrameType, Role, State
from tether.conformance import KNOWN_FAILURES as KNOWN_FAILURES_FILE
from tether.conformance import cli, coverage
from tether.conformance.record import TRANSCRIPTS, record_all
from tether.conformance.runner import (
    NOT_APPLICABLE,
    check_guest,
    check_host,
    command_guest,
    our_guest,
)
from tether.conformance.transcript import Mismatch, Transcript, match, parse_transcript
from tether.host.guests.languages import GuestCommand, guest_command
from tether.host.limits import Limits

TRANSCRIPT_LIST = cli.load_all(TRANSCRIPTS)


def known_failures() -> dict[str, str]:
    """conformance/known-failures.txt: each case our guests fail, with its reason."""
    found = {}
    for line in KNOWN_FAILURES_FILE.read_text().splitlines():
        case, _, reason = line.partition("#")
        if case.strip():
            found[case.strip()] = reason.strip()
    return found
IDS = [t.scenario for t in TRANSCRIPT_LIST]
SPEC = (Path(__file__).resolve().parents[2] / "spec" / "tether-v1.md").read_text()

#: Rows no real exchange can reach: an ERROR after the peer's CANCEL or DONE
#: is never read (the host kills the guest; a guest exits after DONE).
UNREACHABLE = {
    (State.CANCELLING, Role.HOST, FrameType.ERROR),
    (State.CANCELLING, Role.GUEST, FrameType.ERROR),
    (State.FINISHED, Role.HOST, FrameType.ERROR),
}


#: Cases our guests do not pass yet, each with its reason.
KNOWN_FAILURES = known_failures()


def _not_yet(scenario: str, language: str) -> None:
    reason = KNOWN_FAILURES.get(f"guest/{language}/{scenario}")
    if reason is not None:
        pytest.xfail(reason)


@pytest.mark.parametrize("language", ["python", "javascript", "typescript"])
@pytest.mark.parametrize("transcript", TRANSCRIPT_LIST, ids=IDS)
def test_our_guests_pass(transcript: Transcript, language: str) -> None:
    _not_yet(transcript.scenario, language)
    case = asyncio.run(check_guest(transcript, language, our_guest(language), strict=True))
    assert case.verdict in ("pass", "skip", NOT_APPLICABLE), case.detail


@pytest.mark.parametrize("transcript", TRANSCRIPT_LIST, ids=IDS)
def test_our_host_passes(transcript: Transcript) -> None:
    case = asyncio.run(check_host(transcript, "python", strict=True))
    assert case.verdict in ("pass", "skip", NOT_APPLICABLE), case.detail


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
    assert "1 passed, 0 failed, 0 skipped" in out.strip().splitlines()[-1]
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


def _conformance_args(*argv: str) -> Any:
    parser = cli.argparse.ArgumentParser()
    cli.add_parser(parser.add_subparsers(dest="command"))
    return parser.parse_args(["conformance", *argv])


def test_an_unknown_scenario_is_named() -> None:
    with pytest.raises(SystemExit, match="unknown scenario 'no-such-thing'"):
        cli.load_all(TRANSCRIPTS, ["hello", "no-such-thing"])


def test_a_missing_program_fails_naming_the_file_to_write() -> None:
    """Every guest runs a scenario that applies to every guest: without a
    program in its language it fails, it is not skipped."""
    [hello] = [t for t in TRANSCRIPT_LIST if t.scenario == "hello"]
    case = asyncio.run(check_guest(hello, "ruby", command_guest(["true"])))
    assert case.verdict == "fail"
    assert str(TRANSCRIPTS / "hello" / "program.rb") in case.detail
    case = asyncio.run(check_guest(hello, "zig", command_guest(["true"]), extension="zig"))
    assert str(TRANSCRIPTS / "hello" / "program.zig") in case.detail


def test_another_languages_case_and_a_host_scenario_are_not_the_guests() -> None:
    """A language's own case (``# applies:``) is not run for a language
    without a program for it, nor is a host-mode scenario in guest mode;
    neither is listed."""
    by_name = {t.scenario: t for t in TRANSCRIPT_LIST}
    assert not by_name["integral-float"].for_every_guest
    for name in ("integral-float", "guest-garbage"):
        case = asyncio.run(check_guest(by_name[name], "ruby", command_guest(["true"])))
        assert case.verdict == NOT_APPLICABLE, case.detail


def test_the_language_cases_are_those_of_one_language_only() -> None:
    """Scenarios that only one of our languages can run say whose case they
    are; every other program scenario has a program for both (R-LANG-*)."""
    for t in TRANSCRIPT_LIST:
        if t.programs and t.for_every_guest:
            assert {"python", "javascript"} <= set(t.programs), t.scenario


def _cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = cli.main(_conformance_args(*argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_a_guest_with_no_programs_fails_clearly(capsys: pytest.CaptureFixture[str]) -> None:
    """Not "0 failed": a language without one program has written none."""
    code, out, err = _cli(["guest", "--language", "cobol", "--", "true"], capsys)
    assert code == 2
    assert "no cobol programs" in err and "--programs DIR" in err
    assert "passed" not in out


def test_host_mode_scenarios_are_not_listed_in_guest_mode(
        capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _cli(["guest", "--scenario", "hello", "--scenario", "guest-garbage"], capsys)
    assert code == 0
    assert "guest-garbage" not in out
    assert out.strip().endswith("1 passed, 0 failed, 0 skipped (SHOULD-level expectations "
                                "not checked: --strict)")


def test_programs_kept_elsewhere_are_run(tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    """--programs DIR: a port keeps its programs in its own repository."""
    (tmp_path / "hello").mkdir()
    (tmp_path / "hello" / "program.py").write_text("print('hello')\nreturn 41\n")
    code, out, _ = _cli(["guest", "--scenario", "hello", "--programs", str(tmp_path)], capsys)
    assert code == 1
    assert "expected 42, got 41" in out


def test_environment_reaches_the_guest(capsys: pytest.CaptureFixture[str]) -> None:
    """--env NAME=VALUE, or NAME for its value here: a porter's library path."""
    guest = ["/bin/sh", "-c", f'test "$TETHER_TEST_LIB" = /opt/lib || exit 3; '
             f'exec {sys.executable} -m tether.guest']
    code, out, _ = _cli(["guest", "--scenario", "hello", "--", *guest], capsys)
    assert code == 1
    code, out, _ = _cli(["guest", "--scenario", "hello", "--env", "TETHER_TEST_LIB=/opt/lib",
                         "--", *guest], capsys)
    assert code == 0, out
    with pytest.raises(SystemExit, match="TETHER_TEST_UNSET: not set here"):
        cli.guest_environment(["TETHER_TEST_UNSET"])


def test_a_language_declares_its_program_extension(tmp_path: Path) -> None:
    (tmp_path / "hello").mkdir()
    (tmp_path / "hello" / "transcript.txt").write_text(
        (TRANSCRIPTS / "hello" / "transcript.txt").read_text())
    (tmp_path / "hello" / "program.cr").write_text('puts "hello"\nreturn 42\n')
    [t] = cli.load_all(tmp_path, ["hello"], {"cr": "crystal"})
    assert t.programs["crystal"].startswith("puts")


def test_without_cbor_diag_the_error_names_the_package(monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setitem(sys.modules, "cbor_diag", None)  # as if not installed
    assert cli.main(_conformance_args("guest", "--scenario", "hello")) == 2
    assert "pip install 'cbor-diag" in capsys.readouterr().err


def test_a_guest_that_answers_after_done_fails_late_frames() -> None:
    """R-STATE-4 / R-DONE-4: a guest that sends ERROR for the late RESULT
    with an id that was never in flight fails; one that exits passes."""
    answers = ("import struct, cbor2, socket\n"
               "s = socket.socket(fileno=3)\n"
               "def send(t, v):\n"
               "    p = cbor2.dumps(v)\n"
               "    s.sendall(struct.pack('>2sBBHI', b'TH', 1, t, 0, len(p)) + p)\n"
               "send(1, {'protocol': 1, 'implementation': 'x', 'languages': ['python'], "
               "'capabilities': []})\n"
               "s.recv(1 << 20)\n"
               "send(3, {'id': 1, 'name': 'add', 'args': [1, 2], 'kwargs': {}})\n"
               "send(6, {'error': {'type': 'TypeError', 'message': 'ended', "
               "'traceback': '', 'line': 4}})\n"
               "import time; time.sleep(0.5)\n"
               "send(8, {'code': 8, 'message': 'RESULT for unknown call 999'})\n"
               "time.sleep(1)\n")
    [late] = [t for t in TRANSCRIPT_LIST if t.scenario == "late-frames"]
    case = asyncio.run(check_guest(late, "python",
                                   command_guest([sys.executable, "-c", answers])))
    assert case.verdict == "fail"
    assert "expected the guest to close, got ERROR" in case.detail


def test_a_done_error_line_is_optional() -> None:
    """R-DONE-2: ``line`` is included when known; a transcript accepts both."""
    pattern = parse_transcript(
        '=== frames\n< DONE {"error": {"type": "Cancelled", "message": "<text>", '
        '"traceback": "<text>", "line?": "<int>"}}\n').steps[0].payload
    for error in ({"type": "Cancelled", "message": "m", "traceback": ""},
                  {"type": "Cancelled", "message": "m", "traceback": "", "line": 3}):
        match(pattern, {"error": error}, {})
    with pytest.raises(Mismatch):
        match(pattern, {"error": {"type": "Cancelled", "message": "m", "traceback": "",
                                  "line": "3"}}, {})


def test_maps_inside_values_match_in_order() -> None:
    """R-CBOR-2: a value's map keeps its order; the envelope's keys may come in any."""
    pattern = {"value": {"zeta": 1, "alpha": 2}, "id": 1}
    match(pattern, {"id": 1, "value": {"zeta": 1, "alpha": 2}}, {})
    with pytest.raises(Mismatch, match="order"):
        match(pattern, {"id": 1, "value": {"alpha": 2, "zeta": 1}}, {})


def test_every_must_and_should_is_checked_or_excepted() -> None:
    """Each MUST/SHOULD is cited by a vector, a transcript or a test, or
    listed in coverage-exceptions.txt with a reason; a listed one that is
    cited must leave the list."""
    reqs = coverage.collect()
    excepted = coverage.exceptions()
    unchecked = sorted(r.id for r in reqs.values()
                       if r.level != "MAY" and not r.cited and r.id not in excepted)
    assert not unchecked, f"cited by nothing and not in coverage-exceptions.txt: {unchecked}"
    stale = sorted(rid for rid in excepted if rid not in reqs or reqs[rid].cited)
    assert not stale, f"listed in coverage-exceptions.txt but cited or not defined: {stale}"
    assert all(excepted.values()), "every exception gives its reason"


def test_the_coverage_table_is_current() -> None:
    assert (coverage.TABLE.read_text(encoding="utf-8")
            == coverage.render(coverage.collect(), coverage.exceptions())), \
        "stale: run python -m tether.conformance.coverage"


def test_levels_come_from_the_key_words() -> None:
    spec = ("## 3. Transport\n**[R-A-1]** A guest MUST do it.\n**[R-A-2]** It SHOULD.\n"
            "### 3.1 More\n**[R-A-3]** It MAY.\n")
    found = coverage.requirements(spec)
    assert [(r.id, r.section, r.level) for r in found.values()] == [
        ("R-A-1", "3", "MUST"), ("R-A-2", "3", "SHOULD"), ("R-A-3", "3.1", "MAY")]


@pytest.mark.parametrize("language", ["python", "javascript"])
@pytest.mark.parametrize("transcript", TRANSCRIPT_LIST, ids=IDS)
def test_our_guests_pass_over_stdio(transcript: Transcript, language: str) -> None:
    """Spec §3.1: the same transcripts over stdin/stdout (R-STDIO-1, R-STDIO-4)."""
    _not_yet(transcript.scenario, language)
    case = asyncio.run(check_guest(transcript, language, our_guest(language), strict=True,
                                   transport="stdio"))
    assert case.verdict in ("pass", "skip", NOT_APPLICABLE), case.detail


@pytest.mark.parametrize("language", ["python", "javascript"])
@pytest.mark.parametrize("transcript", TRANSCRIPT_LIST, ids=IDS)
def test_the_standalone_guests_pass_over_stdio(transcript: Transcript, language: str) -> None:
    """``python -m tether.guest --stdio [--language javascript]``, as an
    image that is not the host runs it."""
    _not_yet(transcript.scenario, language)
    argv = [sys.executable, "-m", "tether.guest", "--stdio", "--language", language]
    case = asyncio.run(check_guest(transcript, language, command_guest(argv), strict=True,
                                   transport="stdio"))
    assert case.verdict in ("pass", "skip", NOT_APPLICABLE), case.detail


def _python_guest_behind(preamble: str) -> Any:
    """Our CPython guest started by a shell that first prints ``preamble``
    (a container's banner): R-STDIO-2."""
    def launch(workdir: str) -> GuestCommand:
        command = guest_command("python", workdir, Limits())
        return GuestCommand(("/bin/sh", "-c", f"printf '%s' '{preamble}'; exec \"$@\"", "sh",
                             *command.argv), command.env)
    return launch


def test_a_stdio_preamble_is_skipped_up_to_64_kib() -> None:
    """R-STDIO-2: bytes before the first frame are skipped when they are at
    most 64 KiB; a longer preamble is FRAME_MALFORMED."""
    [hello] = [t for t in TRANSCRIPT_LIST if t.scenario == "hello"]
    case = asyncio.run(check_guest(hello, "python", _python_guest_behind("Welcome!\\n"),
                                   transport="stdio"))
    assert case.verdict == "pass", case.detail
    case = asyncio.run(check_guest(hello, "python", _python_guest_behind("x" * 70_000),
                                   transport="stdio"))
    assert case.verdict == "fail"
    assert "FRAME_MALFORMED" in case.detail
