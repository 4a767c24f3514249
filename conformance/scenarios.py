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

from .transcript import EVERY_GUEST, Step

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


async def scale(x: int, factor: int = 10) -> int:
    return x * factor


async def opaque() -> Any:
    return object()  # outside the value model: the host answers INVALID_VALUE


BINDINGS: dict[str, Callable[..., Any]] = {
    "add": add, "echo": echo, "fail": fail, "hang": hang, "log": log, "scale": scale,
    "opaque": opaque,
    "BindingError": echo,  # a binding named like a guest's own name (R-RUN-6)
    "print": echo,  # a binding named like a built-in of many languages (R-LANG-9)
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
    done_message: str | None = None  # a pattern for DONE's error message (type kept)
    level: str = "MUST"
    script: tuple[Step, ...] = ()
    variables: dict[str, Any] | None = None  # RUN's variables (spec §7.9)
    last_expression: bool = False
    applies: str = EVERY_GUEST  # else: the languages whose own case this is
    line_required: bool = False  # DONE's error line: every language knows it (R-LANG-3)
    known_line: int | None = None  # the line a guest reports where it knows it (R-LANG-3)


def by_guest(kind: str, payload: Any = None, *, optional: bool = False) -> Step:
    return Step("guest", kind, payload, optional=optional)


def by_host(kind: str, payload: Any = None) -> Step:
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


def nest(depth: int) -> Any:
    value: Any = 0
    for _ in range(depth):
        value = [value]
    return value


def _with_flags(data: bytes, flags: int) -> bytes:
    return data[:4] + struct.pack(">H", flags) + data[6:]


def run_frame(bindings: list[str], *, language: str = "<language>",
              limits: dict[str, int] | None = None) -> dict[str, Any]:
    return {"source": "<program>", "language": language,
            "bindings": [{"name": b} for b in bindings], "limits": limits or LIMITS}


def connection_error(code: int) -> Step:
    # R-ERR-1: the ERROR is a SHOULD, closing is the MUST.
    return by_guest("ERROR", {"code": code, "message": "<text>"}, optional=True)


HANG = {"python": "await hang()", "javascript": "await hang()"}
#: R-DONE-2: ``line`` is optional ("line?"), present when the guest knows it.
CANCELLED_DONE = {"error": {"type": "Cancelled", "message": "<text>", "traceback": "<text>",
                            "line?": "<int>"}}
CALL_HANG = by_guest("CALL", {"id": "<id:1>", "name": "hang", "args": [], "kwargs": {}})


def _guest_violation(name: str, title: str, reqs: tuple[str, ...], code: int,
                     *attack: Step, programs: dict[str, str] | None = None,
                     bindings: tuple[str, ...] = ()) -> Scenario:
    return Scenario(name, title, reqs, kind="host-script", programs=programs or HANG,
                    bindings=bindings or ("hang",),
                    script=(by_guest("HELLO", HELLO_PATTERN), *attack, connection_error(code),
                            by_guest("EOF")))


def _after_run(*steps: Step) -> tuple[Step, ...]:
    return (by_host("RUN", run_frame(["hang"])), CALL_HANG, *steps)


def _script(*steps: Step, programs: dict[str, str] | None = None) -> dict[str, Any]:
    """A host-script scenario's program and script, with HELLO first."""
    return {"programs": programs or HANG, "script": (by_guest("HELLO", HELLO_PATTERN), *steps)}


QUEUE_PROGRAMS = {
    "python": "import asyncio\na = asyncio.ensure_future(echo(1))\n"
              "b = asyncio.ensure_future(add(1, 2))\nawait asyncio.sleep(0.1)\n"
              "print('waiting')\nreturn [await a, await b]",
    "javascript": "const a = echo(1)\nconst b = add(1, 2)\n"
                  "await new Promise((r) => setTimeout(r, 100))\nconsole.log('waiting')\n"
                  "return [await a, await b]",
}


#: CANCEL payloads (after RUN, while a call is in flight) that break one rule
#: of §5 each: a guest that reads one anyway stops the program (a DONE) or
#: finds an unknown key (INVALID_MESSAGE) instead of MALFORMED_PAYLOAD.
PAYLOAD_VIOLATIONS = (
    # name, rule, what, payload (hex): {"reason": "", ...}
    ("duplicate-key", "R-CBOR-4", "the key reason twice", "a266726561736f6e6066726561736f6e60"),
    ("not-shortest", "R-CBOR-2", "the reason's length in two bytes",
     "a166726561736f6e7800"),
    ("indefinite", "R-CBOR-2", "an indefinite-length text", "a166726561736f6e7f60ff"),
    ("nan-payload", "R-CBOR-3", "a half-precision NaN with a payload beside the reason",
     "a266726561736f6e606178f97e01"),
    ("bignum-small", "R-CBOR-3", "a bignum that fits in 64 bits beside the reason",
     "a266726561736f6e606178c24101"),
    ("tag", "R-CBOR-5", "tag 1 (a date) beside the reason", "a266726561736f6e606178c11a5f5e1000"),
    ("undefined", "R-CBOR-6", "the simple value undefined beside the reason",
     "a266726561736f6e606178f7"),
    ("invalid-text", "R-CBOR-7", "a reason that is not valid UTF-8", "a166726561736f6e62c328"),
    ("key-not-text", "R-CBOR-4", "an integer map key beside the reason",
     "a266726561736f6e600101"),
)


SCENARIOS: tuple[Scenario, ...] = (
    # -- programs: recorded from our host and our guest ------------------------
    Scenario("hello", "Print and return a value, no calls",
             ("R-HELLO-1", "R-RUN-1", "R-RUN-2", "R-OUTPUT-1", "R-DONE-1", "R-TERM-1"),
             programs={"python": 'print("hello")\nreturn 42',
                       "javascript": 'console.log("hello")\nreturn 42'}),
    Scenario("return-nothing", "A program that returns nothing returns null, even when it "
             "ends with an expression", ("R-RUN-2", "R-RUN-7", "R-DONE-1"),
             programs={"python": "x = 1\nx", "javascript": "const x = 1\nx"}),
    Scenario("return-through-cleanup", "A return inside the language's error handling and "
             "cleanup leaves them as a function's return does: nothing is caught, the "
             "cleanup sees no error", ("R-RUN-2", "R-DONE-1", "R-LANG-10"),
             applies="a language whose error handling or cleanup is a statement that a "
                     "return can leave (R-LANG-10)",
             programs={
                 "python": "class Cleanup:\n    def __enter__(self):\n        return self\n"
                           "    def __exit__(self, kind, value, traceback):\n"
                           "        print('cleanup saw', 'an error' if kind else 'no error')\n"
                           "with Cleanup():\n    try:\n        return 'returned'\n"
                           "    except BaseException:\n        print('caught')\n",
                 "javascript": "let error = null\ntry {\n  try {\n    return 'returned'\n"
                               "  } catch (e) {\n    error = e\n    console.log('caught')\n  }\n"
                               "} finally {\n"
                               "  console.log('cleanup saw', error ? 'an error' : 'no error')\n}\n",
             }),
    Scenario("exit-zero", "A program that exits with status 0 ends as one that returned "
             "nothing; what it printed before is kept", ("R-DONE-8", "R-DONE-1"),
             programs={"python": "import sys\nprint('leaving')\nsys.exit(0)\nprint('not reached')",
                       "javascript": "console.log('leaving')\nprocess.exit(0)\n"
                                     "console.log('not reached')"}),
    Scenario("exit-status", "A program that exits with another status ends with a SystemExit "
             "error whose message is the status", ("R-DONE-8", "R-DONE-2"),
             programs={"python": "print('failing')\nexit(3)",
                       "javascript": "console.log('failing')\nprocess.exit(3)"}),
    Scenario("end-waits-threads", "The program ends when its language's runtime would consider "
             "the script finished: a Python thread is joined", ("R-DONE-9", "R-DONE-1"),
             applies="a language whose runtime joins the threads a script leaves running "
                     "(Python)",
             programs={"python": "import threading, time\n"
                                 "threading.Thread(target=lambda: (time.sleep(0.2), "
                                 "print('from a thread'))).start()"}),
    Scenario("end-waits-calls", "The program ends when its language's runtime would consider "
             "the script finished: a JavaScript call not awaited settles and its continuation "
             "runs", ("R-DONE-9", "R-DONE-1"), bindings=("add",),
             applies="a language whose runtime waits for the I/O a script leaves in flight "
                     "(JavaScript)",
             programs={"javascript": "async function main() {\n  const x = await add(1, 2)\n"
                                     "  console.log('sum', x)\n}\nmain()"}),
    Scenario("bytes-own-their-buffer", "A decoded Uint8Array owns its bytes: it is not a view "
             "of the frame it came in", ("R-JS-2",), bindings=("echo",),
             applies="a language whose byte values can be views of a larger buffer "
                     "(JavaScript's Uint8Array, R-JS-2)",
             programs={"javascript": "const bytes = await echo(new Uint8Array([1, 2]))\n"
                                     "return [bytes.length, bytes.buffer.byteLength]"}),
    Scenario("js-end-waits-timers", "The program ends when its language's runtime would "
             "consider the script finished: a JavaScript timer still pending fires first",
             ("R-DONE-9", "R-DONE-1"),
             applies="a language whose runtime runs the timers a script leaves pending "
                     "before it exits (JavaScript)",
             programs={"javascript": "setTimeout(() => console.log('later'), 20)\n"
                                     "console.log('now')\nreturn 1"}),
    Scenario("js-unhandled-rejection", "A JavaScript rejection that no handler takes ends the "
             "run with its error, though nothing awaited it", ("R-DONE-9", "R-DONE-2"),
             applies="a language whose unhandled promise rejections end a script "
                     "(JavaScript)",
             programs={"javascript": "async function main() {\n  await null\n"
                                     "  throw new RangeError('main failed')\n}\nmain()"}),
    Scenario("js-exit-code", "A JavaScript program that sets process.exitCode and ends as "
             "usual exits with that status, after its exit listeners", ("R-DONE-8",),
             applies="a language whose script sets its exit status without exiting "
                     "(JavaScript's process.exitCode)",
             programs={"javascript": "process.on('exit', (code) => console.log('exit', code))\n"
                                     "process.exitCode = 2\nreturn 'ignored'"}),
    Scenario("js-static-imports", "A JavaScript program written as an ES module imports "
             "built-in modules; the lines after its imports keep their numbers",
             ("R-JS-3", "R-DONE-2"),
             applies="JavaScript and TypeScript (R-JS-3)",
             programs={"javascript": "import { join } from 'node:path'\nimport * as os from 'os'\n"
                                     "console.log(join('a', 'b'), typeof os.cpus)\n"
                                     "throw new TypeError('line 4')"}),
    Scenario("js-import-a-file", "A program is one file: importing a path ends the run "
             "before the program runs, at the import's line", ("R-JS-3", "R-DONE-2"),
             applies="JavaScript and TypeScript (R-JS-3)",
             programs={"javascript": "console.log('not reached')\n"
                                     "import { helper } from './helpers.js'"}),
    Scenario("js-changed-built-ins", "A JavaScript program that deletes and replaces built-ins "
             "the guest could use still prints, calls and returns", ("R-JS-4", "R-CALL-1"),
             applies="JavaScript and TypeScript (R-JS-4)",
             bindings=("add",),
             programs={"javascript": "delete globalThis.JSON\ndelete globalThis.Math\n"
                                     "Array.prototype.push = () => { throw new Error('push') }\n"
                                     "Map.prototype.get = () => { throw new Error('get') }\n"
                                     "console.log('still printing')\n"
                                     "return [await add(1, 2), { a: [1] }]"}),
    Scenario("integral-float", "An integral float stays a float, an integer an integer",
             ("R-MAP-2", "R-CBOR-2"),
             applies="a language whose numbers keep integers and floats apart (R-MAP-2: "
                     "Python, Ruby, Lua 5.3 and later)",
             programs={"python": "return [3.0, 10 / 2, 3, 10 // 2, -0.0]"}),
    Scenario("throw-a-value", "A thrown value that is not an exception object",
             ("R-DONE-6", "R-MAP-6", "R-LANG-2", "R-LANG-3"),
             applies="a language that can raise a value that is not an exception object "
                     "(JavaScript, Lua, Perl)", known_line=1,
             programs={"javascript": "throw 'oops'"}),
    Scenario("sequential-calls", "Two binding calls in a row",
             ("R-CALL-1", "R-CALL-2", "R-RESULT-1", "R-RESULT-2", "R-STATE-2"),
             bindings=("add",),
             programs={"python": "x = await add(1, 2)\nreturn await add(x, 3)",
                       "javascript": "const x = await add(1, 2)\nreturn await add(x, 3)"}),
    Scenario("call-trailing-undefined", "A JavaScript call's trailing undefined arguments "
             "are left out of CALL, so the binding's defaults apply", ("R-JS-1", "R-CALL-1"),
             bindings=("scale",),
             applies="a language with a value for a missing argument apart from null "
                     "(JavaScript's undefined, R-JS-1)",
             programs={"javascript": "return await scale(2, undefined)"}),
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
             ("R-CALL-1", "R-MAP-7"), bindings=("add",),
             applies="a language with keyword arguments, or whose guest offers kw (R-MAP-7)",
             programs={"python": "return await add(1, b=2)"}),
    Scenario("value-model", "Every kind of value crosses both ways unchanged, maps in order",
             ("R-VAL-1", "R-CBOR-2", "R-CBOR-5", "R-MAP-3", "R-MAP-4", "R-MAP-5"),
             bindings=("echo",),
             programs={
                 "python": 'return await echo([None, True, -5, 2**70, 1.5, "é", b"\\x00\\x01", '
                           '{"k": [1]}, {"zeta": 1, "alpha": 2, "mid": 3}, [], {}, '
                           '[1, None, None]])',
                 "javascript": 'return await echo([null, true, -5, 2n ** 70n, 1.5, "é", '
                               'new Uint8Array([0, 1]), {k: [1]}, {zeta: 1, alpha: 2, mid: 3}, '
                               '[], {}, [1, null, null]])',
             }),
    Scenario("binding-error-caught", "A binding's error is caught by the program",
             ("R-RESULT-2", "R-RESULT-3", "R-RESULT-5"), bindings=("fail",),
             programs={
                 "python": 'try:\n    await fail("bad input")\nexcept BindingError as e:\n'
                           "    return [e.type, e.message, e.code, e.binding]",
                 "javascript": 'try { await fail("bad input") }\n'
                               "catch (e) { return [e.type, e.message, e.code, e.binding] }",
             }),
    Scenario("binding-error-uncaught", "A binding's error ends the program",
             ("R-RESULT-2", "R-RESULT-5", "R-DONE-2"), bindings=("fail",),
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
             ("R-DONE-1", "R-DONE-2", "R-LANG-3"), loose_error=True, line_required=True,
             programs={"python": "x = 1\nraise ValueError('no')",
                       "javascript": "const x = 1\nthrow new Error('no')"}),
    Scenario("syntax-error", "A program that does not compile: a SyntaxError at its line",
             ("R-DONE-1", "R-DONE-2", "R-DONE-6", "R-LANG-4"), done_message="<text>",
             line_required=True,
             programs={"python": "x = 1\nreturn (", "javascript": "const x = 1\nreturn )"}),
    Scenario("value-too-large", "The return value exceeds value_bytes",
             ("R-DONE-3", "R-VAL-1"), loose_error=True,
             programs={"python": "return 'x' * 5000", "javascript": "return 'x'.repeat(5000)"}),
    Scenario("return-outside-model", "A return value outside the value model names its path",
             ("R-VAL-2", "R-VAL-3"), done_message="<prefix:return value $.rows[1].when: >",
             programs={"python": "import datetime\n"
                                 "return {'rows': [1, {'when': datetime.date(2026, 1, 1)}]}",
                       "javascript": "return {rows: [1, {when: new Date(0)}]}"}),
    Scenario("arguments-outside-model", "An argument outside the value model: no CALL, an "
             "error at the call naming the argument and the path",
             ("R-VAL-2", "R-VAL-3"), bindings=("add",),
             programs={"python": "import datetime\ntry:\n"
                                 "    await add(1, {'a b': [datetime.date(2026, 1, 1)]})\n"
                                 "except TypeError as e:\n"
                                 "    return [type(e).__name__, str(e).split(': ')[:2]]",
                       "javascript": "try {\n  await add(1, {'a b': [new Date(0)]})\n"
                                     "} catch (e) {\n"
                                     "  return [e.name, e.message.split(': ').slice(0, 2)]\n}"}),
    Scenario("arguments-too-large", "Arguments over value_bytes: no CALL, an error at the call",
             ("R-CALL-4",), bindings=("echo",),
             programs={"python": "try:\n    await echo('x' * 5000)\nexcept ValueError as e:\n"
                                 "    return 'value_bytes' in str(e)",
                       "javascript": "try {\n  await echo('x'.repeat(5000))\n} catch (e) {\n"
                                     "  return e instanceof RangeError && "
                                     "e.message.includes('value_bytes')\n}"}),
    Scenario("output-invalid-text", "Invalid text in output becomes U+FFFD, one per maximal "
             "subpart of bad UTF-8 and one per lone surrogate", ("R-OUTPUT-2", "R-OUTPUT-4"),
             programs={"python": 'print("a\\udcff\\udcfeb")\nprint("c\\udce2d")\n'
                                 'print("e\\ud800f")',
                       "javascript": "process.stdout.write(Buffer.from([0x61, 0xff, 0xfe, 0x62, "
                                     "0x0a]))\nprocess.stdout.write(Buffer.from([0x63, 0xe2, "
                                     "0x82, 0x64, 0x0a]))\nconsole.log('e\\ud800f')"}),
    Scenario("output-split", "Output larger than a frame is split to fit the ceiling",
             ("R-OUTPUT-2", "R-LIMIT-3", "R-RUN-4"),
             limits={**LIMITS, "output_bytes": 100_000},
             programs={"python": "print('x' * 70000)",
                       "javascript": "console.log('x'.repeat(70000))"}),
    # A guest that captures fd 1 (R-OUTPUT-5) sends such bytes as OUTPUT
    # instead: its programs are raw-output's.
    Scenario("raw-stdout", "Bytes written to fd 1 below print never reach the frames",
             ("R-TRANS-2", "R-STDIO-1"),
             applies="a guest that leaves what is written below its language's streams to "
                     "reach the host raw (R-OUTPUT-5 is a SHOULD; the JavaScript guest)",
             programs={"javascript": "require('fs').writeSync(1, 'raw\\n')\n"
                                     "console.log('framed')\nreturn 1"}),
    Scenario("raw-output", "Bytes written to fd 1 below print are output, before the text "
             "printed after them", ("R-OUTPUT-5", "R-TRANS-2"), level="SHOULD",
             programs={"python": "import os\nprint('printed')\nos.write(1, b'raw\\n')\n"
                                 "print('framed')\nreturn 1",
                       "javascript": "console.log('printed')\n"
                                     "require('fs').writeSync(1, 'raw\\n')\n"
                                     "console.log('framed')\nreturn 1"}),
    Scenario("binding-shadows-guest-name", "A binding named like one of the guest's own names "
             "hides it", ("R-RUN-6",), bindings=("BindingError",),
             programs={"python": "return await BindingError('mine')",
                       "javascript": "return await BindingError('mine')"}),
    Scenario("error-too-large", "A program error too large for a frame is shortened to fit",
             ("R-DONE-7", "R-LIMIT-3", "R-MAP-6"), loose_error=True,
             programs={"python": "raise ValueError('x' * 100000)",
                       "javascript": "throw new Error('x'.repeat(100000))"}),
    # -- the language-neutral rules of spec §15, one program per language ---------
    Scenario("end-waits", "The program ends when its language's runtime would consider the "
             "script finished: work it left running finishes before DONE (a Python thread, "
             "a JavaScript call not awaited, a handle of spawn)", ("R-DONE-9", "R-LANG-12"),
             bindings=("add",),
             programs={"python": "import threading, time\ntotal = await add(1, 2)\n"
                                 "threading.Thread(target=lambda: (time.sleep(0.1), "
                                 "print('sum', total))).start()",
                       "javascript": "async function main() {\n  const total = await add(1, 2)\n"
                                     "  console.log('sum', total)\n}\nmain()"}),
    Scenario("numbers", "Numbers keep their kind in every language: integers as integers, "
             "fractions, -0, and infinities as floats", ("R-MAP-2", "R-LANG-5"),
             programs={"python": "return [1 + 2, -7, 1 / 2, -0.0, 1e300, float('inf')]",
                       "javascript": "return [1 + 2, -7, 1 / 2, -0, 1e300, Infinity]"}),
    Scenario("call-default-argument", "A call sends the arguments the program passed and no "
             "others: the binding's default applies on the host", ("R-LANG-15", "R-CALL-1"),
             bindings=("scale",),
             programs={"python": "return await scale(2)",
                       "javascript": "return await scale(2)"}),
    Scenario("output-unicode", "Printed text is sent as the characters printed, whatever "
             "the language's strings are", ("R-LANG-6", "R-OUTPUT-1", "R-LANG-1"),
             programs={"python": "print('caf\u00e9 \u2603 \U0001f600')",
                       "javascript": "console.log('caf\u00e9 \u2603 \U0001f600')"}),
    Scenario("binding-shadows-built-in", "A binding named like a built-in of many languages "
             "(print) is in scope under that name", ("R-RUN-6", "R-LANG-9"),
             bindings=("print",),
             programs={"python": "return await print('mine')",
                       "javascript": "return await print('mine')"}),
    Scenario("result-outside-model", "A binding whose result is outside the value model: "
             "the host answers INVALID_VALUE, which the program catches",
             ("R-RESULT-4", "R-RESULT-2", "R-RESULT-5"), bindings=("opaque",),
             programs={"python": "try:\n    await opaque()\nexcept BindingError as e:\n"
                                 "    return [e.code, e.binding]",
                       "javascript": "try {\n  await opaque()\n} catch (e) {\n"
                                     "  return [e.code, e.binding]\n}"}),
    Scenario("value-depth", "A value nested max_depth deep crosses; one level more is an "
             "error at the call (no CALL) and in the return value, at the path where it "
             "passes the bound", ("R-VAL-1", "R-VAL-2", "R-VAL-3"), bindings=("echo",),
             done_message="<prefix:return value $" + "[0]" * 32 + ": >",
             programs={"python": "value = 0\nfor _ in range(32):\n    value = [value]\n"
                                 "value = await echo(value)\ndeeper = [value]\ntry:\n"
                                 "    await echo(deeper)\nexcept TypeError:\n"
                                 "    print('TypeError at the call')\nreturn deeper",
                       "javascript": "let value = 0\nfor (let i = 0; i < 32; i++) value = [value]\n"
                                     "value = await echo(value)\nconst deeper = [value]\n"
                                     "try {\n  await echo(deeper)\n} catch (e) {\n"
                                     "  if (e instanceof TypeError) "
                                     "console.log('TypeError at the call')\n}\n"
                                     "return deeper"}),
    Scenario("return-too-many-items", "A return value that holds more than value_items data "
             "items, within value_bytes: an error with code VALUE_TOO_LARGE",
             ("R-VAL-1", "R-DONE-3"), loose_error=True,
             programs={"python": "return [0] * 2000",
                       "javascript": "return new Array(2000).fill(0)"}),
    Scenario("return-lone-surrogate", "Text with a lone surrogate is outside the value model: "
             "an error naming its path, never replaced", ("R-VAL-2", "R-CBOR-7"),
             done_message="<prefix:return value $[1]: >",
             programs={"python": "return ['a', 'b\\ud800']",
                       "javascript": "return ['a', 'b\\ud800']"}),
    Scenario("error-type-too-long", "An error type over 256 bytes is cut to 256, ending "
             "with an ellipsis", ("R-DONE-7", "R-MAP-6"), done_message="x",
             programs={"python": f"class {'E' * 300}(Exception):\n    pass\n\n"
                                 f"raise {'E' * 300}('x')",
                       "javascript": f"class {'E' * 300} extends Error {{}}\n\n\n"
                                     f"throw new {'E' * 300}('x')"}),
    Scenario("variables-syntax-error", "A program that does not compile still sends the "
             "variables back, unchanged", ("R-VARS-3", "R-DONE-6"),
             limits={**LIMITS, "variables_bytes": 1024}, variables={"rows": [1, 2, 3]},
             done_message="<text>", line_required=True,
             programs={"python": "x = 1\nreturn (", "javascript": "const x = 1\nreturn )"}),
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
                     *_after_run(by_host("RESULT", {"id": 999, "value": None}))),
    _guest_violation("truncated", "The host's stream ends inside a frame",
                     ("R-TRANS-3",), 9,
                     raw("host", frame(2, {"source": ""})[:12]), by_host("EOF")),
    _guest_violation("language-unsupported", "RUN asks for a language the guest lacks",
                     ("R-RUN-1",), 10,
                     by_host("RUN", run_frame([], language="cobol"))),
    Scenario("host-eof", "The host closes the stream while the program runs",
             ("R-TRANS-4", "R-TRANS-6", "R-STATE-5", "R-DONE-5"), kind="host-script",
             programs=HANG, bindings=("hang",),
             script=(by_guest("HELLO", HELLO_PATTERN), *_after_run(by_host("EOF")),
                     by_guest("DONE", CANCELLED_DONE, optional=True),
                     by_guest("EOF"))),
    Scenario("cancel", "CANCEL stops the program",
             ("R-CANCEL-1", "R-DONE-5", "R-STATE-2"), kind="host-script", programs=HANG,
             bindings=("hang",),
             script=(by_guest("HELLO", HELLO_PATTERN),
                     *_after_run(by_host("CANCEL", {"reason": "test"})),
                     by_guest("DONE", CANCELLED_DONE, optional=True),
                     by_guest("EOF"))),
    Scenario("cancel-where", "CANCEL while the program waits on a call: DONE says where it was",
             ("R-CANCEL-4", "R-DONE-2"), kind="host-script", level="SHOULD", bindings=("hang",),
             programs={"python": "async def ask():\n    return await hang()\n\nawait ask()",
                       "javascript": "async function ask() {\n  return await hang()\n}\n"
                                     "await ask()"},
             script=(by_guest("HELLO", HELLO_PATTERN),
                     *_after_run(by_host("CANCEL", {"reason": "timeout"})),
                     by_guest("DONE", {"error": {"type": "Cancelled", "message": "<text>",
                                          "traceback": "<text>", "line": 2}}),
                     by_guest("EOF"))),
    Scenario("cancel-wind-down", "After CANCEL the program may still print and call",
             ("R-STATE-3", "R-CANCEL-1", "R-CANCEL-2", "R-RESULT-5"), kind="host-script",
             bindings=("hang", "log"),
             programs={"python": "import asyncio\ntry:\n    await hang()\n"
                                 "except asyncio.CancelledError:\n    print('cleanup')\n"
                                 "    try:\n        await log('bye')\n"
                                 "    except BindingError as e:\n        print(e.type)\n"
                                 "    raise",
                       "javascript": "try {\n  await hang()\n} catch (e) {\n"
                                     "  if (!(e instanceof Cancelled)) throw e\n"
                                     "  console.log('cleanup')\n"
                                     "  try {\n    await log('bye')\n"
                                     "  } catch (e2) {\n    console.log(e2.type)\n  }\n"
                                     "  throw e\n}"},
             script=(by_guest("HELLO", HELLO_PATTERN), by_host("RUN", run_frame(["hang", "log"])),
                     CALL_HANG,
                     by_host("CANCEL", {"reason": "test"}),
                     by_guest("OUTPUT", {"stream": "stdout", "text": "cleanup\n"}),
                     by_guest("CALL", {"id": "<id:2>", "name": "log", "args": ["bye"],
                                       "kwargs": {}}),
                     by_host("RESULT", {"id": "<id:2>", "error": {"code": 106, "type": "Cancelled",
                                                          "message": "the run is ending"}}),
                     by_guest("OUTPUT", {"stream": "stdout", "text": "Cancelled\n"}),
                     by_guest("DONE", CANCELLED_DONE),
                     by_guest("EOF"))),
    Scenario("cancel-swallowed", "A program that catches the cancellation and returns: "
             "its DONE is the value", ("R-DONE-5", "R-CANCEL-2"), kind="host-script",
             bindings=("hang",),
             **_script(*_after_run(by_host("CANCEL", {"reason": "test"})),
                       by_guest("DONE", {"value": "swallowed"}), by_guest("EOF"),
                       programs={"python": "import asyncio\ntry:\n    await hang()\n"
                                           "except asyncio.CancelledError:\n"
                                           "    return 'swallowed'",
                                 "javascript": "try {\n  await hang()\n} catch (e) {\n"
                                               "  return 'swallowed'\n}"})),
    Scenario("late-frames", "RESULT and CANCEL that cross DONE, and a RESULT for no call, are "
             "ignored: nothing is sent after DONE (a program that fails ends with its call "
             "in flight)",
             ("R-STATE-4", "R-DONE-4", "R-RESULT-1"), kind="host-script", bindings=("add",),
             programs={"python": "import asyncio\nasyncio.ensure_future(add(1, 2))\n"
                                 "await asyncio.sleep(0.1)\nraise TypeError('ended')",
                       "javascript": "add(1, 2)\nawait new Promise((r) => setTimeout(r, 100))\n"
                                     "// the call is still in flight\n"
                                     "throw new TypeError('ended')"},
             script=(by_guest("HELLO", HELLO_PATTERN), by_host("RUN", run_frame(["add"])),
                     by_guest("CALL", {"id": "<id:1>", "name": "add", "args": [1, 2],
                                       "kwargs": {}}),
                     by_guest("DONE", {"error": {"type": "TypeError", "message": "ended",
                                                 "traceback": "<text>", "line": 4}}),
                     by_host("RESULT", {"id": "<id:1>", "value": 3}),
                     by_host("CANCEL", {"reason": "late"}),
                     by_host("RESULT", {"id": 999, "value": None}),
                     by_guest("EOF"))),
    Scenario("call-queue", "Calls beyond max_calls_in_flight wait in the guest for a RESULT",
             ("R-CALL-3", "R-OUTPUT-1"), kind="host-script", bindings=("echo", "add"),
             limits={**LIMITS, "max_calls_in_flight": 1},
             **_script(by_host("RUN", run_frame(["echo", "add"],
                                          limits={**LIMITS, "max_calls_in_flight": 1})),
                       by_guest("CALL", {"id": "<id:1>", "name": "echo", "args": [1],
                                         "kwargs": {}}),
                       by_guest("OUTPUT", {"stream": "stdout", "text": "waiting\n"}),
                       by_host("RESULT", {"id": "<id:1>", "value": 1}),
                       by_guest("CALL", {"id": "<id:2>", "name": "add", "args": [1, 2],
                                         "kwargs": {}}),
                       by_host("RESULT", {"id": "<id:2>", "value": 3}),
                       by_guest("DONE", {"value": [1, 3]}), by_guest("EOF"),
                       programs=QUEUE_PROGRAMS)),
    Scenario("extension-mid-run", "An extension frame nobody negotiated is skipped mid-run",
             ("R-FRAME-7",), kind="host-script", bindings=("hang",),
             **_script(*_after_run(raw("host", encode_frame(0x80, b"\xff\x00")),
                                   by_host("RESULT", {"id": "<id:1>", "value": None})),
                       by_guest("DONE", {"value": None}), by_guest("EOF"))),
    _guest_violation("run-limits-invalid", "RUN with value_bytes above frame_bytes - 1024",
                     ("R-LIMIT-1", "R-CBOR-10"), 6,
                     by_host("RUN", run_frame(["hang"],
                                              limits={**LIMITS, "value_bytes": 65536 - 1023}))),
    _guest_violation("ceiling-after-run", "After RUN the ceiling is RUN's frame_bytes",
                     ("R-RUN-4", "R-LIMIT-2", "R-FRAME-5"), 4,
                     *_after_run(raw("host", struct.pack(">2sBBHI", b"TH", 1, 4, 0, 65537)))),
    _guest_violation("depth-after-run", "After RUN the depth bound is RUN's max_depth",
                     ("R-RUN-4", "R-CBOR-8"), 5,
                     *_after_run(by_host("RESULT", {"id": "<id:1>", "value": nest(33)}))),
    _guest_violation("wrong-role", "The host sends a frame only a guest sends",
                     ("R-FRAME-8", "R-STATE-1"), 7,
                     *_after_run(raw("host", frame(3, {"id": 1, "name": "hang", "args": [],
                                                       "kwargs": {}})))),
    _guest_violation("check-order", "A frame that breaks two rules: the schema is checked "
                     "before the state", ("R-ORDER-1",), 6,
                     raw("host", frame(4, {"id": 0, "value": None}))),
    _guest_violation("frame-flags", "A CANCEL that would stop the program, with a reserved "
                     "flag set: the guest closes instead", ("R-FRAME-4",), 1,
                     *_after_run(raw("host", _with_flags(frame(7, {"reason": "test"}), 1)))),
    _guest_violation("second-run", "A second RUN while the program runs",
                     ("R-STATE-1", "R-RUN-5"), 7,
                     *_after_run(by_host("RUN", run_frame(["hang"])))),
    Scenario("second-cancel", "A second CANCEL while the program winds down from the first",
             ("R-STATE-1",), kind="host-script", bindings=("hang",),
             **_script(by_host("RUN", run_frame(["hang"])), CALL_HANG,
                       by_host("CANCEL", {"reason": "test"}),
                       by_guest("CALL", {"id": "<id:2>", "name": "hang", "args": [],
                                         "kwargs": {}}),
                       by_host("CANCEL", {"reason": "again"}),
                       connection_error(7), by_guest("EOF"),
                       programs={"python": "import asyncio\ntry:\n    await hang()\n"
                                           "except asyncio.CancelledError:\n"
                                           "    await hang()",
                                 "javascript": "try {\n  await hang()\n} catch (e) {\n"
                                               "  await hang()\n}"})),
    Scenario("host-error", "The host reports a connection error: the guest sends nothing more "
             "and closes", ("R-ERR-2",), kind="host-script", bindings=("hang",),
             **_script(*_after_run(by_host("ERROR", {"code": 11, "message": "host failed"})),
                       by_guest("EOF"))),
    Scenario("too-many-items", "A RESULT at the item bound is read; one item more is "
             "MALFORMED_PAYLOAD", ("R-CBOR-11", "R-VAL-1"), kind="host-script",
             bindings=("hang",),
             **_script(by_host("RUN", run_frame(["hang"])), CALL_HANG,
                       # value_items(4096) + 64 = 1088 items: the map, 2 keys, the id,
                       # the array and its elements
                       by_host("RESULT", {"id": "<id:1>", "value": [0] * 1083}),
                       by_guest("CALL", {"id": "<id:2>", "name": "hang", "args": [],
                                         "kwargs": {}}),
                       by_host("RESULT", {"id": "<id:2>", "value": [0] * 1084}),
                       connection_error(5), by_guest("EOF"),
                       programs={"python": "await hang()\nawait hang()",
                                 "javascript": "await hang()\nawait hang()"})),
    Scenario("cancel-queued", "CANCEL reaches a call queued beyond max_calls_in_flight: it "
             "raises the cancellation at the program's call and is never sent",
             ("R-CANCEL-2", "R-CALL-3", "R-LANG-13"), kind="host-script",
             bindings=("hang", "echo"), limits={**LIMITS, "max_calls_in_flight": 1},
             **_script(by_host("RUN", run_frame(["hang", "echo"],
                                                limits={**LIMITS, "max_calls_in_flight": 1})),
                       CALL_HANG, by_host("CANCEL", {"reason": "test"}),
                       by_guest("OUTPUT", {"stream": "stdout",
                                           "text": "queued call cancelled\n"}),
                       by_guest("DONE", CANCELLED_DONE, optional=True), by_guest("EOF"),
                       programs={"python": "import asyncio\nfirst = asyncio.ensure_future("
                                           "hang())\nawait asyncio.sleep(0)\ntry:\n"
                                           "    await echo(1)\n"
                                           "except asyncio.CancelledError:\n"
                                           "    print('queued call cancelled')\n    raise",
                                 "javascript": "const first = hang()\nfirst.catch(() => {})\n"
                                               "try {\n  await echo(1)\n} catch (e) {\n"
                                               "  if (e instanceof Cancelled) "
                                               "console.log('queued call cancelled')\n"
                                               "  throw e\n}"})),
    *(_guest_violation(f"payload-{name}", f"A CANCEL whose payload breaks {rule}: the guest's "
                       f"own decoder rejects it ({what})", (rule, "R-CBOR-9"), 5,
                       *_after_run(raw("host", encode_frame(7, bytes.fromhex(payload)))))
      for name, rule, what, payload in PAYLOAD_VIOLATIONS),
    _guest_violation("result-error-code", "A RESULT whose error code is a connection code",
                     ("R-ERRCODE-1", "R-CBOR-10"), 6,
                     *_after_run(by_host("RESULT", {"id": "<id:1>", "error": {
                         "code": 1, "type": "ValueError", "message": "not a call error"}}))),
    _guest_violation("run-bindings-repeated", "A RUN that names a binding twice",
                     ("R-RUN-3", "R-CBOR-10"), 6,
                     by_host("RUN", run_frame(["hang", "hang"]))),
    _guest_violation("run-variable-name", "A RUN with a variable whose name is private",
                     ("R-VARS-1", "R-CBOR-10"), 6,
                     by_host("RUN", {**run_frame(["hang"], limits={**LIMITS,
                                                                   "variables_bytes": 1024}),
                                     "variables": {"_secret": 1}})),
    # -- scripted guest: what our host does with a guest's violations ------------
    Scenario("guest-garbage", "The guest sends garbage instead of HELLO",
             ("R-FRAME-2", "R-ERR-1", "R-TERM-1"), kind="guest-script",
             script=(raw("guest", b"Traceback (most recent call last):\n"),
                     by_host("ERROR", {"code": 1, "message": "<text>"}))),
    Scenario("guest-hello-version", "The guest speaks protocol 2",
             ("R-HELLO-2", "R-VER-1"), kind="guest-script",
             script=(by_guest("HELLO", {**REPLAY_HELLO, "protocol": 2}),
                     by_host("ERROR", {"code": 2, "message": "<text>"}))),
    Scenario("guest-error-first", "The guest reports an error before HELLO",
             ("R-ERR-1", "R-ERR-2"), kind="guest-script",
             script=(by_guest("ERROR", {"code": 11, "message": "cannot start"}),)),
    Scenario("guest-wrong-language", "The guest cannot run the program's language",
             ("R-RUN-1",), kind="guest-script",
             script=(by_guest("HELLO", {**REPLAY_HELLO, "languages": ["brainfuck"]}),
                     by_host("ERROR", {"code": 10, "message": "<text>"}))),
    Scenario("guest-wrong-role", "The guest sends a frame only a host sends",
             ("R-FRAME-8", "R-STATE-1"), kind="guest-script",
             script=(by_guest("HELLO", REPLAY_HELLO), by_host("RUN", "<any>"),
                     by_guest("RESULT", {"id": 1, "value": None}),
                     by_host("ERROR", {"code": 7, "message": "<text>"}))),
    Scenario("guest-second-hello", "A second HELLO during the run",
             ("R-STATE-1",), kind="guest-script",
             script=(by_guest("HELLO", REPLAY_HELLO), by_host("RUN", "<any>"),
                     by_guest("HELLO", REPLAY_HELLO),
                     by_host("ERROR", {"code": 7, "message": "<text>"}))),
    Scenario("guest-call-too-large", "A CALL whose arguments exceed value_bytes",
             ("R-CALL-4",), kind="guest-script", bindings=("echo",),
             script=(by_guest("HELLO", REPLAY_HELLO), by_host("RUN", "<any>"),
                     by_guest("CALL", {"id": 1, "name": "echo", "args": ["x" * 5000],
                                       "kwargs": {}}),
                     by_host("RESULT", "<any>"), by_guest("DONE", {"value": None}))),
    Scenario("guest-forged-variables", "A DONE whose variables break R-VARS-1's rule on names",
             ("R-VARS-6",), kind="guest-script", limits={**LIMITS, "variables_bytes": 1024},
             variables={"rows": [1]},
             script=(by_guest("HELLO", REPLAY_HELLO), by_host("RUN", "<any>"),
                     by_guest("DONE", {"value": None, "variables": {"_private": 1},
                                       "dropped": {}}))),
    Scenario("guest-unknown-binding", "A CALL to a binding that RUN did not offer",
             ("R-CALL-5",), kind="guest-script", bindings=("add",),
             script=(by_guest("HELLO", REPLAY_HELLO), by_host("RUN", "<any>"),
                     by_guest("CALL", {"id": 1, "name": "rm", "args": [], "kwargs": {}}),
                     by_host("RESULT", "<any>"), by_guest("DONE", {"value": None}))),
    Scenario("guest-call-id-reused", "A CALL id that does not increase",
             ("R-CALL-2",), kind="guest-script", bindings=("add",),
             script=(by_guest("HELLO", REPLAY_HELLO), by_host("RUN", "<any>"),
                     by_guest("CALL", {"id": 5, "name": "add", "args": [1, 2], "kwargs": {}}),
                     by_host("RESULT", "<any>"),
                     by_guest("CALL", {"id": 5, "name": "add", "args": [1, 2], "kwargs": {}}),
                     by_host("ERROR", {"code": 8, "message": "<text>"}))),
    Scenario("guest-too-many-calls", "More calls in flight than max_calls_in_flight",
             ("R-CALL-3",), kind="guest-script", bindings=("add", "hang"),
             limits={**LIMITS, "max_calls_in_flight": 1},
             script=(by_guest("HELLO", REPLAY_HELLO), by_host("RUN", "<any>"),
                     by_guest("CALL", {"id": 1, "name": "hang", "args": [], "kwargs": {}}),
                     by_guest("CALL", {"id": 2, "name": "add", "args": [1, 2], "kwargs": {}}),
                     by_host("RESULT", "<any>"), by_guest("DONE", {"value": None}))),
    Scenario("guest-oversized-frame", "The guest declares a frame past the ceiling",
             ("R-FRAME-5",), kind="guest-script",
             script=(by_guest("HELLO", REPLAY_HELLO), by_host("RUN", "<any>"),
                     raw("guest", struct.pack(">2sBBHI", b"TH", 1, 5, 0, 2**32 - 1)),
                     by_host("ERROR", {"code": 4, "message": "<text>"}))),
    Scenario("guest-output-cap", "Output past output_bytes loses its middle; the run goes on",
             ("R-OUTPUT-3",), kind="guest-script", limits={**LIMITS, "output_bytes": 5},
             script=(by_guest("HELLO", REPLAY_HELLO), by_host("RUN", "<any>"),
                     by_guest("OUTPUT", {"stream": "stdout", "text": "hello world"}),
                     by_guest("DONE", {"value": 1}))),
    Scenario("guest-error-mid-run", "The guest reports an error during the run",
             ("R-ERR-2",), kind="guest-script",
             script=(by_guest("HELLO", REPLAY_HELLO), by_host("RUN", "<any>"),
                     by_guest("ERROR", {"code": 11, "message": "out of paper"}))),
    Scenario("guest-eof-mid-run", "The guest's stream ends during the run",
             ("R-TRANS-5",), kind="guest-script",
             script=(by_guest("HELLO", REPLAY_HELLO), by_host("RUN", "<any>"), by_guest("EOF"))),
    Scenario("guest-call-while-cancelling", "A CALL after the host's CANCEL is answered with "
             "CANCELLED", ("R-STATE-3", "R-CANCEL-1"), kind="guest-script", bindings=("hang",),
             timeout=0.5,
             script=(by_guest("HELLO", REPLAY_HELLO), by_host("RUN", "<any>"),
                     by_host("CANCEL", {"reason": "timeout"}),
                     by_guest("CALL", {"id": 1, "name": "hang", "args": [], "kwargs": {}}),
                     by_host("RESULT", {"id": 1, "error": {"code": 106, "type": "<text>",
                                                           "message": "<text>"}}))),
    Scenario("guest-silent", "A guest that never answers is timed out and cancelled",
             ("R-CANCEL-1", "R-TERM-2"), kind="guest-script", timeout=0.5,
             script=(by_guest("HELLO", REPLAY_HELLO), by_host("RUN", "<any>"),
                     by_host("CANCEL", {"reason": "timeout"}))),
)

BY_NAME = {s.name: s for s in SCENARIOS}
