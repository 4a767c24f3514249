"""Checking guests and hosts against transcripts, and recording transcripts.

Guest mode plays the host's side of a transcript against any guest program
(started with fd 3 wired, like a real host does) and matches what it sends.
Host mode starts our host engine with a scripted guest (replay_guest.py) that
plays the guest's side and matches what the host sends; the run's result is
then compared with the transcript's ``host-result``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import signal
import socket
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from tether.codec import (
    DEFAULT_MAX_DEPTH,
    ENVELOPE_DEPTH,
    MAX_MAX_DEPTH,
    NEED_DATA,
    FrameDecoder,
    FrameType,
    ProtocolError,
    decode_payload,
    encode_frame,
    encode_payload,
    envelope_depth,
)
from tether.codec.messages import MESSAGE_TYPES
from tether.host import Limits, RunResult, Sandbox, prepare_bindings
from tether.host.guests.languages import (
    GuestCommand,
    GuestSetup,
    Interpreters,
    guest_command,
    guest_env,
)
from tether.host.guests.launch import StartedGuest, new_workdir, start_guest
from tether.host.run.events import Observer
from tether.host.run.request import RunRequest
from tether.host.run.serving import Serving
from tether.host.run.session import Session

from .scenarios import BINDINGS
from .transcript import (
    Mismatch,
    Step,
    Transcript,
    diag,
    fresh_ids,
    match,
    program_file,
    substitute,
)

READ_TIMEOUT = 10.0


@dataclass
class CaseResult:
    scenario: str
    mode: str  # "guest" | "host"
    language: str
    verdict: str  # "pass" | "fail" | "skip" | "n/a" (NOT_APPLICABLE)
    detail: str = ""
    requirements: list[str] = field(default_factory=list)
    seconds: float = 0.0
    frames: list[tuple[str, bytes]] = field(default_factory=list)  # (sender, frame bytes)

    @property
    def case_id(self) -> str:
        return f"{self.mode}/{self.language}/{self.scenario}"


def limits_for(t: Transcript, timeout: float = 10.0) -> Limits:
    wire = {k: v for k, v in t.limits.items()}
    return Limits(timeout=timeout, kill_grace=0.2, **wire)


# -- guest mode -------------------------------------------------------------------


class _Wire:
    """The runner's end of fd 3: whole frames in, strictly decoded with the
    defaults until RUN is sent and with RUN's ceiling and depth after it
    (R-LIMIT-2, R-RUN-4)."""

    def __init__(self, sock: socket.socket | None, read_timeout: float = READ_TIMEOUT) -> None:
        self.sock = sock
        self.read_timeout = read_timeout
        self.decoder = FrameDecoder()
        self.max_depth = DEFAULT_MAX_DEPTH
        self.frames: list[tuple[str, bytes]] = []
        self._eof = False
        self._back: list[tuple[int, Any] | None] = []

    async def read(self) -> tuple[int, Any] | None:
        """The next frame as (type, envelope), or None at end of stream."""
        if self._back:
            return self._back.pop()
        loop = asyncio.get_running_loop()
        while True:
            frame = self.decoder.next_frame()
            if frame is not NEED_DATA:
                raw = encode_frame(frame.type, frame.payload)
                self.frames.append(("guest", raw))
                if frame.type >= 0x80:
                    continue
                frame_type = FrameType(frame.type)
                envelope = decode_payload(frame.payload,
                                          self.max_depth + envelope_depth(frame_type))
                MESSAGE_TYPES[frame_type](envelope)  # schema check (raises)
                return frame.type, envelope
            if self._eof:
                self.decoder.check_eof()
                return None
            try:
                data = await asyncio.wait_for(self._recv(loop), self.read_timeout)
            except ConnectionError:
                data = b""
            if not data:
                self._eof = True
            else:
                self.decoder.feed(data)

    async def _recv(self, loop: asyncio.AbstractEventLoop) -> bytes:
        assert self.sock is not None
        return await loop.sock_recv(self.sock, 65536)

    def shutdown(self) -> None:
        """The host's EOF: shut down the sending direction."""
        with contextlib.suppress(OSError):
            assert self.sock is not None
            self.sock.shutdown(socket.SHUT_WR)

    def unread(self, frame: tuple[int, Any] | None) -> None:
        self._back.append(frame)

    def apply_run(self, run: Any) -> None:
        """The limits of the RUN just sent, where it has usable ones."""
        limits = run.get("limits") if isinstance(run, dict) else None
        if isinstance(limits, dict):
            if type(limits.get("frame_bytes")) is int:
                self.decoder.max_frame_bytes = limits["frame_bytes"]
            if type(limits.get("max_depth")) is int:
                self.max_depth = limits["max_depth"]

    async def send(self, data: bytes) -> None:
        self.frames.append(("host", data))
        with contextlib.suppress(ConnectionError):  # a guest may close first
            await self._send(data)

    async def _send(self, data: bytes) -> None:
        assert self.sock is not None
        await asyncio.get_running_loop().sock_sendall(self.sock, data)


