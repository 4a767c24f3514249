"""Recording transcripts from real runs of our host and guests.

    tether conformance record            # rewrite conformance/transcripts/
    tether conformance record --check    # fail if a recording differs

Each scenario (scenarios.py) is run for real; the bytes on fd 3 are tapped,
split into frames, and written with the fields that legitimately differ
between implementations replaced by placeholders.
"""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any

from tether.codec import FrameType
from tether.host import Sandbox, prepare_bindings
from tether.host.guests.languages import guest_command
from tether.host.guests.launch import start_guest
from tether.host.run.request import RunRequest
from tether.host.run.serving import Serving
from tether.host.run.session import Session

from . import TRANSCRIPTS
from .runner import WireTap, check_guest, host_result_summary, limits_for, our_guest, run_host
from .scenarios import BINDINGS, SCENARIOS, Scenario
from .transcript import (
    Step,
    Transcript,
    format_transcript,
    load_transcript,
    program_file,
)


class _Ids:
    def __init__(self) -> None:
        self.names: dict[int, str] = {}

    def __call__(self, call_id: int) -> str:
        self.names.setdefault(call_id, str(len(self.names) + 1))
        return f"<id:{self.names[call_id]}>"


def generalize(sender: str, frame_type: FrameType, envelope: Any, ids: _Ids | None,
               loose_error: bool, *, done_message: str | None = None,
               line_required: bool = False, known_line: int | None = None) -> Any:
    """Replace what may differ between implementations with placeholders.
    A DONE error's ``line`` is optional (R-LANG-3: where the guest knows it)
    unless ``line_required``; ``known_line`` is the line a guest that knows
    it reports, where the recorded guest did not."""
    value = dict(envelope)
    if frame_type is FrameType.HELLO:
        value.update(implementation="<text>", languages="<any>")
    elif frame_type is FrameType.RUN:
        value.update(source="<program>", language="<language>")
    elif frame_type in (FrameType.CALL, FrameType.RESULT) and ids is not None:
        value["id"] = ids(value["id"])
    elif frame_type is FrameType.DONE and "error" in value:
        error = dict(value["error"], traceback="<text>")
        if "line" in error and not line_required:  # R-LANG-3: included when known
            error["line?"] = error.pop("line")
        elif "line" not in error and known_line is not None:
            error["line?"] = known_line
        if done_message is not None:
            error["message"] = done_message
        if loose_error:
            error.update(type="<text>", message="<text>")
        value["error"] = error
    elif frame_type is FrameType.ERROR:
        value["message"] = "<text>"
    if frame_type is FrameType.DONE and "dropped" in value:  # reasons are each guest's words
        value["dropped"] = {name: "<text>" for name in value["dropped"]}
    return value


def _header(scenario: Scenario, modes: list[str]) -> Transcript:
    return Transcript(scenario=scenario.name, title=scenario.title,
                      requirements=list(scenario.requirements), modes=modes,
                      bindings=list(scenario.bindings), limits=dict(scenario.limits),
                      level=scenario.level, programs=dict(scenario.programs),
                      variables=scenario.variables, last_expression=scenario.last_expression,
                      applies=scenario.applies)


def _language(scenario: Scenario) -> str:
    return "python" if "python" in scenario.programs or not scenario.programs else \
        next(iter(scenario.programs))


#: What each kind of frame is for, noted at its first appearance in a transcript.
NOTES = {
    "HELLO": "the guest's first frame: version, languages, capabilities (R-HELLO-1)",
    "RUN": "the program, its bindings and limits; exactly one (R-RUN-1)",
    "CALL": "a binding call; ids are the guest's, strictly increasing (R-CALL-2)",
    "RESULT": "answers the CALL with the same id: value or error (R-RESULT-1)",
    "OUTPUT": "printed text, in the order written (R-OUTPUT-1)",
    "DONE": "how the program ended; the guest sends nothing after it (R-DONE-4)",
    "CANCEL": "the host asks the guest to stop the program (R-CANCEL-1)",
    "ERROR": "a connection error; its sender closes the connection (R-ERR-1)",
    "RAW": "bytes that are not a valid frame",
}


async def record(scenario: Scenario) -> Transcript:
    if scenario.kind == "program":
        t = await _record_program(scenario)
    elif scenario.kind == "host-script":
        t = await _record_host_script(scenario)
    else:
        t = await _record_guest_script(scenario)
    seen: set[str] = set()
    for step in t.steps:
        if step.kind in NOTES and step.kind not in seen:
            step.note = NOTES[step.kind]
            seen.add(step.kind)
    return t


