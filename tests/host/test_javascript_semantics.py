"""JavaScript programs behave as under plain Node where the value model and
the protocol leave room (spec §6.1): bytes that own their memory (R-JS-2),
trailing `undefined` arguments left out (R-JS-1), the program's own error listeners, its
argv and stacks, and a parenthesized last expression; from the startup
snapshot as from main.mjs."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from tether import Limits, RunResult, Runtime, Status
from tether.host.guests import node_snapshot
from tether.host.guests.languages import Interpreters, guest_command, node_flags

from .conftest import run


async def _get_bytes(n: int) -> bytes:
    return bytes(range(n))


async def _search(query: str, limit: int = 3) -> list[str]:
    return [f"{query} {i}" for i in range(limit)]


async def _pair(a: int | None = 1, b: int = 2) -> list[int | None]:
    return [a, b]


async def _fail(message: str) -> None:
    raise RuntimeError(message)


BINDINGS = {"get_bytes": _get_bytes, "search": _search, "pair": _pair, "fail": _fail}


def _js(source: str, **kwargs: Any) -> RunResult:
    return run(source, language=kwargs.pop("language", "javascript"), **kwargs)


# ---- 1. a decoded Uint8Array owns its bytes -------------------------------------


def test_bytes_from_a_binding_are_not_a_view_of_the_frame() -> None:
    source = ("const b = await get_bytes(4)\n"
              "return [b.buffer.byteLength, b.byteOffset, Buffer.from(b.buffer).toString('hex')]")
    result = _js(source, bindings=BINDINGS)
    assert result.status is Status.OK, result.error
    assert result.value == [4, 0, "00010203"]


def test_a_bytes_variable_is_not_a_view_of_the_run_message() -> None:
    source = "const seen = [blob.buffer.byteLength, blob.byteOffset]"
    result = _js(source, variables={"blob": b"\x01\x02"})
    assert result.status is Status.OK, result.error
    assert result.variables == {"blob": b"\x01\x02", "seen": [2, 0]}


# ---- 2. a parenthesized or multi-line last expression ---------------------------


@pytest.mark.parametrize(("source", "expected"), [
    ("const o = {a: 1};\n({...o, b: 2})", {"a": 1, "b": 2}),
    ("const x = 4;\n(x)", 4),
    ("((3))", 3),
    ("(1, 2)", 2),
    ("('use strict')", "use strict"),  # in parentheses: not a directive
    ("({a: 1}) /* the end */ ;", {"a": 1}),
    ("const n = 1;\n(n +\n  2) // a comment", 3),
    ("[1,\n 2,\n 3].map((n) =>\n  n * 2) // doubled", [2, 4, 6]),
    ("let s = 'x';\n(\n  s + 'y'\n)", "xy"),
])
@pytest.mark.parametrize("variables", [None, {}])
def test_a_parenthesized_or_multi_line_last_expression_is_returned(
        source: str, expected: Any, variables: dict[str, Any] | None) -> None:
    result = _js(source, last_expression=True, variables=variables)
    assert result.status is Status.OK, result.error
    assert result.value == expected


# ---- 3. the program's own error listeners ---------------------------------------


def test_the_programs_uncaught_exception_listener_handles_the_error() -> None:
    source = ("process.on('uncaughtException', (e) => console.log('handled:', e.message))\n"
              "setTimeout(() => { throw new Error('timer failure') }, 1)\n"
              "await new Promise((done) => setTimeout(done, 20))\n"
              "return 'survived'")
    result = _js(source)
    assert result.status is Status.OK, result.error
    assert (result.value, result.output) == ("survived", "handled: timer failure\n")


def test_the_programs_unhandled_rejection_listener_handles_the_rejection() -> None:
    source = ("let seen\nprocess.on('unhandledRejection', (reason) => { seen = reason.message })\n"
              "fail('background task failed')\n"
              "await new Promise((done) => setTimeout(done, 20))\n"
              "return seen")
    result = _js(source, bindings=BINDINGS)
    assert result.status is Status.OK, result.error
    assert result.value == "background task failed"


def test_an_error_ends_the_run_once_the_programs_listener_is_removed() -> None:
    source = ("const h = (e) => console.log('handled', e.message)\n"
              "process.on('uncaughtException', h)\n"
              "setTimeout(() => { throw new Error('a') }, 1)\n"
              "await new Promise((done) => setTimeout(done, 20))\n"
              "process.off('uncaughtException', h)\n"
              "setTimeout(() => { throw new Error('b') }, 1)\n"
              "await new Promise(() => {})")
    result = _js(source)
    assert result.error is not None, result
    assert (result.error.type, result.error.message, result.error.line) == ("Error", "b", 6)
    assert result.output == "handled a\n"


@pytest.mark.parametrize("value", ["{get x() { throw new Error('getter') }}",
                                   "new Proxy({}, {ownKeys() { throw new Error('getter') }})"])
def test_a_value_that_fails_to_convert_ends_the_run_whatever_the_programs_listeners(
        value: str) -> None:
    """The program's own listeners decide about its stray errors only: a
    returned value whose conversion throws is the program's error at once."""
    source = f"process.on('unhandledRejection', () => {{}})\nreturn {value}"
    result = _js(source, limits=Limits(timeout=20))
    assert result.status is Status.ERROR, result
    assert result.error is not None and result.error.message == "getter"


