"""JavaScript and TypeScript programs end, import and fail as under plain
Node (`node file.js`, `node file.mjs`): a rejection nobody handles ends the
run, the program ends when Node's event loop has nothing left to do
(R-DONE-9) with its 'exit' listeners and `process.exitCode` (R-DONE-8),
static imports and `export` of a program written as an ES module work
(R-JS-3), a thrown value is shown as Node shows it (R-DONE-6), and the
program cannot break the guest by changing the built-in objects (R-JS-4)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from tether import RunResult, Runtime, Status

from .conftest import quick, run


def _js(source: str, **kwargs: Any) -> RunResult:
    return run(source, language=kwargs.pop("language", "javascript"), **kwargs)


def _error(result: RunResult) -> tuple[str, str, int | None]:
    assert result.error is not None, result
    return result.error.type, result.error.message, result.error.line


async def _echo(x: Any) -> Any:
    return x


# ---- 1. a rejection nobody handles ----------------------------------------------


@pytest.mark.parametrize(("source", "line"), [
    ("async function main() {\n  await null\n  throw new Error('main failed')\n}\nmain()", 3),
    ("async function main() {\n  throw new Error('main failed')\n}\nmain()", 2),
    ("const main = async () => { await echo(1); throw new Error('main failed') }\nmain()", 1),
    ("Promise.reject(new Error('main failed'))", 1),
    ("new Promise((_, reject) => setTimeout(() => reject(new Error('main failed')), 5))", 1),
])
def test_a_rejection_nobody_handles_ends_the_run_with_its_error(source: str, line: int) -> None:
    result = _js(source, bindings={"echo": _echo})
    assert result.status is Status.ERROR
    assert _error(result) == ("Error", "main failed", line)


def test_a_rejection_handled_later_in_the_same_turn_is_not_an_error() -> None:
    source = "const p = Promise.reject(new Error('x'))\np.catch(() => console.log('caught'))"
    result = _js(source)
    assert (result.status, result.output) == (Status.OK, "caught\n")


def test_the_programs_own_unhandled_rejection_listener_handles_it() -> None:
    source = ("process.on('unhandledRejection', (e) => console.log('seen', e.message))\n"
              "Promise.reject(new Error('x'))")
    result = _js(source)
    assert (result.status, result.output) == (Status.OK, "seen x\n")


# ---- 2. the end: Node's event loop, exit listeners, exitCode -----------------------


def test_a_pending_timer_runs_before_the_end() -> None:
    result = _js("setTimeout(() => console.log('later'), 50)\nconsole.log('now')\nreturn 1")
    assert (result.status, result.value, result.output) == (Status.OK, 1, "now\nlater\n")


def test_an_unreferenced_timer_is_dropped_at_the_end() -> None:
    result = _js("setTimeout(() => console.log('later'), 50).unref()\nconsole.log('now')")
    assert (result.status, result.output) == (Status.OK, "now\n")


def test_a_callback_of_io_not_awaited_runs_before_the_end() -> None:
    source = ("const fs = require('fs')\nfs.writeFile('out.txt', 'data', () => {\n"
              "  fs.readFile('out.txt', 'utf8', (err, text) => console.log('read', text))\n})")
    result = _js(source)
    assert (result.status, result.output) == (Status.OK, "read data\n")


def test_a_before_exit_listener_may_schedule_more_work() -> None:
    source = ("let rounds = 0\nprocess.on('beforeExit', () => {\n"
              "  if (rounds++ < 2) setTimeout(() => console.log('round', rounds), 1)\n})")
    result = _js(source)
    assert (result.status, result.output) == (Status.OK, "round 1\nround 2\n")


def test_exit_listeners_run_at_the_end_with_the_status() -> None:
    source = ("process.on('exit', (code) => console.log('exit', code, done))\n"
              "let done = false\nawait new Promise((r) => setTimeout(r, 5))\ndone = true\nreturn 7")
    result = _js(source)
    assert (result.status, result.value, result.output) == (Status.OK, 7, "exit 0 true\n")


def test_exit_code_ends_the_run_as_an_exit_with_that_status() -> None:
    """R-DONE-8: `process.exitCode = 2` and a natural end is `process.exit(2)` there."""
    result = _js("console.log('working')\nprocess.exitCode = 2\nreturn 'ignored'")
    assert result.status is Status.ERROR
    assert _error(result) == ("SystemExit", "2", None)
    assert result.output == "working\n"


def test_an_exit_listener_sees_and_may_change_the_exit_code() -> None:
    source = ("process.on('exit', (code) => { console.log('was', code); process.exitCode = 0 })\n"
              "process.exitCode = 3")
    result = _js(source)
    assert (result.status, result.output) == (Status.OK, "was 3\n")


def test_process_exit_runs_the_exit_listeners_first() -> None:
    source = ("process.on('exit', (code) => console.log('exit', code))\n"
              "console.log('before')\nprocess.exit(3)\nconsole.log('never')")
    result = _js(source)
    assert _error(result) == ("SystemExit", "3", 3)
    assert result.output == "before\nexit 3\n"


def test_process_exit_in_an_exit_listener_stops_the_listeners() -> None:
    source = ("process.on('exit', () => { console.log('first'); process.exit(4) })\n"
              "process.on('exit', () => console.log('second'))")
    result = _js(source)
    assert _error(result)[:2] == ("SystemExit", "4")
    assert result.output == "first\n"


def test_an_error_thrown_by_an_exit_listener_ends_the_run() -> None:
    result = _js("process.on('exit', () => { throw new RangeError('in exit') })\nreturn 1")
    assert _error(result) == ("RangeError", "in exit", 1)


@pytest.mark.parametrize(("source", "status"), [
    ("process.exitCode = 4\nprocess.exit()", "4"),  # exit() reads exitCode
    ("process.exitCode = 4\nprocess.exit(undefined)", None),  # an explicit undefined is 0
])
def test_process_exit_reads_the_exit_code_as_node_does(source: str, status: str | None) -> None:
    result = _js(source)
    if status is None:
        assert result.status is Status.OK, result.error
    else:
        assert _error(result)[:2] == ("SystemExit", status)


def test_an_await_nothing_can_settle_ends_the_run_as_node_ends_a_module() -> None:
    """Node ends a module whose top-level await cannot settle (status 13), at once."""
    result = _js("console.log('waiting')\nawait new Promise(() => {})\nreturn 1",
                 limits=quick(timeout=30))
    assert result.status is Status.ERROR
    assert result.error is not None and "unsettled top-level await" in result.error.message
    assert result.output == "waiting\n"


def test_a_promise_nothing_can_settle_outside_the_body_ends_as_a_script_does() -> None:
    source = ("async function main() {\n  console.log('start')\n  await new Promise(() => {})\n"
              "  console.log('never')\n}\nmain()\nreturn 'returned'")
    result = _js(source, limits=quick(timeout=30))
    assert (result.status, result.value, result.output) == (Status.OK, "returned", "start\n")


# ---- 3. ES module syntax ----------------------------------------------------------

IMPORTS = """\
import fs, { readFileSync as read } from "node:fs";
import * as path from 'path'
import {
  join,
  basename,
} from "node:path"
import "node:os"
const kinds = [typeof fs.statSync, typeof read, typeof path.join, join('a', 'b'), basename('/x/y')]
"""


@pytest.mark.parametrize("language", ["javascript", "typescript"])
def test_static_imports_of_built_in_modules(language: str) -> None:
    result = _js(IMPORTS + "return kinds", language=language)
    assert result.status is Status.OK, result.error
    assert result.value == ["function", "function", "function", "a/b", "y"]


@pytest.mark.parametrize("language", ["javascript", "typescript"])
def test_lines_and_columns_after_imports_are_the_programs(language: str) -> None:
    source = IMPORTS + "const n = 1; null.x"
    result = _js(source, language=language)
    assert _error(result)[::2] == ("TypeError", 9)
    assert result.error is not None and "<program>:9:19" in result.error.traceback


def test_an_import_on_the_line_of_other_code_keeps_its_columns() -> None:
    result = _js("import path from 'path'; const z = 1; null.x")
    assert result.error is not None and "<program>:1:44" in result.error.traceback


def test_imports_keep_variables_and_the_last_expression() -> None:
    source = "import { join } from 'node:path'\nimport os from 'os'\nconst p = join('a', 'b')\np"
    result = _js(source, variables={}, last_expression=True)
    assert result.status is Status.OK, result.error
    assert result.value == "a/b"
    assert result.variables == {"p": "a/b"}


def test_typescript_type_imports_are_stripped() -> None:
    source = ("import type { Foo } from './types'\nimport fs, { type Stats } from 'node:fs'\n"
              "const n: number = 2\nreturn [typeof fs.statSync, n]")
    result = _js(source, language="typescript")
    assert result.status is Status.OK, result.error
    assert result.value == ["function", 2]


@pytest.mark.parametrize(("source", "expected"), [
    ("import { x } from './helpers'\nreturn x", ("Error", "Cannot import './helpers'", 1)),
    ("const a = 1\nimport y from '../lib/y.js'", ("Error", "Cannot import '../lib/y.js'", 2)),
    ("import left from 'left-pad-nowhere'", ("Error", "Cannot find package 'left-pad-nowhere'", 1)),
    ("\nimport { nope } from 'node:fs'", ("SyntaxError", "The requested module 'node:fs' does not "
                                          "provide an export named 'nope'", 2)),
])
def test_an_import_that_cannot_be_loaded_says_why_at_its_line(
        source: str, expected: tuple[str, str, int]) -> None:
    result = _js(source)
    type_, message, line = _error(result)
    assert (type_, line) == (expected[0], expected[2])
    assert message.startswith(expected[1])


def test_imports_run_before_the_program_as_in_a_module() -> None:
    source = "console.log('first line')\nimport { nope } from 'node:fs'"
    result = _js(source)
    assert result.output == ""
    assert _error(result)[::2] == ("SyntaxError", 2)


@pytest.mark.parametrize("language", ["javascript", "typescript"])
def test_exports_are_dropped_and_their_declarations_kept(language: str) -> None:
    source = ("export const a = 1\nexport function f() { return 2 }\n"
              "export default function main() { return 3 }\nexport class K {}\n"
              "const b = 4\nexport { b }\nexport default { unused: true }\n"
              "return [a, f(), main(), typeof K, b]")
    result = _js(source, language=language)
    assert result.status is Status.OK, result.error
    assert result.value == [1, 2, 3, "function", 4]


@pytest.mark.parametrize("language", ["javascript", "typescript"])
def test_a_shebang_line_is_a_comment(language: str) -> None:
    result = _js("#!/usr/bin/env node\nconsole.log('ran')\nnull.x", language=language)
    assert result.output == "ran\n"
    assert _error(result)[::2] == ("TypeError", 3)


def test_import_meta_is_that_of_a_module_and_the_main_check_holds() -> None:
    source = ("import { fileURLToPath, pathToFileURL } from 'node:url'\n"
              "return [import.meta.url === pathToFileURL(process.argv[1]).href,\n"
              "        import.meta.url === `file://${process.argv[1]}`,\n"
              "        fileURLToPath(import.meta.url) === process.argv[1],\n"
              "        import.meta.dirname === process.cwd()]")
    result = _js(source)
    assert result.status is Status.OK, result.error
    assert result.value == [True, True, True, True]


def test_a_script_is_require_main() -> None:
    source = ("function main() { return [__dirname === process.cwd(), typeof __filename] }\n"
              "if (require.main === module) return main()")
    result = _js(source)
    assert result.status is Status.OK, result.error
    assert result.value == [True, "string"]


def test_static_imports_of_installed_packages(tmp_path: Path) -> None:
    package = tmp_path / "node_modules" / "tinyjs"
    package.mkdir(parents=True)
    (package / "package.json").write_text('{"name": "tinyjs", "main": "index.js"}')
    (package / "index.js").write_text("exports.double = (x) => 2 * x;\n")

    async def go() -> RunResult:
        async with Runtime(node_packages=tmp_path) as rt:
            return await rt.run("import tiny, { double } from 'tinyjs'\n"
                                "return [double(21), tiny.double(1)]", language="javascript")

    result = asyncio.run(go())
    assert result.status is Status.OK, result.error
    assert result.value == [42, 2]


def test_an_import_in_a_string_or_a_dynamic_import_is_left_alone() -> None:
    source = ("const text = `\nimport x from './nowhere'\n`\n"
              "const os = await import('node:os')\nreturn [text.trim(), typeof os.cpus]")
    result = _js(source)
    assert result.status is Status.OK, result.error
    assert result.value == ["import x from './nowhere'", "function"]



# ---- 4. the program cannot break the guest (R-JS-4) ------------------------------

#: Replaces every method of the language's built-ins with one that throws, and
#: deletes their globals: what the program does afterwards uses only what it
#: took before (Node's own objects, which its console needs, are left alone).
SABOTAGE = """\
const U8 = Uint8Array, E = Error, TE = TypeError, P = Promise, log = console.log, err = console.error
const intrinsics = [Array.prototype, Array, Object, Object.prototype, String.prototype, String,
  Number, Number.prototype, Math, JSON, Reflect, Map.prototype, Set.prototype, WeakMap.prototype,
  WeakSet.prototype, Promise.prototype, Promise, RegExp.prototype, Symbol, BigInt.prototype,
  Object.getPrototypeOf(Uint8Array.prototype), Uint8Array.prototype, DataView.prototype,
  TextEncoder.prototype, TextDecoder.prototype, Buffer, Buffer.prototype, Error, Atomics,
  Object.getPrototypeOf([][Symbol.iterator]()), Object.getPrototypeOf(new Map().entries()),
  Object.getPrototypeOf(new Set().values()), Function.prototype]