#: The longest preamble skipped before a stdio guest's first frame (R-STDIO-2).
MAX_PREAMBLE = 64 * 1024
_HELLO_START = b"TH\x01\x01"


class _StdioWire(_Wire):
    """The stdio transport (spec §3.1): frames to the guest's stdin, from its
    stdout, after a preamble of at most 64 KiB that is skipped and kept as
    raw output (R-STDIO-2)."""

    def __init__(self, process: asyncio.subprocess.Process,
                 read_timeout: float = READ_TIMEOUT) -> None:
        super().__init__(None, read_timeout)
        self.process = process
        self.preamble = b""
        self._started = False

    async def _recv(self, loop: asyncio.AbstractEventLoop) -> bytes:
        assert self.process.stdout is not None
        if self._started:
            return await self.process.stdout.read(65536)
        while True:  # until the first frame's 4 bytes: the rest is preamble
            chunk = await self.process.stdout.read(65536)
            self.preamble += chunk
            found = self.preamble.find(_HELLO_START)
            if found >= 0 and found <= MAX_PREAMBLE:
                self._started = True
                data, self.preamble = self.preamble[found:], self.preamble[:found]
                return data
            if not chunk or len(self.preamble) > MAX_PREAMBLE + len(_HELLO_START):
                # Unskippable: the bytes go to the decoder, which rejects them.
                self._started = True
                data, self.preamble = self.preamble, b""
                return data

    async def _send(self, data: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(data)
        await self.process.stdin.drain()

    def shutdown(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()


async def _start_stdio(command: GuestCommand, workdir: str) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        *command.argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE, env={**command.env, "TETHER_TRANSPORT": "stdio"},
        cwd=workdir, start_new_session=True)


async def _stop_stdio(process: asyncio.subprocess.Process) -> str:
    """Kill the guest's group; what it wrote to stderr."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    await process.wait()
    assert process.stderr is not None
    return (await process.stderr.read(65536)).decode(errors="replace")


def _host_bytes(step: Step, bindings: dict[str, Any]) -> bytes:
    if step.kind == "RAW":
        return step.raw
    return encode_frame(FrameType[step.kind], encode_payload(substitute(step.payload, bindings)))


async def _expect(wire: _Wire, step: Step, bindings: dict[str, Any], strict: bool) -> None:
    frame = await wire.read()
    if step.kind == "EOF":
        if frame is not None:
            raise Mismatch(f"expected the guest to close, got {FrameType(frame[0]).name} "
                           f"{diag(frame[1])}")
        return
    if frame is None or FrameType(frame[0]).name != step.kind:
        got = "end of stream" if frame is None else FrameType(frame[0]).name
        if step.optional and not strict:
            wire.unread(frame)
            return
        raise Mismatch(f"expected {step.kind}, got {got}")
    envelope = frame[1]
    if step.kind == "OUTPUT":  # R-OUTPUT-1: a guest may split or join output
        want = step.payload.get("text", "")
        while isinstance(envelope.get("text"), str) and len(envelope["text"]) < len(want):
            more = await wire.read()
            if more is None or more[0] != FrameType.OUTPUT or \
                    more[1].get("stream") != envelope.get("stream"):
                wire.unread(more)
                break
            envelope = {**envelope, "text": envelope["text"] + more[1]["text"]}
    match(step.payload, envelope, bindings)


async def _expect_any_order(wire: _Wire, steps: list[Step], bindings: dict[str, Any]) -> None:
    frames = []
    for _ in steps:
        frame = await wire.read()
        if frame is None:
            raise Mismatch("the guest closed the stream inside an unordered block")
        frames.append((FrameType(frame[0]), frame[1]))
    _match_any_order(steps, frames, bindings)


def _joined_output(steps: Sequence[Step]) -> list[Step]:
    """Consecutive OUTPUT steps of one stream as one step with their joined
    text: a guest may split or join output differently (R-OUTPUT-1)."""
    out: list[Step] = []
    for step in steps:
        previous = out[-1] if out else None
        if (previous is not None and step.kind == previous.kind == "OUTPUT"
                and step.sender == previous.sender == "guest"
                and not (step.unordered or step.optional or previous.unordered
                         or previous.optional)
                and isinstance(step.payload, dict) and isinstance(previous.payload, dict)
                and step.payload.get("stream") == previous.payload.get("stream")):
            text = previous.payload.get("text", "") + step.payload.get("text", "")
            out[-1] = replace(previous, payload={**previous.payload, "text": text})
        else:
            out.append(step)
    return out


def _blocks(steps: Sequence[Step]) -> list[list[Step]]:
    """Consecutive unordered steps form one block; every other step is alone."""
    blocks: list[list[Step]] = []
    for step in steps:
        if step.unordered and blocks and blocks[-1][0].unordered:
            blocks[-1].append(step)
        else:
            blocks.append([step])
    return blocks


GuestLauncher = Callable[[str], GuestCommand]


#: The verdict of a case that is not this guest's: another mode's scenario,
#: or another language's own case. Such cases are neither run nor listed.
NOT_APPLICABLE = "n/a"


def _verdict_before_running(t: Transcript, mode: str, language: str, strict: bool,
                            extension: str | None = None) -> tuple[str, str]:
    """("", "") when ``t`` runs for this mode and language, else the verdict
    it gets without running and why."""
    if mode not in t.modes:
        return NOT_APPLICABLE, f"{t.modes[0]}-mode scenario"
    if t.programs and language not in t.programs:
        if not t.for_every_guest:
            return NOT_APPLICABLE, f"a language's own case: {t.applies}"
        where = program_file(t.programs_directory or t.directory or Path(t.scenario), language,
                             extension)
        return "fail", (f"no {language} program: every guest runs this scenario; write "
                        f"{where} (or keep it in --programs DIR), or list "
                        f"{mode}/{language}/{t.scenario} in --known-failures")
    if t.level == "SHOULD" and not strict:
        return "skip", "SHOULD-level: run with --strict"
    return "", ""


async def check_guest(t: Transcript, language: str, launch: GuestLauncher, *,
                      strict: bool = False, extension: str | None = None,
                      transport: str = "fd3", read_timeout: float = READ_TIMEOUT) -> CaseResult:
    """Play the host's side of ``t`` against the guest ``launch`` starts.
    ``extension``: of the language's program files, where
    :data:`~.transcript.EXTENSIONS` does not know it. ``transport``: ``fd3``,
    or ``stdio`` (spec §3.1: the guest is started with TETHER_TRANSPORT=stdio).
    ``read_timeout``: how long to wait for each of the guest's frames."""
    verdict, detail = _verdict_before_running(t, "guest", language, strict, extension)
    result = CaseResult(t.scenario, "guest", language, verdict, detail, t.requirements)
    if verdict:
        return result
    started = time.monotonic()
    workdir: str | None = None
    guest: StartedGuest | None = None
    process: asyncio.subprocess.Process | None = None
    wire: _Wire
    if transport == "stdio":
        workdir = await new_workdir()
        process = await _start_stdio(launch(workdir), workdir)
        wire = _StdioWire(process, read_timeout)
    else:  # started as the host starts its guests, under the process profile
        guest = await start_guest(launch, Sandbox.PROCESS, Limits())
        wire = _Wire(guest.child.channel, read_timeout)
    bindings: dict[str, Any] = {"program": t.programs.get(language, ""), "language": language}
    index = 0
    try:
        for block in _blocks(_joined_output(t.steps)):
            guests = [s for s in block if s.sender == "guest"]
            hosts = [s for s in block if s.sender == "host"]
            if len(block) > 1:  # any order: take theirs, then send ours
                await _expect_any_order(wire, guests, bindings)
                for step in hosts:
                    await wire.send(_host_bytes(step, bindings))
            elif hosts:
                if hosts[0].kind == "EOF":
                    wire.shutdown()
                else:
                    await wire.send(_host_bytes(hosts[0], bindings))
                    if hosts[0].kind == "RUN":
                        wire.apply_run(substitute(hosts[0].payload, bindings))
            else:
                await _expect(wire, guests[0], bindings, strict)
            index += len(block)
        result.verdict = "pass"
    except (Mismatch, ProtocolError, TimeoutError, KeyError) as exc:
        result.verdict = "fail"
        what = "timed out waiting" if isinstance(exc, TimeoutError) else str(exc)
        result.detail = f"step {index + 1}: {what}"
    finally:
        stderr = ""
        if guest is not None:
            await guest.process.terminate(0.2, kill_now=True)
            guest.child.drain_pipes()
            stderr = guest.child.raw_stderr.text()
            await guest.process.release(guest.workdir)
        if process is not None:
            stderr = await _stop_stdio(process)
        if result.verdict == "fail" and stderr:
            result.detail += f"\nguest stderr: {stderr[-800:]}"
        if workdir is not None:
            shutil.rmtree(workdir, ignore_errors=True)
    result.frames = wire.frames
    result.seconds = time.monotonic() - started
    return result


def our_guest(language: str) -> GuestLauncher:
    interpreters = Interpreters()
    return lambda workdir: guest_command(language, workdir, Limits(), GuestSetup(interpreters))


def command_guest(argv: Sequence[str], env: Mapping[str, str] | None = None) -> GuestLauncher:
    """A guest started by an arbitrary command (argv[0] found on PATH), with
    the environment tether gives its own guests and ``env`` on top (a
    porter's library path)."""
    path = shutil.which(argv[0]) or argv[0]
    return lambda workdir: GuestCommand((path, *argv[1:]), guest_env(workdir, env))


# -- host mode ----------------------------------------------------------------------


def _steps_json(t: Transcript) -> list[dict[str, Any]]:
    return [{"sender": s.sender, "kind": s.kind,
             "payload": diag(s.payload) if s.kind not in ("RAW", "EOF") else None,
             "raw": s.raw.hex()} for s in t.steps]


class WireTap(Observer):
    """Splits the bytes the host engine sent and received on fd 3 into frames,
    in the order they crossed. Bytes that are not frames (a scripted guest's
    garbage) stop the split for that direction."""

    def __init__(self) -> None:
        self.decoders = {"in": FrameDecoder(), "out": FrameDecoder()}
        self.broken: set[str] = set()
        self.frames: list[tuple[str, FrameType, Any, bytes]] = []  # sender, type, envelope, raw

    def wire(self, direction: str, data: bytes) -> None:
        if direction in self.broken:
            return
        decoder = self.decoders[direction]
        decoder.feed(data)
        try:
            while (frame := decoder.next_frame()) is not NEED_DATA:
                if frame.type >= 0x80:
                    continue
                envelope = decode_payload(frame.payload, MAX_MAX_DEPTH + ENVELOPE_DEPTH)
                self.frames.append(("guest" if direction == "in" else "host",
                                    FrameType(frame.type), envelope,
                                    encode_frame(frame.type, frame.payload)))
        except ProtocolError:
            self.broken.add(direction)


async def run_host(t: Transcript, language: str, *,
                   timeout: float = 10.0) -> tuple[RunResult, WireTap]:
    """Our host engine against the replay guest playing ``t``'s guest side."""
    tap = WireTap()
    with tempfile.TemporaryDirectory(prefix="tether-conformance-") as scratch:
        spec = Path(scratch) / "steps.json"
        program = t.programs.get(language, "")
        spec.write_text(json.dumps({
            "steps": _steps_json(t), "bindings": {"program": program, "language": language},
        }))
        command = GuestCommand(
            (sys.executable, "-m", "tether.conformance.replay_guest", str(spec)),
            {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"})
        limits = limits_for(t, timeout)
        guest = await start_guest(lambda _: command, Sandbox.PROCESS, limits)
        request = RunRequest(program, language,
                             prepare_bindings({n: BINDINGS[n] for n in t.bindings}), limits,
                             t.variables, t.last_expression)
        session = Session(request, guest, serving=Serving(observer=tap))
        result = await session.run()
    return result, tap


def match_host_frames(t: Transcript, language: str, tap: WireTap) -> None:
    """Raise Mismatch unless the host sent what ``t``'s host steps say."""
    sent = [(f[1], f[2]) for f in tap.frames if f[0] == "host"]
    bindings: dict[str, Any] = {
        "program": t.programs.get(language, ""), "language": language,
        **fresh_ids(s.payload for s in t.steps if s.sender == "guest" and s.payload is not None)}
    position = 0
    for block in _blocks(t.steps):
        expected = [s for s in block if s.sender == "host"]
        got = sent[position:position + len(expected)]
        if len(got) < len(expected):
            raise Mismatch(f"expected {expected[len(got)].kind} from the host, it sent nothing")
        for step in expected if len(block) == 1 else []:
            frame_type, envelope = got[0]
            if frame_type.name != step.kind:
                raise Mismatch(f"expected {step.kind}, the host sent {frame_type.name}")
            match(step.payload, envelope, bindings)
        if len(block) > 1:
            _match_any_order(expected, got, bindings)
        position += len(expected)
    if position < len(sent):
        frame_type, envelope = sent[position]
        raise Mismatch(f"the host sent an unexpected {frame_type.name} {diag(envelope)}")


def _match_any_order(steps: list[Step], frames: list[tuple[FrameType, Any]],
                     bindings: dict[str, Any]) -> None:
    left = list(steps)
    for frame_type, envelope in frames:
        for candidate in left:
            trial = dict(bindings)
            if frame_type.name != candidate.kind:
                continue
            try:
                match(candidate.payload, envelope, trial)
            except Mismatch:
                continue
            bindings.update(trial)
            left.remove(candidate)
            break
        else:
            raise Mismatch(f"unexpected {frame_type.name} {diag(envelope)}")


def host_result_summary(result: RunResult) -> dict[str, Any]:
    summary: dict[str, Any] = {"status": str(result.status)}
    if result.value is not None:
        summary["value"] = result.value
    if result.output:
        summary["output"] = result.output
    if result.limit:
        summary["limit"] = result.limit
    if result.variables is not None:
        summary["variables"] = result.variables
        if result.dropped_variables:
            summary["dropped"] = sorted(result.dropped_variables)
    return summary


async def check_host(t: Transcript, language: str, *, strict: bool = False) -> CaseResult:
    verdict, detail = _verdict_before_running(t, "host", language, strict)
    case = CaseResult(t.scenario, "host", language, verdict, detail, t.requirements)
    if verdict:
        return case
    started = time.monotonic()
    result, tap = await run_host(t, language, timeout=t.timeout)
    case.seconds = time.monotonic() - started
    case.frames = [(f[0], f[3]) for f in tap.frames]
    try:
        match_host_frames(t, language, tap)
        match(t.host_result, host_result_summary(result), {})
    except Mismatch as exc:
        case.verdict = "fail"
        case.detail = str(exc)
        return case
    case.verdict = "pass"
    return case