# ---- 4. trailing undefined arguments --------------------------------------------


@pytest.mark.parametrize(("call", "expected"), [
    ("search('q', opts.limit)", ["q 0", "q 1", "q 2"]),
    ("search('q', undefined, undefined)", ["q 0", "q 1", "q 2"]),
    ("search('q', 1)", ["q 0"]),
    ("pair(undefined, 5)", [None, 5]),  # before a defined argument: null
    ("pair(opts.limit)", [1, 2]),
])
def test_trailing_undefined_arguments_are_left_out_of_the_call(call: str, expected: Any) -> None:
    result = _js(f"const opts = {{}}\nreturn await {call}", bindings=BINDINGS)
    assert result.status is Status.OK, result.error
    assert result.value == expected


def test_undefined_arguments_the_typescript_check_accepts_are_accepted() -> None:
    source = "const opts: { limit?: number } = {}\nreturn (await search('q', opts.limit)).length"
    result = _js(source, language="typescript", bindings=BINDINGS, check=True)
    assert result.status is Status.OK, result.error
    assert result.value == 3


# ---- 5. argv --------------------------------------------------------------------


def test_the_program_sees_the_argv_of_a_script_without_arguments() -> None:
    result = _js("return [process.argv, process.execPath]")
    assert result.status is Status.OK, result.error
    assert isinstance(result.value, list)
    argv, exec_path = result.value
    assert argv == [exec_path, "<program>"]


# ---- 6. syntax errors at run time -----------------------------------------------


@pytest.mark.parametrize(("source", "first_line", "where"), [
    ("let a = 1\nJSON.parse('{')", "SyntaxError: ", "at <program>:2:6"),
    ("let a = 1\nthrow new SyntaxError('mine')", "SyntaxError: mine", "at <program>:2:7"),
])
def test_a_syntax_error_at_run_time_has_no_source_line_of_a_compile_error(
        source: str, first_line: str, where: str) -> None:
    result = _js(source)
    assert result.error is not None and result.error.type == "SyntaxError"
    lines = result.error.traceback.splitlines()
    assert lines[0].startswith(first_line), lines
    assert [ln.strip() for ln in lines if "<program>" in ln] == [where]
    assert result.error.line == 2


# ---- 7. decorators --------------------------------------------------------------


@pytest.mark.parametrize("language", ["typescript", "javascript"])
def test_a_decorator_is_said_to_be_unsupported(language: str) -> None:
    source = ("function logged(target: any, ctx: any) { return target }\n"
              "class Svc { @logged run(x: number) { return x * 2 } }\n"
              "return new Svc().run(21)")
    if language == "javascript":
        source = source.replace(": any", "").replace(": number", "")
    result = _js(source, language=language)
    assert result.error is not None
    assert result.error.type == "SyntaxError"
    assert "decorators are not supported" in result.error.message
    assert result.error.line == 2


# ---- 8. the stacks the program sees ---------------------------------------------


@pytest.mark.parametrize(("source", "expected"), [
    ("let s\ntry { await fail('x') } catch (e) { s = e.stack }\nreturn s",
     ["BindingError: x", "at async <program>:2:7"]),
    ("let s\ntry { await fail(Symbol('s')) } catch (e) { s = e.stack }\nreturn s",
     ["TypeError: fail() argument 1: $: symbol is outside the value model", "at <program>:2:13"]),
    ("let s\ntry { null.x } catch (e) { s = e.stack }\nreturn s",
     ["TypeError: Cannot read properties of null (reading 'x')", "at <program>:2:12"]),
])
def test_the_stacks_the_program_sees_hold_its_own_frames_only(source: str, expected: list[str]) -> None:
    result = _js(source, bindings=BINDINGS)
    assert result.status is Status.OK, result.error
    assert isinstance(result.value, str)
    assert [ln.strip() for ln in result.value.splitlines()] == expected


# ---- 9. the program's own exit (R-DONE-8) ---------------------------------------


@pytest.mark.parametrize("source", [
    "console.log('leaving')\nprocess.exit(0)\nconsole.log('not reached')",
    "console.log('leaving')\nprocess.exit()\nconsole.log('not reached')",
    "console.log('leaving')\nprocess.exitCode = 0\nprocess.exit()\nconsole.log('not reached')",
])
def test_an_exit_with_status_0_ends_the_run_as_a_return_of_nothing(source: str) -> None:
    result = _js(source)
    assert result.status is Status.OK, result.error
    assert (result.value, result.output) == (None, "leaving\n")


