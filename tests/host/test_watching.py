"""Watching and steering a run on real guests: live events, the stream and
its bounded buffer, approvals (allow, deny, edit, predicates, the paused
wall clock)."""

from __future__ import annotations

import asyncio
from typing import Any

import cbor2
import pytest

import tether
from tether import (
    Allow,
    ApprovalRequest,
    Binding,
    CallEnded,
    CallStarted,
    Deny,
    Edit,
    EventsDropped,
    Limits,
    Printed,
    RunEvent,
    RunResult,
    Runtime,
    requires_approval,
)

from .conftest import LANGUAGES, _Shared, run, runtime_for

pytestmark = pytest.mark.memory_guest


def _go(coroutine: Any) -> Any:
    assert _Shared.loop is not None
    return _Shared.loop.run_until_complete(coroutine)


def _runtime(language: str = "python") -> Runtime:
    return runtime_for(language)


async def add(a: int, b: int) -> int:
    return a + b


PRINT_AND_CALL = {
    "python": "print('before')\nx = await add(1, 2)\nprint('after', x)\nreturn x",
    "javascript": "console.log('before')\nconst x = await add(1, 2)\n"
                  "console.log('after', x)\nreturn x",
}


@pytest.mark.parametrize("language", LANGUAGES)
def test_on_event_sees_output_and_calls_in_order(language: str) -> None:
    events: list[RunEvent] = []
    result = run(PRINT_AND_CALL[language], language=language, bindings={"add": add},
                 on_event=events.append)
    assert result.ok and result.value == 3
    kinds = [type(e) for e in events]
    assert kinds == [Printed, CallStarted, CallEnded, Printed]
    started, ended = events[1], events[2]
    assert isinstance(started, CallStarted) and isinstance(ended, CallEnded)
    assert started.name == "add" and started.id == ended.id
    assert ended.value == 3 and ended.error is None and ended.duration >= 0
    assert "".join(e.text for e in events if isinstance(e, Printed)) == result.output


@pytest.mark.parametrize("language", LANGUAGES)
def test_stream_yields_events_then_the_result(language: str) -> None:
    async def go() -> list[Any]:
        return [item async for item in _runtime(language).stream(
            PRINT_AND_CALL[language], language=language, bindings={"add": add})]

    items = _go(go())
    assert isinstance(items[-1], RunResult) and items[-1].value == 3
    assert [type(i) for i in items[:-1]] == [Printed, CallStarted, CallEnded, Printed]


def test_a_failed_call_ends_with_its_error() -> None:
    def boom() -> None:
        raise ValueError("no")

    events: list[RunEvent] = []
    run("try:\n    await boom()\nexcept BindingError:\n    pass", bindings={"boom": boom},
        on_event=events.append)
    ended = [e for e in events if isinstance(e, CallEnded)]
    assert ended[0].error is not None and ended[0].error.type == "ValueError"


def test_a_lagging_consumer_loses_events_not_the_run() -> None:
    async def go() -> list[Any]:
        items = []
        async for item in _runtime().stream(
                "for i in range(50):\n    print(i)\nreturn 'done'", buffer=4):
            items.append(item)
            await asyncio.sleep(0.05)  # slower than the program prints
        return items

    items = _go(go())
    assert items[-1].value == "done"
    events = items[:-1]
    printed = [e for e in events if isinstance(e, Printed)]
    dropped = sum(e.count for e in events if isinstance(e, EventsDropped))
    assert len(printed) + dropped >= 1
    assert items[-1].output == "".join(f"{i}\n" for i in range(50))  # the result has it all


def test_live_output_stops_at_the_output_cap() -> None:
    events: list[RunEvent] = []
    result = run("for i in range(100):\n    print('x' * 99)", on_event=events.append,
                 limits=Limits(output_bytes=1000))
    live = "".join(e.text for e in events if isinstance(e, Printed))
    assert len(live.encode()) <= 1000 and live.startswith("x" * 99)
    assert result.stats.output_truncated


def test_leaving_a_stream_early_cancels_the_run() -> None:
    async def go() -> None:
        async for item in _runtime().stream("print('hi')\nwhile True:\n    pass"):
            assert isinstance(item, Printed)
            break

    _go(go())
    assert run("return 1").value == 1  # the runtime goes on


def test_a_failing_callback_does_not_end_the_run() -> None:
    def bad(event: RunEvent) -> None:
        raise RuntimeError("callback bug")

    assert run("print(1)\nreturn 2", on_event=bad).value == 2


# -- approvals ---------------------------------------------------------------

SEND = {
    "python": "try:\n    return await send(to='bob', text='hi')\n"
              "except BindingError as e:\n    return [e.type, str(e)]",
    "javascript": "try { return await send({to: 'bob', text: 'hi'}) }\n"
                  "catch (e) { return [e.type, e.message] }",
}