const keep = { constructor: 1, call: 1, apply: 1, bind: 1, prepareStackTrace: 1, pop: 1, includes: 1 } // Node's own code needs these
const { defineProperty, getOwnPropertyDescriptor } = Object, { ownKeys } = Reflect
const doomed = []
for (let t = 0; t < intrinsics.length; t++) {
  const keys = ownKeys(intrinsics[t])
  for (let k = 0; k < keys.length; k++) {
    const d = getOwnPropertyDescriptor(intrinsics[t], keys[k])
    if (keep[keys[k]] !== 1 && typeof d.value === 'function' && d.configurable) {
      doomed[doomed.length] = [intrinsics[t], keys[k]]
    }
  }
}
const sabotaged = { value() { throw new E('sabotaged') }, configurable: true }
for (let i = 0; i < doomed.length; i++) defineProperty(doomed[i][0], doomed[i][1], sabotaged)
const globals = ['Math', 'JSON', 'Map', 'Set', 'WeakMap', 'WeakSet', 'Promise', 'Array',
  'Object', 'Number', 'String', 'Symbol', 'BigInt', 'Error', 'TypeError', 'RangeError',
  'Reflect', 'Uint8Array', 'DataView', 'TextEncoder', 'TextDecoder', 'Buffer', 'Atomics',
  'Int32Array', 'SharedArrayBuffer', 'setImmediate']