@pytest.mark.parametrize(("source", "message", "line"), [
    ("console.log('failing')\nprocess.exit(3)\nconsole.log('not reached')", "3", 2),
    ("process.exitCode = 4\nfunction leave() {\n  process.exit()\n}\nleave()", "4", 3),
    ("try {\n  process.exit(5)\n} finally {\n  console.log('not reached')\n}", "5", 2),
])
def test_an_exit_with_another_status_is_a_system_exit_at_its_line(
        source: str, message: str, line: int) -> None:
    result = _js(source)
    assert result.status is Status.ERROR and result.error is not None
    assert (result.error.type, result.error.message, result.error.line) == ("SystemExit", message, line)
    assert "not reached" not in result.output


def test_an_exit_keeps_the_variables_assigned_before_it() -> None:
    result = _js("const a = 1\nprocess.exit(0)\nconst b = 2", variables={})
    assert result.status is Status.OK, result.error
    assert result.variables == {"a": 1}


def test_an_exit_code_node_refuses_is_an_error_the_program_can_catch() -> None:
    result = _js("try { process.exit('x') } catch (e) { console.log(e.code) }\nreturn 'went on'")
    assert result.status is Status.OK, result.error
    assert (result.value, result.output) == ("went on", "ERR_INVALID_ARG_TYPE\n")


# ---- 10. calls in flight at the end (R-DONE-9) -----------------------------------


async def _add(a: int, b: int) -> int:
    return a + b


def test_a_main_not_awaited_finishes_and_its_calls_settle() -> None:
    source = ("async function main() {\n  const x = await add(1, 2)\n  const y = await add(x, 3)\n"
              "  console.log('sum', y)\n}\nmain()\n"
              "setTimeout(() => console.log('dropped'), 60_000).unref()\nreturn 'started'")
    result = _js(source, bindings={"add": _add}, variables={})
    assert result.status is Status.OK, result.error
    assert (result.value, result.output) == ("started", "sum 6\n")


def test_a_rejection_after_the_program_returned_ends_the_run() -> None:
    source = ("async function main() {\n  await add(1, 2)\n  throw new Error('late')\n}\n"
              "main()\nreturn 1")
    result = _js(source, bindings={"add": _add})
    assert result.status is Status.ERROR and result.error is not None
    assert (result.error.type, result.error.message, result.error.line) == ("Error", "late", 3)


def test_a_timeout_while_calls_settle_after_the_return_cancels_them() -> None:
    async def slow() -> None:
        await asyncio.sleep(60)

    result = _js("slow().then(() => console.log('not reached'))\nreturn 1",
                 bindings={"slow": slow}, limits=Limits(timeout=0.5))
    assert result.status is Status.TIMEOUT, result
    assert result.output == ""


# ---- from the snapshot and from main.mjs ----------------------------------------

#: Programs of the fixes above whose outcome does not depend on how the guest started.
ALIKE: list[tuple[str, dict[str, Any], Any]] = [
    ("const b = await get_bytes(2)\nreturn b.buffer.byteLength", {}, 2),
    ("const o = {a: 1};\n({...o})", {"last_expression": True}, {"a": 1}),
    ("return (await search('q', undefined)).length", {}, 3),
    ("return process.argv.slice(1)", {}, ["<program>"]),
    ("process.on('uncaughtException', () => {})\nsetTimeout(() => { throw new Error('x') }, 1)\n"
     "await new Promise((done) => setTimeout(done, 20))\nreturn 1", {}, 1),
    ("let s\ntry { await fail('x') } catch (e) { s = e.stack }\nreturn s.includes('guest')", {}, False),
    ("new console.Console({stdout: process.stdout}).log('hi %d', 2)\n"
     "const { Console } = require('console')\nreturn typeof Console", {}, "function"),
]


async def _alike(env: dict[str, str] | None) -> list[RunResult]:
    async with Runtime(sandbox="process", pool=None, env=env) as rt:
        return [await rt.run(source, language="javascript", bindings=BINDINGS, **options)
                for source, options, _ in ALIKE]


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("start", ["snapshot", "main"])
def test_the_fixes_hold_from_the_snapshot_and_from_main(
        start: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(node_snapshot, "SNAPSHOT_DIR", tmp_path / "snapshots")
    for name in ("_asked", "_condemned"):
        monkeypatch.setattr(node_snapshot, name, set())
    for name in ("_touched", "_refused"):
        monkeypatch.setattr(node_snapshot, name, {})
    built = node_snapshot.build(Interpreters().node_path(), node_flags(Limits()))
    assert built.returncode == 0, built.stderr
    argv = guest_command("javascript", "/nonexistent", Limits()).argv
    assert "--snapshot-blob" in argv
    # NODE_OPTIONS of the caller's own: its guests start from main.mjs.
    env = {"NODE_OPTIONS": "--max-semi-space-size=32"} if start == "main" else None
    results = asyncio.run(_alike(env))
    assert [r.value if r.ok else r.error for r in results] == [expected for _, _, expected in ALIKE]
    assert results[-1].output == "hi 2\n"  # console.Console, which a snapshot loses, put back