sent: list[dict[str, Any]] = []


def _send(to: str, text: str) -> str:
    sent.append({"to": to, "text": text})
    return f"sent to {to}"


SEND_BINDING = Binding(
    name="send", description="Send a message.", function=_send, requires_approval=True,
    parameters={"type": "object", "properties": {"to": {"type": "string"},
                                                 "text": {"type": "string"}},
                "required": ["to", "text"]})


def _approving(answer: Any, seen: list[ApprovalRequest] | None = None) -> Any:
    async def approve(request: ApprovalRequest) -> Any:
        if seen is not None:
            seen.append(request)
        return answer
    return approve


@pytest.mark.parametrize("language", LANGUAGES)
def test_an_allowed_call_runs(language: str) -> None:
    seen: list[ApprovalRequest] = []
    sent.clear()
    result = run(SEND[language], language=language, bindings=[SEND_BINDING],
                 approve=_approving(Allow(), seen))
    assert result.value == "sent to bob"
    assert sent == [{"to": "bob", "text": "hi"}]
    assert seen[0].name == "send" and seen[0].run_id


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_denied_call_raises_denied_with_the_reason(language: str) -> None:
    sent.clear()
    result = run(SEND[language], language=language, bindings=[SEND_BINDING],
                 approve=_approving(Deny("not to bob")))
    assert result.value[0] == "Denied" and "not to bob" in result.value[1]
    assert sent == []


@pytest.mark.parametrize("language", LANGUAGES)
def test_an_edit_changes_the_arguments(language: str) -> None:
    sent.clear()
    result = run(SEND[language], language=language, bindings=[SEND_BINDING],
                 approve=_approving(Edit(kwargs={"to": "alice", "text": "hi"})))
    assert result.value == "sent to alice"


def test_without_a_hook_the_call_is_denied() -> None:
    result = run(SEND["python"], bindings=[SEND_BINDING])
    assert result.value[0] == "Denied"


def test_a_marked_callable_and_a_predicate() -> None:
    @requires_approval(when=lambda request: request.args[0] > 10)
    def pay(amount: int) -> str:
        return f"paid {amount}"

    asked: list[ApprovalRequest] = []
    result = run("a = await pay(5)\ntry:\n    await pay(50)\nexcept BindingError as e:\n"
                 "    return [a, e.type]", bindings=[pay], approve=_approving(Deny(), asked))
    assert result.value == ["paid 5", "Denied"]
    assert [r.args for r in asked] == [[50]]


@requires_approval
def wipe() -> str:
    return "wiped"


def test_the_runtime_hook_is_the_default() -> None:
    async def go() -> RunResult:
        async with Runtime(approve=_approving(Allow()), pool=None) as rt:
            return await rt.run("return await wipe()", bindings=[wipe])

    assert asyncio.run(go()).value == "wiped"


@pytest.mark.parametrize("language", LANGUAGES)
def test_waiting_for_a_person_pauses_the_run_timeout(language: str) -> None:
    async def slow_person(request: ApprovalRequest) -> Allow:
        await asyncio.sleep(1.5)
        return Allow()

    program = {"python": "return await wipe()", "javascript": "return await wipe()"}
    result = run(program[language], language=language, bindings=[wipe],
                 approve=slow_person, limits=Limits(timeout=1.0))
    assert result.value == "wiped", result.error


def test_a_hook_past_approval_timeout_denies() -> None:
    async def never(request: ApprovalRequest) -> Allow:
        await asyncio.sleep(30)
        return Allow()

    result = run("try:\n    await wipe()\nexcept BindingError as e:\n    return [e.type, str(e)]",
                 bindings=[wipe], approve=never, limits=Limits(approval_timeout=0.2))
    assert result.value[0] == "Denied" and "no approval" in result.value[1]


def test_a_failing_hook_denies() -> None:
    async def broken(request: ApprovalRequest) -> Allow:
        raise RuntimeError("hook bug")

    result = run("try:\n    await wipe()\nexcept BindingError as e:\n    return e.type",
                 bindings=[wipe], approve=broken)
    assert result.value == "Denied"


def test_names_are_exported() -> None:
    for name in ("Printed", "CallStarted", "CallEnded", "EventsDropped", "Allow", "Deny",
                 "Edit", "ApprovalRequest", "requires_approval"):
        assert name in tether.__all__


# -- suspend and resume ------------------------------------------------------

executed: list[str] = []


def lookup(key: str) -> str:
    executed.append(key)
    return key.upper()


def ask_manager(question: str) -> str:
    raise tether.Suspend(f"waiting for an answer to {question!r}")


