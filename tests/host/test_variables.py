"""State as values (spec §7.9): variables go into a run, the program's
top-level names come back, and a session threads them from run to run."""

from __future__ import annotations

import math
from collections.abc import Coroutine
from typing import Any, TypeVar

import pytest

from tether import Limits, RunResult, RunSession
from tether.codec import FrameType, encode_frame, encode_payload

from .conftest import BLOCK, _Shared, pick, run, runtime_for, write_fd3

pytestmark = pytest.mark.memory_guest

_T = TypeVar("_T")

#: One value of every kind of the value model (spec §6).
EVERY_KIND: dict[str, Any] = {
    "nothing": None, "yes": True, "no": False, "small": -5, "huge": 2**70, "negative_huge": -2**80,
    "fraction": 1.5, "infinite": math.inf, "text": "é€😀", "raw": b"\x00\xff", "empty": [],
    "nested": {"k": [1, {"deep": [None, "x"]}], "other key": 2.25},
}


def _on_loop(coro: Coroutine[Any, Any, _T]) -> _T:
    assert _Shared.loop is not None
    return _Shared.loop.run_until_complete(coro)


def _session(**kwargs: Any) -> RunSession:
    return runtime_for(kwargs.get("language", "python")).session(**kwargs)


def test_every_kind_of_value_goes_in_and_comes_back(lang: str) -> None:
    result = run(pick(lang, python="count = len(nested)", javascript="const count = 2"),
                 language=lang, variables=EVERY_KIND)
    assert result.ok, result.error
    assert result.variables == {**EVERY_KIND, "count": 2}
    assert result.dropped_variables == {}


def test_nan_and_negative_zero_come_back(lang: str) -> None:
    result = run("", language=lang, variables={"nan": math.nan, "minus_zero": -0.0})
    assert result.variables is not None
    assert math.isnan(result.variables["nan"])
    assert math.copysign(1, result.variables["minus_zero"]) == -1


def test_names_outside_the_value_model_are_reported_not_fatal(lang: str) -> None:
    result = run(pick(lang, python="import datetime\nwhen = datetime.date(2024, 1, 1)\n"
                                   "tags = {1, 2}\nfine = 1\nreturn 'done'",
                      javascript="const when = new Date(0)\nconst tags = new Set([1])\n"
                                 "const fine = 1\nreturn 'done'"),
                 language=lang, variables={})
    assert result.ok and result.value == "done"
    assert result.variables == {"fine": 1}
    assert set(result.dropped_variables) == {"when", "tags"}
    assert result.dropped_variables["when"].endswith("is outside the value model")


def test_private_names_modules_functions_classes_and_bindings_stay_out(lang: str) -> None:
    async def search() -> int:
        return 1

    result = run(pick(lang,
                      python="import json\n_scratch = 1\ndef helper():\n    pass\n"
                             "class Thing:\n    pass\nkept = await search()",
                      javascript="let _scratch = 1\nfunction helper() {}\nclass Thing {}\n"
                                 "const kept = await search()"),
                 language=lang, variables={}, bindings={"search": search})
    assert result.ok, result.error
    assert result.variables == {"kept": 1}
    assert result.dropped_variables == {}


def test_variables_are_names_the_program_may_change_or_redeclare(lang: str) -> None:
    result = run(pick(lang, python="n += 1\nlabel = label.upper()",
                      javascript="n += 1\nconst label = 'NEW'"),
                 language=lang, variables={"n": 1, "label": "old"})
    assert result.variables == {"n": 2, "label": pick(lang, python="OLD", javascript="NEW")}


def test_javascript_var_in_blocks_counts_and_unassigned_names_do_not() -> None:
    result = run("for (var i = 0; i < 3; i++) {}\nif (true) { var inner = 'v'; let local = 1 }\n"
                 "let later\nconst [a, {b}] = [1, {b: 2}]\nif (a) return a\nlet never = 1",
                 language="javascript", variables={})
    assert result.variables == {"i": 3, "inner": "v", "a": 1, "b": 2}


def test_typescript_declarations_are_names() -> None:
    result = run("const total: number = 2\ninterface Row { x: number }\nlet rows: Row[] = []",
                 language="typescript", variables={})
    assert result.variables == {"total": 2, "rows": []}


def test_a_program_that_raises_still_reports_its_variables(lang: str) -> None:
    result = run(pick(lang, python="done_part = 1\nraise KeyError('x')",
                      javascript="const donePart = 1\nthrow new Error('x')"),
                 language=lang, variables={"given": 0})
    assert result.status == "error"
    assert result.variables == {"given": 0, pick(lang, python="done_part",
                                                 javascript="donePart"): 1}