for (let i = 0; i < globals.length; i++) delete globalThis[globals[i]]
"""


def test_a_deleted_global_breaks_nothing() -> None:
    result = _js("delete globalThis.Math\nconsole.log('done')")
    assert (result.status, result.output) == (Status.OK, "done\n")


@pytest.mark.parametrize("variables", [None, {}])
def test_changing_the_built_ins_breaks_nothing_of_the_guest(variables: dict[str, Any] | None) -> None:
    source = "const m = new Map([['k', 1]])\n" + SABOTAGE + (
        "log('printed', 1)\nerr('and to stderr')\n"
        "const head = new U8(2)\nhead[0] = 0xe2\nhead[1] = 0x82\nconst tail = new U8(1)\ntail[0] = 0xac\n"
        "process.stdout.write(head)\nprocess.stdout.write(tail)\nlog()\n"
        "const bytes = new U8(2)\nbytes[0] = 1\nbytes[1] = 2\n"
        "const echoed = await echo({ list: [1, 2.5, 'three', null, true], bytes, m })\n"
        "const kept = { n: 10n ** 30n, s: 'text' }\n"
        "setTimeout(() => log('timer'), 1)\nreturn { echoed, m }")
    result = _js(source, bindings={"echo": _echo}, variables=variables)
    assert result.status is Status.OK, result.error
    echoed = {"list": [1, 2.5, "three", None, True], "bytes": b"\x01\x02", "m": {"k": 1}}
    assert result.value == {"echoed": echoed, "m": {"k": 1}}
    assert result.output == "printed 1\nand to stderr\n€\ntimer\n"
    if variables is not None:
        assert result.variables is not None
        assert result.variables["kept"] == {"n": 10**30, "s": "text"}


@pytest.mark.parametrize("ending", [
    "throw new TE('still typed')",
    "new P((_, reject) => reject(new TE('still typed')))",
])
def test_an_error_after_changing_the_built_ins_is_reported(ending: str) -> None:
    result = _js(SABOTAGE + "await echo([1])\n" + ending, bindings={"echo": _echo})
    line = SABOTAGE.count("\n") + 2
    assert _error(result) == ("TypeError", "still typed", line)


def test_exit_after_changing_the_built_ins_is_reported() -> None:
    result = _js(SABOTAGE + "process.on('exit', (c) => log('exit', c))\nprocess.exitCode = 3")
    assert _error(result) == ("SystemExit", "3", None)
    assert result.output == "exit 3\n"


def test_a_program_written_as_a_module_is_strict_code() -> None:
    source = ("import { join } from 'node:path'\n"
              "try { undeclared = 1 } catch (e) { console.log(e.name) }\nreturn typeof this")
    result = _js(source)
    assert (result.status, result.value, result.output) == (Status.OK, "undefined",
                                                            "ReferenceError\n")