async def _record_program(scenario: Scenario) -> Transcript:
    t = _header(scenario, ["guest", "host"])
    language = _language(scenario)
    tap = WireTap()
    limits = limits_for(t)
    guest = await start_guest(
        lambda workdir: guest_command(language, workdir, limits),
        Sandbox.PROCESS, limits)
    request = RunRequest(scenario.programs[language], language,
                         prepare_bindings({n: BINDINGS[n] for n in scenario.bindings}), limits,
                         t.variables, t.last_expression)
    session = Session(request, guest, serving=Serving(observer=tap))
    result = await session.run()
    ids = _Ids()
    for sender, frame_type, envelope, raw in tap.frames:
        unordered = scenario.unordered_calls and frame_type in (FrameType.CALL, FrameType.RESULT)
        t.steps.append(Step(sender, frame_type.name,
                            generalize(sender, frame_type, envelope, ids, scenario.loose_error,
                                       done_message=scenario.done_message,
                                       line_required=scenario.line_required,
                                       known_line=scenario.known_line),
                            unordered=unordered, hex=raw.hex()))
    t.steps.append(Step("guest", "EOF"))
    t.host_result = host_result_summary(result)
    if scenario.loose_error and "value" not in t.host_result:
        t.host_result.pop("output", None)
    return t


async def _record_host_script(scenario: Scenario) -> Transcript:
    t = _header(scenario, ["guest"])
    t.steps = [Step(s.sender, s.kind, s.payload, raw=s.raw, unordered=s.unordered,
                    optional=s.optional) for s in scenario.script]
    language = _language(scenario)
    case = await check_guest(t, language, our_guest(language), strict=True)
    if case.verdict != "pass":
        raise RecordError(f"{scenario.name}: our {language} guest does not pass: {case.detail}")
    sent = iter(case.frames)
    for step in t.steps:  # attach the bytes that crossed, in order
        if step.kind in ("EOF", "RAW"):
            if step.kind == "RAW":
                next(sent, None)
            continue
        crossed = next(sent, None)
        if crossed is not None:
            step.hex = crossed[1].hex()
    return t


async def _record_guest_script(scenario: Scenario) -> Transcript:
    t = _header(scenario, ["host"])
    t.steps = list(scenario.script)
    t.timeout = scenario.timeout
    result, tap = await run_host(t, "python", timeout=scenario.timeout)
    host_frames = [f for f in tap.frames if f[0] == "host"]
    guest_frames = iter(f for f in tap.frames if f[0] == "guest")
    steps: list[Step] = []
    for step in scenario.script:
        if step.sender == "host":
            if host_frames:
                _, frame_type, envelope, raw = host_frames.pop(0)
                steps.append(Step("host", frame_type.name,
                                  generalize("host", frame_type, envelope, None, False),
                                  hex=raw.hex()))
            continue
        recorded = Step(step.sender, step.kind, step.payload, raw=step.raw)
        if step.kind not in ("RAW", "EOF"):
            crossed = next(guest_frames, None)
            if crossed is not None:
                recorded.hex = crossed[3].hex()
        steps.append(recorded)
    for _, frame_type, envelope, raw in host_frames:  # answers the script did not foresee
        steps.append(Step("host", frame_type.name,
                          generalize("host", frame_type, envelope, None, False), hex=raw.hex()))
    t.steps = steps
    t.host_result = host_result_summary(result)
    return t


class RecordError(Exception):
    pass


def write(t: Transcript, directory: Path) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "transcript.txt").write_text(format_transcript(t), encoding="utf-8")
    for language, source in t.programs.items():
        program_file(directory, language).write_text(source.rstrip("\n") + "\n",
                                                     encoding="utf-8")


def normalized(t: Transcript) -> list[str]:
    """The transcript's lines with each unordered block sorted, for --check."""
    lines = format_transcript(Transcript(**{**t.__dict__, "programs": {}})).splitlines()
    out: list[str] = []
    block: list[str] = []
    for line in lines:
        if line[:2] in ("<~", ">~") or (block and line.startswith("  #")):
            if line.startswith("  #"):
                block[-1] += "\n" + line
            else:
                block.append(line)
            continue
        out += sorted(block)
        block = []
        out.append(line)
    return out + sorted(block)


async def record_all(names: list[str] | None, *, check: bool) -> list[str]:
    """Record (or, with check, compare); returns the problems found."""
    problems = []
    for scenario in SCENARIOS:
        if names and scenario.name not in names:
            continue
        fresh = await record(scenario)
        directory = TRANSCRIPTS / scenario.name
        if not check:
            write(fresh, directory)
            continue
        if not (directory / "transcript.txt").exists():
            problems.append(f"{scenario.name}: not recorded")
            continue
        committed = load_transcript(directory)
        want, got = normalized(committed), normalized(fresh)
        if want != got:
            diff = "\n".join(difflib.unified_diff(want, got, "committed", "recorded", lineterm=""))
            problems.append(f"{scenario.name}: the recording differs\n{diff}")
        for language, source in fresh.programs.items():
            if committed.programs.get(language, "").rstrip() != source.rstrip():
                problems.append(f"{scenario.name}: program.{language} differs")
        for language in committed.programs.keys() - fresh.programs.keys() - {"typescript"}:
            problems.append(f"{scenario.name}: program.{language} is not the scenario's")
    return problems