def test_a_program_that_does_not_compile_reports_the_variables_it_was_given(lang: str) -> None:
    result = run("x = (", language=lang, variables={"given": [1]})
    assert result.status == "error" and result.error is not None
    assert result.error.type == "SyntaxError"
    assert result.variables == {"given": [1]}


def test_without_variables_nothing_comes_back(lang: str) -> None:
    result = run(pick(lang, python="x = 1", javascript="const x = 1"), language=lang)
    assert result.ok
    assert result.variables is None and result.dropped_variables == {}


def test_variables_past_the_cap_are_left_out_with_the_reason(lang: str) -> None:
    result = run(pick(lang, python="small = 1\nbig = 'x' * 5000",
                      javascript="const small = 1\nconst big = 'x'.repeat(5000)"),
                 language=lang, variables={}, limits=Limits(variables_bytes=1000))
    assert result.ok
    assert result.variables == {"small": 1}
    assert "over what is left of variables_bytes" in result.dropped_variables["big"]


def test_a_name_that_cannot_travel_is_reported() -> None:
    result = run("café = 1\nplain = 2", variables={})
    assert result.variables == {"plain": 2}
    assert "identifier" in result.dropped_variables["café"]


@pytest.mark.parametrize(("variables", "message"), [
    ({"_x": 1}, "private"),
    ({"x y": 1}, "not an identifier"),
    ({"add": 1}, "name of a binding"),
    ({"when": object()}, "outside the value model"),
    ({"big": "x" * 5000}, "Limits.variables_bytes"),
])
def test_bad_variables_are_refused_before_the_run(variables: dict[str, Any], message: str
                                                   ) -> None:
    async def add(a: int, b: int) -> int:
        return a + b

    with pytest.raises(ValueError, match=message):
        run("", variables=variables, bindings={"add": add},
            limits=Limits(variables_bytes=1000))


def test_last_expression_is_the_result_only_when_asked(lang: str) -> None:
    source = pick(lang, python="x = 20\nx * 2 + 2", javascript="const x = 20\nx * 2 + 2")
    assert run(source, language=lang, last_expression=True).value == 42
    assert run(source, language=lang).value is None
    early = pick(lang, python="return 1\n2", javascript="return 1\n2")
    assert run(early, language=lang, last_expression=True).value == 1
    statement = pick(lang, python="x = 1", javascript="'use strict'")
    assert run(statement, language=lang, last_expression=True).value is None


def test_a_session_of_three_runs_each_using_the_last(lang: str) -> None:
    async def load() -> list[dict[str, Any]]:
        return [{"city": "Oslo", "t": 3.5}, {"city": "Rome", "t": 18.0},
                {"city": "Oslo", "t": 5.5}]

    async def three_steps() -> tuple[list[RunResult], dict[str, Any]]:
        async with _session(language=lang, bindings={"load": load}) as s:
            await s.run(pick(lang, python="rows = await load()",
                             javascript="const rows = await load()"))
            await s.run(pick(lang, python="mean = sum(r['t'] for r in rows) / len(rows)",
                             javascript="const mean = rows.reduce((a, r) => a + r.t, 0) "
                                        "/ rows.length"))
            await s.run(pick(lang, python="return f'{len(rows)} rows, mean {mean:g}'",
                             javascript="return `${rows.length} rows, mean ${mean}`"))
            return s.results, s.save()

    results, saved = _on_loop(three_steps())
    assert [r.status for r in results] == ["ok", "ok", "ok"]
    assert results[-1].value == "3 rows, mean 9"
    assert saved["mean"] == 9
    pids = {r.stats.exit_code for r in results}  # each run its own process: nothing shared
    assert len(results) == 3 and pids is not None


def test_a_saved_session_restores_as_plain_data() -> None:
    async def go() -> Any:
        async with _session() as first:
            await first.run("n = 41")
            saved = first.save()
        async with _session(variables=saved) as second:
            return (await second.run("return n + 1")).value

    assert _on_loop(go()) == 42


@pytest.mark.real_guest  # a session of both guests
def test_a_session_passes_python_variables_to_javascript() -> None:
    async def go() -> Any:
        async with _session() as s:
            await s.run("rows = [1, 2, 3]")
            return (await s.run("return rows.length", language="javascript")).value

    assert _on_loop(go()) == 3


def test_a_run_that_times_out_leaves_the_session_as_it_was() -> None:
    async def go() -> tuple[RunResult, dict[str, Any]]:
        async with _session() as s:
            await s.run("n = 1")
            result = await s.run("n = 2\nwhile True:\n    pass", limits=Limits(timeout=0.5))
            return result, s.variables

    result, variables = _on_loop(go())
    assert result.status == "timeout"
    assert variables == {"n": 1}


def test_a_javascript_assignment_to_an_undeclared_name_is_a_top_level_name() -> None:
    result = run("'use strict'\nlet declared = 1", language="javascript", variables={})
    assert result.variables == {"declared": 1}
    result = run("rows = [1, 2]\nglobalThis.also = 'x'", language="javascript", variables={})
    assert result.variables == {"rows": [1, 2], "also": "x"}