SUSPENDING = {
    "python": "a = await lookup('x')\nprint('looked up', a)\n"
              "answer = await ask_manager('ok?')\nprint('answer', answer)\n"
              "b = await lookup('y')\nreturn [a, answer, b]",
    "javascript": "const a = await lookup('x')\nconsole.log('looked up', a)\n"
                  "const answer = await ask_manager('ok?')\nconsole.log('answer', answer)\n"
                  "const b = await lookup('y')\nreturn [a, answer, b]",
}


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_suspended_run_resumes_in_a_new_guest(language: str) -> None:
    executed.clear()
    bindings = [lookup, ask_manager]
    first = run(SUSPENDING[language], language=language, bindings=bindings, suspendable=True)
    assert first.status == "suspended" and first.checkpoint
    assert first.error is not None and "ok?" in first.error.message
    assert first.output == "looked up X\n" and executed == ["x"]

    async def restart() -> RunResult:  # another Runtime: as after the host restarted
        async with Runtime(pool=None) as rt:
            assert first.checkpoint is not None
            return await rt.resume(first.checkpoint, "yes", bindings=bindings)

    resumed = asyncio.run(restart())
    assert resumed.ok, resumed.error
    assert resumed.value == ["X", "yes", "Y"]
    assert resumed.output == "answer yes\n"  # what came before was the first run's
    assert executed == ["x", "y"]  # the logged call was not made again


def test_a_resumed_run_can_suspend_again() -> None:
    bindings = [lookup, ask_manager]
    program = "a = await ask_manager('1')\nb = await ask_manager('2')\nreturn [a, b]"
    first = run(program, bindings=bindings, suspendable=True)
    assert first.checkpoint is not None
    second = _go(_runtime().resume(first.checkpoint, "one", bindings=bindings))
    assert second.status == "suspended" and second.checkpoint is not None
    third = _go(_runtime().resume(second.checkpoint, "two", bindings=bindings))
    assert third.value == ["one", "two"]


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_diverging_program_fails_and_runs_nothing(language: str) -> None:
    executed.clear()
    program = {
        "python": "import random\nawait lookup(str(random.random()))\n"
                  "return await ask_manager('?')",
        "javascript": "await lookup(String(Math.random()))\nreturn await ask_manager('?')",
    }[language]
    bindings = [lookup, ask_manager]
    first = run(program, language=language, bindings=bindings, suspendable=True)
    assert first.status == "suspended" and first.checkpoint is not None
    resumed = _go(_runtime(language).resume(first.checkpoint, "v", bindings=bindings))
    assert resumed.status == "error"
    assert resumed.error is not None and resumed.error.type == "ResumeDiverged"
    assert len(executed) == 1


started: list[int] = []


async def slow(x: int) -> int:
    started.append(x)
    await asyncio.sleep(0.3)
    return x * 10


async def ask_later(question: str) -> str:
    await asyncio.sleep(0.2)
    raise tether.Suspend(f"waiting for an answer to {question!r}")


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_call_in_flight_at_the_suspension_runs_live_on_resume(language: str) -> None:
    started.clear()
    program = {
        "python": "import asyncio\na, b = await asyncio.gather(slow(1), ask_manager('ok?'))\n"
                  "return [a, b]",
        "javascript": "const [a, b] = await Promise.all([slow(1), ask_manager('ok?')])\n"
                      "return [a, b]",
    }[language]
    bindings = [slow, ask_manager]
    first = run(program, language=language, bindings=bindings, suspendable=True)
    assert first.status == "suspended" and first.checkpoint is not None
    resumed = _go(_runtime(language).resume(first.checkpoint, "yes", bindings=bindings))
    assert resumed.ok, resumed.error
    assert resumed.value == [10, "yes"]
    assert started == [1, 1]  # cut short by the suspension, then called again


def test_a_call_answered_while_the_suspending_call_waited_keeps_its_place() -> None:
    executed.clear()
    program = ("import asyncio\n"
               "a, b = await asyncio.gather(ask_later('ok?'), lookup('x'))\nreturn [a, b]")
    bindings = [ask_later, lookup]
    first = run(program, bindings=bindings, suspendable=True)
    assert first.status == "suspended" and first.checkpoint is not None
    assert executed == ["x"]
    resumed = _go(_runtime().resume(first.checkpoint, "yes", bindings=bindings))
    assert resumed.ok, resumed.error
    assert resumed.value == ["yes", "X"]
    assert executed == ["x"]  # answered from the log


