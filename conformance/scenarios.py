"""The scenarios the transcripts are recorded from.

Three kinds:

* ``program`` — a program (per language) run by our host and our guest; both
  sides are recorded. Checked in guest mode and host mode.
* ``host-script`` — our guest against a scripted host that sends what a real
  host never would (garbage, wrong ids, CANCEL at a chosen moment); the
  guest's answers are recorded. Checked in guest mode.
* ``guest-script`` — our host against a scripted guest; the host's answers
  and its result are recorded. Checked in host mode.

Scripts are transcript steps (see transcript.py); guest frames in a
host-script are patterns the recorder checks our guest against.
"""

from __future__ import annotations

import asyncio
import struct
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tether.codec import encode_frame, encode_payload

from .transcript import Step

#: Small limits keep the transcripts short and make the cap scenarios cheap.
LIMITS = {"output_bytes": 4096, "value_bytes": 4096, "frame_bytes": 65536, "max_depth": 32,
          "max_calls_in_flight": 8}


# -- the bindings every scenario may use (host mode calls them for real) ---------

async def add(a: int, b: int) -> int:
    return a + b


async def echo(value: Any) -> Any:
    return value


async def fail(message: str) -> None:
    raise ValueError(message)


async def hang() -> None:
    await asyncio.sleep(3600)


async def log(text: str) -> None:
    return None


BINDINGS: dict[str, Callable[..., Any]] = {
    "add": add, "echo": echo, "fail": fail, "hang": hang, "log": log,
}


@dataclass(frozen=True)
class Scenario:
    name: str
    title: str
    requirements: tuple[str, ...]
    kind: str = "program"
    programs: dict[str, str] = field(default_factory=dict)
    bindings: tuple[str, ...] = ()
    limits: dict[str, int] = field(default_factory=lambda: dict(LIMITS))
    timeout: float = 10.0
    unordered_calls: bool = False  # concurrent calls: CALLs and RESULTs in any order
    loose_error: bool = False  # DONE error type and message vary by language
    level: str = "MUST"
    script: tuple[Step, ...] = ()
    variables: dict[str, Any] | None = None  # RUN's variables (spec §7.9)
    last_expression: bool = False


def g(kind: str, payload: Any = None, *, optional: bool = False) -> Step:
    return Step("guest", kind, payload, optional=optional)


def h(kind: str, payload: Any = None) -> Step:
    return Step("host", kind, payload)


def raw(sender: str, data: bytes) -> Step:
    return Step(sender, "RAW", raw=data)


def frame(type_: int, item: Any, *, version: int = 1) -> bytes:
    payload = encode_payload(item)
    return struct.pack(">2sBBHI", b"TH", version, type_, 0, len(payload)) + payload


HELLO_PATTERN = {"protocol": 1, "implementation": "<text>", "languages": "<any>",
                 "capabilities": []}
REPLAY_HELLO = {"protocol": 1, "implementation": "tether-conformance-replay",
                "languages": ["python", "javascript", "typescript"], "capabilities": []}


def run_frame(bindings: list[str], *, language: str = "<language>",
              limits: dict[str, int] | None = None) -> dict[str, Any]:
    return {"source": "<program>", "language": language,
            "bindings": [{"name": b} for b in bindings], "limits": limits or LIMITS}


def connection_error(code: int) -> Step:
    # R-ERR-1: the ERROR is a SHOULD, closing is the MUST.
    return g("ERROR", {"code": code, "message": "<text>"}, optional=True)


HANG = {"python": "await hang()", "javascript": "await hang()"}
CALL_HANG = g("CALL", {"id": "<id:1>", "name": "hang", "args": [], "kwargs": {}})


def _guest_violation(name: str, title: str, reqs: tuple[str, ...], code: int,
                     *attack: Step, programs: dict[str, str] | None = None,
                     bindings: tuple[str, ...] = ()) -> Scenario:
    return Scenario(name, title, reqs, kind="host-script", programs=programs or HANG,
                    bindings=bindings or ("hang",),
                    script=(g("HELLO", HELLO_PATTERN), *attack, connection_error(code), g("EOF")))