@pytest.mark.parametrize("source", [
    "var rows = rows || []\nrows.push(2)",
    "if (typeof rows === 'undefined') { var rows = [] }\nrows.push(2)",
    "'use strict'\nvar rows\nrows.push(2)",
    "for (var rows of [rows]) rows.push(2)"])
def test_a_javascript_var_keeps_the_variable_it_declares_again(source: str) -> None:
    """R-VARS-2: a variable is readable as if the program had assigned it
    first, so declaring it again with ``var`` keeps its value (the idiom
    ``var rows = rows || []``), as in one script."""
    result = run(source, language="javascript", variables={"rows": [1]})
    assert result.status == "ok", result.error
    assert result.variables == {"rows": [1, 2]}


def test_a_javascript_error_after_a_var_keeps_its_column() -> None:
    result = run("var rows = rows || []; rows.nope()", language="javascript",
                 variables={"rows": [1]})
    assert result.error is not None and result.error.line == 1
    assert "    at <program>:1:29" in result.error.traceback, result.error.traceback


def test_a_javascript_directive_still_applies() -> None:
    result = run("'use strict'\ntry { undeclared = 1 } catch (e) { return e.name }",
                 language="javascript", variables={})
    assert result.value == "ReferenceError"


def test_a_name_javascript_reserves_passes_through_a_javascript_run() -> None:
    result = run("const seen = typeof globalThis.default\nreturn 1", language="javascript",
                 variables={"default": 3, "fine": 1})
    assert result.ok, result.error
    assert result.variables == {"default": 3, "fine": 1, "seen": "undefined"}


def test_a_huge_variable_is_left_out_without_converting_it() -> None:
    result = run("rows = list(range(10_000_000))\nsmall = 1", variables={},
                 limits=Limits(variables_bytes=4096, timeout=20))
    assert result.ok, result.error
    assert result.variables == {"small": 1}
    assert "over what is left of variables_bytes" in result.dropped_variables["rows"]


def test_a_huge_javascript_variable_is_left_out_without_converting_it() -> None:
    result = run("const rows = Array.from({length: 1e6}, (_, i) => i)\nconst small = 1",
                 language="javascript", variables={},
                 limits=Limits(variables_bytes=4096, timeout=20))
    assert result.ok, result.error
    assert result.variables == {"small": 1}
    assert "over what is left of variables_bytes" in result.dropped_variables["rows"]


@pytest.mark.real_guest  # the program writes to the guest's fd 3
@pytest.mark.parametrize("variables", [{"_evil": 1}, {"a b": 1}, {"big": "x" * 5000}])
def test_a_forged_done_with_bad_variables_is_a_protocol_error(lang: str,
                                                              variables: dict[str, Any]) -> None:
    """R-VARS-6: what DONE carries is data, and a DONE that breaks the rules
    on names or size ends the run rather than reach the next RUN."""
    done = encode_frame(FrameType.DONE, encode_payload(
        {"value": None, "dropped": {}, "variables": variables}))
    result = run(write_fd3(lang, done) + BLOCK[lang],
                 language=lang, variables={}, limits=Limits(variables_bytes=1000, timeout=10))
    assert result.status == "protocol_error", result
    assert result.variables is None


def test_a_session_keeps_a_variable_a_later_binding_shadows() -> None:
    def total() -> int:
        return 7

    async def go() -> tuple[RunResult, dict[str, Any]]:
        async with _session() as s:
            await s.run("total = 1\nother = 2")
            shadowed = await s.run("return await total()", bindings={"total": total})
            return shadowed, s.variables

    result, variables = _on_loop(go())
    assert result.value == 7
    assert variables == {"total": 1, "other": 2}


@pytest.mark.real_guest  # the program writes to the guest's fd 3
def test_a_forged_done_with_too_many_values_is_a_protocol_error() -> None:
    done = encode_frame(FrameType.DONE, encode_payload(
        {"value": None, "dropped": {}, "variables": {"many": [0] * 2000}}))
    result = run(write_fd3("python", done) + "import time\ntime.sleep(5)", variables={},
                 limits=Limits(variables_bytes=4096, timeout=10))
    assert result.status == "protocol_error", result


def test_many_dropped_names_stay_within_the_bounds(lang: str) -> None:
    source = pick(lang, python="for i in range(3000):\n    globals()[f'v{i}'] = {i}",
                  javascript="for (let i = 0; i < 3000; i++) globalThis['v' + i] = new Set()")
    result = run(source, language=lang, variables={},
                 limits=Limits(variables_bytes=65536))
    assert result.ok, result.error
    assert 0 < len(result.dropped_variables) < 3000