def test_a_checkpoint_of_an_earlier_format_is_refused_by_its_number() -> None:
    """Formats 1 and 2 were not sealed: read, a store could make them say anything."""
    bindings = [lookup, ask_manager]
    for version in (1, 2, 99):
        old = cbor2.dumps({"tether_checkpoint": version, "source": "return 1",
                           "language": "python", "calls": []})
        with pytest.raises(ValueError, match=f"format {version};"):
            _go(_runtime().resume(old, "yes", bindings=bindings))


BRANCHING = {
    "python": "import os\nprint('start')\nif os.environ.get('BRANCH') == 'other':\n"
              "    print('took the other branch')\n    return 'early'\n"
              "if os.environ.get('BRANCH') == 'fail':\n    raise ValueError('no luck')\n"
              "answer = await ask_manager('go?')\nprint('answer', answer)\nreturn answer",
    "javascript": "console.log('start')\nif (process.env.BRANCH === 'other') {\n"
                  "  console.log('took the other branch')\n  return 'early'\n}\n"
                  "if (process.env.BRANCH === 'fail') throw new Error('no luck')\n"
                  "const answer = await ask_manager('go?')\nconsole.log('answer', answer)\n"
                  "return answer",
}


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_resumed_run_that_ends_before_the_suspension_point_diverged(language: str) -> None:
    async def in_runtime(branch: str, checkpoint: bytes | None = None) -> RunResult:
        async with Runtime(pool=None, env={"BRANCH": branch}) as rt:
            if checkpoint is None:
                return await rt.run(BRANCHING[language], language=language,
                                    bindings=[ask_manager], suspendable=True)
            return await rt.resume(checkpoint, "yes", bindings=[ask_manager])

    first = asyncio.run(in_runtime("ask"))
    assert first.status == "suspended" and first.checkpoint is not None
    assert first.output == "start\n"
    returned = asyncio.run(in_runtime("other", first.checkpoint))
    assert returned.status == "error"
    assert returned.error is not None and returned.error.type == "ResumeDiverged"
    assert "returned after 0 of 1 logged calls" in returned.error.message
    assert "ask_manager()" in returned.error.message
    # Not a continuation of the suspended run: everything it printed.
    assert returned.output == "start\ntook the other branch\n"
    failed = asyncio.run(in_runtime("fail", first.checkpoint))
    assert failed.status == "error"
    assert failed.error is not None and failed.error.type == "ResumeDiverged"
    assert "no luck" in failed.error.message
    assert failed.output == "start\n"


def test_an_approval_hook_can_suspend() -> None:
    async def later(request: ApprovalRequest) -> Any:
        return tether.Suspend("a person decides tomorrow")

    first = run("return await wipe()", bindings=[wipe], approve=later, suspendable=True)
    assert first.status == "suspended" and first.checkpoint is not None
    resumed = _go(_runtime().resume(first.checkpoint, "approved later", bindings=[wipe]))
    assert resumed.value == "approved later"


def test_a_suspended_call_can_raise_on_resume() -> None:
    # A person refused what the call asked: the program's call raises, as if
    # the binding had raised it, and the program goes on.
    first = run("try:\n    await ask_manager('?')\nexcept BindingError as e:\n"
                "    return [e.type, str(e)]", bindings=[ask_manager], suspendable=True)
    assert first.checkpoint is not None
    resumed = _go(_runtime().resume(first.checkpoint, error=PermissionError("not today"),
                                    bindings=[ask_manager]))
    assert resumed.value == ["PermissionError", "PermissionError: not today"]
    with pytest.raises(TypeError, match="error"):
        _go(_runtime().resume(first.checkpoint, "v", error=PermissionError("no"),
                              bindings=[ask_manager]))


def test_without_suspendable_a_suspend_is_a_binding_error() -> None:
    result = run("try:\n    await ask_manager('?')\nexcept BindingError as e:\n    return e.type",
                 bindings=[ask_manager])
    assert result.value == "Suspend"


def test_resume_refuses_other_bindings_and_other_bytes() -> None:
    first = run("return await ask_manager('?')", bindings=[ask_manager], suspendable=True)
    assert first.checkpoint is not None
    with pytest.raises(ValueError, match="bindings"):
        _go(_runtime().resume(first.checkpoint, 1, bindings=[lookup]))
    with pytest.raises(ValueError, match="checkpoint"):
        _go(_runtime().resume(b"not one", 1))


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_run_timeout_counts_again_after_the_approval(language: str) -> None:
    async def quick_person(request: ApprovalRequest) -> Allow:
        await asyncio.sleep(0.2)
        return Allow()

    program = {"python": "await wipe()\nwhile True:\n    pass",
               "javascript": "await wipe()\nwhile (true) {}"}[language]
    result = run(program, language=language, bindings=[wipe], approve=quick_person,
                 limits=Limits(timeout=0.5))
    assert result.status == "timeout"