def _after_run(*steps: Step) -> tuple[Step, ...]:
    return (h("RUN", run_frame(["hang"])), CALL_HANG, *steps)


SCENARIOS: tuple[Scenario, ...] = (
    # -- programs: recorded from our host and our guest ------------------------
    Scenario("hello", "Print and return a value, no calls",
             ("R-HELLO-1", "R-RUN-1", "R-RUN-2", "R-OUTPUT-1", "R-DONE-1", "R-TERM-1"),
             programs={"python": 'print("hello")\nreturn 42',
                       "javascript": 'console.log("hello")\nreturn 42'}),
    Scenario("return-nothing", "A program that returns nothing returns null",
             ("R-RUN-2", "R-DONE-1"),
             programs={"python": "x = 1", "javascript": "const x = 1"}),
    Scenario("sequential-calls", "Two binding calls in a row",
             ("R-CALL-1", "R-CALL-2", "R-RESULT-1", "R-RESULT-2", "R-STATE-2"),
             bindings=("add",),
             programs={"python": "x = await add(1, 2)\nreturn await add(x, 3)",
                       "javascript": "const x = await add(1, 2)\nreturn await add(x, 3)"}),
    Scenario("concurrent-calls", "Three calls in flight at once, answered in any order",
             ("R-CALL-2", "R-CALL-6", "R-STATE-2"), bindings=("add",), unordered_calls=True,
             programs={
                 "python": "import asyncio\n"
                           "return await asyncio.gather(add(1, 2), add(3, 4), add(5, 6))",
                 "javascript": "return await Promise.all([add(1, 2), add(3, 4), add(5, 6)])",
             }),
    Scenario("variables", "Variables go in as top-level names and come back with the new ones",
             ("R-VARS-1", "R-VARS-2", "R-VARS-3", "R-VARS-4", "R-VARS-5"), bindings=("add",),
             limits={**LIMITS, "variables_bytes": 1024},
             variables={"rows": [1, 2, 3], "unit": "km"},
             programs={
                 "python": "import math\ntotal = await add(sum(rows), 0)\n_scratch = 1\n"
                           "when = object()\nbig = 'x' * 2000\n"
                           "def helper():\n    pass\nreturn f'{total} {unit}'",
                 "javascript": "const total = await add(rows.reduce((a, b) => a + b, 0), 0)\n"
                               "let _scratch = 1\nconst when = new Date(0)\n"
                               "const big = 'x'.repeat(2000)\n"
                               "function helper() {}\nreturn `${total} ${unit}`",
             }),
    Scenario("last-expression", "With last_expression, a last bare expression is the result",
             ("R-VARS-7",), last_expression=True,
             programs={"python": "x = 20\nx * 2 + 2", "javascript": "const x = 20\nx * 2 + 2"}),
    Scenario("keyword-arguments", "Keyword arguments travel in kwargs",
             ("R-CALL-1",), bindings=("add",),
             programs={"python": "return await add(1, b=2)"}),
    Scenario("value-model", "Every kind of value crosses both ways unchanged",
             ("R-VAL-1", "R-CBOR-2", "R-CBOR-5"), bindings=("echo",),
             programs={
                 "python": 'return await echo([None, True, -5, 2**70, 1.5, "é", b"\\x00\\x01", '
                           '{"k": [1]}])',
                 "javascript": 'return await echo([null, true, -5, 2n ** 70n, 1.5, "é", '
                               'new Uint8Array([0, 1]), {k: [1]}])',
             }),
    Scenario("binding-error-caught", "A binding's error is caught by the program",
             ("R-RESULT-2", "R-RESULT-3"), bindings=("fail",),
             programs={
                 "python": 'try:\n    await fail("bad input")\nexcept BindingError as e:\n'
                           "    return [e.type, e.code]",
                 "javascript": 'try { await fail("bad input") }\n'
                               "catch (e) { return [e.type, e.code] }",
             }),
    Scenario("binding-error-uncaught", "A binding's error ends the program",
             ("R-RESULT-2", "R-DONE-2"), bindings=("fail",),
             programs={"python": 'await fail("bad input")',
                       "javascript": 'await fail("bad input")'}),
    Scenario("output-interleaving", "stdout and stderr keep their order",
             ("R-OUTPUT-1",),
             programs={"python": "import sys\nprint('a')\nprint('b', file=sys.stderr)\nprint('c')",
                       "javascript": "console.log('a')\nconsole.error('b')\nconsole.log('c')"}),
    Scenario("output-before-call", "Buffered output is sent before a CALL",
             ("R-OUTPUT-1",), bindings=("add",),
             programs={"python": "print('x', end='')\nawait add(1, 1)\nprint('y')",
                       "javascript": "process.stdout.write('x')\nawait add(1, 1)\n"
                                     "console.log('y')"}),
    Scenario("program-error", "An exception with the program's line",
             ("R-DONE-1", "R-DONE-2"), loose_error=True,
             programs={"python": "x = 1\nraise ValueError('no')",
                       "javascript": "const x = 1\nthrow new Error('no')"}),
    Scenario("syntax-error", "A program that does not compile",
             ("R-DONE-1", "R-DONE-2"), loose_error=True,
             programs={"python": "x = 1\nreturn (", "javascript": "const x = 1\nreturn )"}),
    Scenario("value-too-large", "The return value exceeds value_bytes",
             ("R-DONE-3", "R-VAL-1"), loose_error=True,
             programs={"python": "return 'x' * 5000", "javascript": "return 'x'.repeat(5000)"}),
    # -- scripted host: what our guest does with a host's violations -------------
    _guest_violation("bad-magic", "The host sends bytes that are not a frame",
                     ("R-FRAME-2", "R-ERR-1"), 1, raw("host", b"GET / HTTP/1.1\r\n")),
    _guest_violation("frame-too-large", "A declared length past the ceiling",
                     ("R-FRAME-5", "R-LIMIT-2"), 4,
                     raw("host", struct.pack(">2sBBHI", b"TH", 1, 2, 0, 2**32 - 1))),
    _guest_violation("frame-version", "A frame of version 2",
                     ("R-FRAME-3",), 2, raw("host", frame(2, {"reason": ""}, version=2))),
    _guest_violation("unknown-type", "A reserved frame type",
                     ("R-FRAME-6",), 3, raw("host", encode_frame(0x80, b"") + frame(0x09, {}))),
    _guest_violation("malformed-payload", "A RUN with a trailing byte",
                     ("R-CBOR-1", "R-CBOR-9"), 5,
                     raw("host", encode_frame(2, encode_payload(
                         {"source": "", "language": "python", "bindings": [],
                          "limits": LIMITS}) + b"\x00"))),
    _guest_violation("invalid-message", "A RUN without limits",
                     ("R-CBOR-10",), 6,
                     raw("host", frame(2, {"source": "", "language": "python", "bindings": []}))),
    _guest_violation("unexpected-message", "A RESULT before RUN",
                     ("R-STATE-1",), 7,
                     raw("host", frame(4, {"id": 1, "value": None}))),
    _guest_violation("unknown-call-id", "A RESULT for a call that was never made",
                     ("R-RESULT-1", "R-STATE-2"), 8,
                     *_after_run(h("RESULT", {"id": 999, "value": None}))),
    _guest_violation("truncated", "The host's stream ends inside a frame",
                     ("R-TRANS-3",), 9,
                     raw("host", frame(2, {"source": ""})[:12]), h("EOF")),
    _guest_violation("language-unsupported", "RUN asks for a language the guest lacks",
                     ("R-RUN-1",), 10,
                     h("RUN", run_frame([], language="cobol"))),
    Scenario("host-eof", "The host closes the stream while the program runs",
             ("R-TRANS-4", "R-DONE-5"), kind="host-script", programs=HANG, bindings=("hang",),
             script=(g("HELLO", HELLO_PATTERN), *_after_run(h("EOF")),
                     g("DONE", {"error": {"type": "Cancelled", "message": "<text>",
                                          "traceback": "<text>"}}, optional=True),
                     g("EOF"))),
    Scenario("cancel", "CANCEL stops the program",
             ("R-CANCEL-1", "R-DONE-5", "R-STATE-2"), kind="host-script", programs=HANG,
             bindings=("hang",),
             script=(g("HELLO", HELLO_PATTERN), *_after_run(h("CANCEL", {"reason": "test"})),
                     g("DONE", {"error": {"type": "Cancelled", "message": "<text>",
                                          "traceback": "<text>"}}, optional=True),
                     g("EOF"))),
    Scenario("cancel-wind-down", "After CANCEL the program may still print and call",
             ("R-STATE-3", "R-CANCEL-1"), kind="host-script", bindings=("hang", "log"),
             programs={"python": "import asyncio\ntry:\n    await hang()\n"
                                 "except asyncio.CancelledError:\n    print('cleanup')\n"
                                 "    try:\n        await log('bye')\n"
                                 "    except BindingError as e:\n        print(e.type)\n"
                                 "    raise"},
             script=(g("HELLO", HELLO_PATTERN), h("RUN", run_frame(["hang", "log"])), CALL_HANG,
                     h("CANCEL", {"reason": "test"}),
                     g("OUTPUT", {"stream": "stdout", "text": "cleanup\n"}),
                     g("CALL", {"id": "<id:2>", "name": "log", "args": ["bye"], "kwargs": {}}),
                     h("RESULT", {"id": "<id:2>", "error": {"code": 106, "type": "Cancelled",
                                                          "message": "the run is ending"}}),
                     g("OUTPUT", {"stream": "stdout", "text": "Cancelled\n"}),
                     g("DONE", {"error": {"type": "Cancelled", "message": "<text>",
                                          "traceback": "<text>"}}),
                     g("EOF"))),
    Scenario("late-frames", "RESULT and CANCEL that cross DONE are accepted",
             ("R-STATE-4", "R-DONE-4"), kind="host-script", bindings=("add",),
             programs={"python": "import asyncio\nasyncio.ensure_future(add(1, 2))\n"
                                 "await asyncio.sleep(0.1)\nreturn 1",
                       "javascript": "add(1, 2)\nawait new Promise((r) => setTimeout(r, 100))\n"
                                     "return 1"},
             script=(g("HELLO", HELLO_PATTERN), h("RUN", run_frame(["add"])),
                     g("CALL", {"id": "<id:1>", "name": "add", "args": [1, 2], "kwargs": {}}),
                     g("DONE", {"value": 1}),
                     h("RESULT", {"id": "<id:1>", "value": 3}), h("CANCEL", {"reason": "late"}),
                     g("EOF"))),
    # -- scripted guest: what our host does with a guest's violations ------------
    Scenario("guest-garbage", "The guest sends garbage instead of HELLO",
             ("R-FRAME-2", "R-ERR-1", "R-TERM-1"), kind="guest-script",
             script=(raw("guest", b"Traceback (most recent call last):\n"),
                     h("ERROR", {"code": 1, "message": "<text>"}))),
    Scenario("guest-hello-version", "The guest speaks protocol 2",
             ("R-HELLO-2", "R-VER-1"), kind="guest-script",
             script=(g("HELLO", {**REPLAY_HELLO, "protocol": 2}),
                     h("ERROR", {"code": 2, "message": "<text>"}))),
    Scenario("guest-error-first", "The guest reports an error before HELLO",
             ("R-ERR-1", "R-ERR-2"), kind="guest-script",
             script=(g("ERROR", {"code": 11, "message": "cannot start"}),)),
    Scenario("guest-wrong-language", "The guest cannot run the program's language",
             ("R-RUN-1",), kind="guest-script",
             script=(g("HELLO", {**REPLAY_HELLO, "languages": ["brainfuck"]}),
                     h("ERROR", {"code": 10, "message": "<text>"}))),
    Scenario("guest-second-hello", "A second HELLO during the run",
             ("R-STATE-1",), kind="guest-script",
             script=(g("HELLO", REPLAY_HELLO), h("RUN", "<any>"), g("HELLO", REPLAY_HELLO),
                     h("ERROR", {"code": 7, "message": "<text>"}))),
    Scenario("guest-unknown-binding", "A CALL to a binding that RUN did not offer",
             ("R-CALL-5",), kind="guest-script", bindings=("add",),
             script=(g("HELLO", REPLAY_HELLO), h("RUN", "<any>"),
                     g("CALL", {"id": 1, "name": "rm", "args": [], "kwargs": {}}),
                     h("RESULT", "<any>"), g("DONE", {"value": None}))),
    Scenario("guest-call-id-reused", "A CALL id that does not increase",
             ("R-CALL-2",), kind="guest-script", bindings=("add",),
             script=(g("HELLO", REPLAY_HELLO), h("RUN", "<any>"),
                     g("CALL", {"id": 5, "name": "add", "args": [1, 2], "kwargs": {}}),
                     h("RESULT", "<any>"),
                     g("CALL", {"id": 5, "name": "add", "args": [1, 2], "kwargs": {}}),
                     h("ERROR", {"code": 8, "message": "<text>"}))),
    Scenario("guest-too-many-calls", "More calls in flight than max_calls_in_flight",
             ("R-CALL-3",), kind="guest-script", bindings=("add", "hang"),
             limits={**LIMITS, "max_calls_in_flight": 1},
             script=(g("HELLO", REPLAY_HELLO), h("RUN", "<any>"),
                     g("CALL", {"id": 1, "name": "hang", "args": [], "kwargs": {}}),
                     g("CALL", {"id": 2, "name": "add", "args": [1, 2], "kwargs": {}}),
                     h("RESULT", "<any>"), g("DONE", {"value": None}))),
    Scenario("guest-oversized-frame", "The guest declares a frame past the ceiling",
             ("R-FRAME-5",), kind="guest-script",
             script=(g("HELLO", REPLAY_HELLO), h("RUN", "<any>"),
                     raw("guest", struct.pack(">2sBBHI", b"TH", 1, 5, 0, 2**32 - 1)),
                     h("ERROR", {"code": 4, "message": "<text>"}))),
    Scenario("guest-output-cap", "Output past output_bytes loses its middle; the run goes on",
             ("R-OUTPUT-3",), kind="guest-script", limits={**LIMITS, "output_bytes": 5},
             script=(g("HELLO", REPLAY_HELLO), h("RUN", "<any>"),
                     g("OUTPUT", {"stream": "stdout", "text": "hello world"}),
                     g("DONE", {"value": 1}))),
    Scenario("guest-error-mid-run", "The guest reports an error during the run",
             ("R-ERR-2",), kind="guest-script",
             script=(g("HELLO", REPLAY_HELLO), h("RUN", "<any>"),
                     g("ERROR", {"code": 11, "message": "out of paper"}))),
    Scenario("guest-eof-mid-run", "The guest's stream ends during the run",
             ("R-TRANS-5",), kind="guest-script",
             script=(g("HELLO", REPLAY_HELLO), h("RUN", "<any>"), g("EOF"))),
    Scenario("guest-silent", "A guest that never answers is timed out and cancelled",
             ("R-CANCEL-1", "R-TERM-2"), kind="guest-script", timeout=0.5,
             script=(g("HELLO", REPLAY_HELLO), h("RUN", "<any>"),
                     h("CANCEL", {"reason": "timeout"}))),
)

BY_NAME = {s.name: s for s in SCENARIOS}
