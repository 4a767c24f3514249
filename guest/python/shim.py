"""The CPython guest's protocol loop (spec §7, guest role).

HELLO, wait for RUN, apply the resource limits, then run the program on an
asyncio loop whose only I/O is fd 3: binding calls become CALL frames,
``print`` becomes OUTPUT frames, the end of the program becomes DONE.
"""

from __future__ import annotations

import builtins
import contextlib
import dataclasses
import os
import signal
import sys
from collections.abc import Callable, Sequence
from typing import Any, Final, NoReturn

from tether import __version__
from tether.codec import (
    CONNECTION_CLOSED,
    ENVELOPE_OVERHEAD,
    NEED_DATA,
    Binding,
    Call,
    Connection,
    Done,
    ErrorCode,
    Hello,
    Payload,
    ProgramError,
    ProtocolError,
    Result,
    Role,
    Run,
    RunLimits,
    Stream,
    Value,
    ValueModelError,
    count_items,
    encode_payload,
    encode_payload_parts,
    payload_size,
    to_wire_plain,
    value_excess,
    value_items,
    variable_name_problem,
)

from . import interrupt, script
from .channel import Channel, OutputBuffer, ProgramStream, valid_unicode
from .described import describe as describe_binding
from .described import help as program_help
from .drivers import BindingError, SyncGuest, imports_asyncio
from .interrupt import ProgramCancelled
from .program import (
    awaits,
    compile_program,
    describe,
    program_globals,
    shown,
    top_level_names,
)
from .raw_output import RawOutput

LANGUAGES: Final = ("python",)
#: a1 65 "value": the bytes DONE's envelope adds around the value.
DONE_ENVELOPE: Final = 7
#: The longest error type name a DONE carries (R-DONE-7).
MAX_ERROR_TYPE_BYTES: Final = 256


def fit_error(error: ProgramError, budget: int) -> ProgramError:
    """R-DONE-7: valid text in every field, and a DONE payload within
    ``budget`` bytes: the traceback is shortened first, then the message."""
    error = dataclasses.replace(
        error, type=_cut(valid_unicode(error.type), MAX_ERROR_TYPE_BYTES),
        message=valid_unicode(error.message), traceback=valid_unicode(error.traceback))
    size = len(encode_payload({"error": error.to_wire()}))
    if size <= budget:
        return error
    # Room for the two texts: what the rest takes, and up to 8 bytes of lengths.
    empty = dataclasses.replace(error, message="", traceback="")
    room = max(0, budget - len(encode_payload({"error": empty.to_wire()})) - 8)
    message = _cut(error.message, room)
    traceback = _cut(error.traceback, room - len(message.encode()))
    return dataclasses.replace(error, message=message, traceback=traceback)


def _cut(text: str, limit: int) -> str:
    """``text`` within ``limit`` UTF-8 bytes, cut at a code point and ending
    with an ellipsis when cut."""
    data = text.encode()
    if len(data) <= limit:
        return text
    if limit < 3:
        return ""
    return data[: limit - 3].decode(errors="ignore") + "\u2026"


#: The guest's own names in every program's scope (R-RUN-6).
_OWN_NAMES: Final = {"BindingError": BindingError, "help": program_help}


class _Quitter:
    """``exit()`` and ``quit()``, the built-ins ``site`` gives a script (the
    guest runs with -S): they raise SystemExit, which ends the run (R-DONE-8)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"Use {self.name}() to exit"

    def __call__(self, code: object = None) -> NoReturn:
        raise SystemExit(code)


builtins.exit = _Quitter("exit")  # type: ignore[assignment]
builtins.quit = _Quitter("quit")  # type: ignore[assignment]


def _exits_cleanly(raised: SystemExit) -> bool:
    """Whether the program's exit is a status of 0, as the interpreter reads
    it (None, or an int of 0, False and IntEnum included), without running
    the program's own code."""
    code = raised.code
    return code is None or (isinstance(code, int) and int.__index__(code) == 0)


def _stopped_by_host(exc: BaseException) -> bool:
    """Cancelled by the host: the guest's own interruption, or asyncio's after
    a CANCEL (a CancelledError of the program's own is its error)."""
    return isinstance(exc, ProgramCancelled) or (
        type(exc).__name__ == "CancelledError" and interrupt.cancelled())


def _wait_for_threads() -> None:
    """What the interpreter does before it exits (R-DONE-9): the callbacks
    registered for that moment run (concurrent.futures lets its idle workers
    go there), then the program's non-daemon threads are joined. Private
    parts of threading's, on every CPython the guest runs on; with no thread
    but this one there is nothing to wait for (a run's cold path: a look at
    two dicts instead of threading's code)."""
    import threading

    if len(threading._active) + len(threading._limbo) > 1:  # type: ignore[attr-defined]
        threading._shutdown()  # type: ignore[attr-defined]


def _run_to_end(guest: Any, code: Any, namespace: dict[str, Any], *, as_script: bool) -> Any:
    """The program's value, or what it raised, once it has ended as its
    language ends a script: an exit with status 0 as a return of nothing
    (R-DONE-8); ``as_script``: its threads joined (R-DONE-9), then its
    ``atexit`` handlers run, unless the host stopped it (its grace is for
    DONE, not for them)."""
    stopped = False
    try:
        return guest.main(code, namespace, awaits(code))
    except SystemExit as exc:
        if not _exits_cleanly(exc):
            raise
        return None
    except BaseException as exc:
        stopped = _stopped_by_host(exc)
        raise
    finally:
        if as_script and not stopped and not interrupt.cancelled():
            _wait_for_threads()
            script.exit_handlers()


def run_program(channel: Channel, run: Run, loop: Any = None, *, last: bool = True,
                raw: RawOutput | None = None) -> None:
    """Run the program and send its DONE (R-DONE-1). ``last``: the process
    runs nothing after it, so the program runs as a script and ends as the
    interpreter ends one (guest/python/script.py): its threads are waited for
    and its ``atexit`` handlers run, which no later program could undo.
    ``raw``: fds 1 and 2, captured into the program's output (R-OUTPUT-5)."""
    output = OutputBuffer(channel, run.limits, raw)
    sys.stdout = ProgramStream(output, Stream.STDOUT, interrupt.check)
    sys.stderr = ProgramStream(output, Stream.STDERR, interrupt.check)
    # What a program restores its output to (sys.stdout = sys.__stdout__).
    sys.__stdout__, sys.__stderr__ = sys.stdout, sys.stderr  # type: ignore[assignment,misc]
    namespace: dict[str, Any] = {}

    def send(done: Done, payload: Payload | None = None) -> None:
        # What the program's module held is finalized, as at the exit (in a
        # rehearsal too: what it writes is then written ahead of the run).
        script.finalize(namespace, failed=failed is not None)
        output.flush()
        channel.send(done, payload)

    failed: ProgramError | None = None
    try:
        known = {*_OWN_NAMES, *(b.name for b in run.bindings), *(run.variables or ())}
        code = compile_program(run.source, run.last_expression, known)
        guest: Any
        # Without asyncio calls are sequential, and blocking on fd 3 is the
        # shortest path for them, warm guest or not.
        if imports_asyncio(code):
            from .aio import AsyncGuest

            guest = AsyncGuest(channel, run.limits, output, loop)
        else:
            guest = SyncGuest(channel, run.limits, output)
        # A binding hides a guest name or a built-in of the same name (R-RUN-6).
        bindings = {b.name: describe_binding(guest.make_binding(b.name), b)
                    for b in run.bindings}
        namespace = program_globals(_OWN_NAMES, bindings, run.variables)
        if last:
            script.begin(namespace, code)
        interrupt.handover()  # the stream ended while the run was being prepared
        try:
            value = _run_to_end(guest, code, namespace, as_script=last)
        finally:
            interrupt.disarm()
    except BaseException as exc:  # everything the program raises is data
        output.flush()
        if _stopped_by_host(exc):
            # Where the program was stopped (R-CANCEL-4): by the signal, or at an await.
            where = interrupt.stopped_at()
            if where is None:
                error = describe(exc)
                where = error.traceback, error.line
            channel.send(Done(error=fit_error(ProgramError(
                type="Cancelled", message="the run was cancelled", traceback=where[0],
                line=where[1]), run.limits.value_bytes + ENVELOPE_OVERHEAD)))
            return
        failed = fit_error(describe(exc), run.limits.value_bytes + ENVELOPE_OVERHEAD)
    if failed is not None:  # sent without the exception, which holds the program's frames
        _send_done(send, run, Done(error=failed), namespace)
        return
    try:
        wire, plain = to_wire_plain(value, run.limits.max_depth)
    except ValueModelError as exc:
        _send_done(send, run, Done(error=ProgramError(
            type="TypeError", message=f"return value {exc}")), namespace)
        return
    except Exception as exc:  # converting it ran the value's own code, which failed
        _send_done(send, run, Done(error=fit_error(ProgramError(
            type="TypeError", message=f"return value $: cannot be converted: "
                                      f"{type(exc).__name__}: {shown(exc)}"),
            run.limits.value_bytes + ENVELOPE_OVERHEAD)), namespace)
        return
    del value  # finalized with the module's names, as at the exit
    payload = encode_payload_parts({"value": wire}, plain=plain)  # once: to size and to send
    excess = value_excess(payload, run.limits.value_bytes, envelope_bytes=DONE_ENVELOPE,
                          envelope_items=2)
    problem = None
    if excess is not None and excess.kind == "bytes":
        problem = (f"return value takes {excess.amount} bytes, over the limit of "
                   f"{run.limits.value_bytes} (value_bytes)")
    elif excess is not None:
        problem = f"return value holds more than {excess.amount} values (value_bytes / 16)"
    if problem is not None:
        _send_done(send, run, Done(error=ProgramError(
            type="ValueError", message=problem, code=ErrorCode.VALUE_TOO_LARGE)), namespace)
        return
    if run.variables is None:
        send(Done(value=wire), payload)
        return
    _send_done(send, run, Done(value=wire), namespace, payload_size(payload))


def _send_done(send: Callable[[Done], None], run: Run, done: Done, namespace: dict[str, Any],
               size: int | None = None) -> None:
    """DONE, with the program's variables when RUN asked for them (R-VARS-3).
    ``size``: of DONE's payload without them, when known."""
    if run.variables is None:
        send(done)
        return
    if size is None:
        size = len(encode_payload(done.to_wire()))
    limits = run.limits
    assert limits.variables_bytes is not None  # with variables (R-VARS-1)
    budget = min(limits.variables_bytes, limits.frame_bytes - ENVELOPE_OVERHEAD - size)
    excluded = {b.name for b in run.bindings} | {"BindingError"}
    if not namespace:  # the program did not compile: its globals are RUN's variables
        namespace = dict(run.variables)
    variables, dropped = collect_variables(top_level_names(namespace, excluded), budget,
                                           limits.max_depth)
    send(Done(value=done.value, error=done.error, variables=variables, dropped=dropped))


def collect_variables(names: list[tuple[str, Any]], budget: int, max_depth: int
                      ) -> tuple[dict[str, Value], dict[str, str]]:
    """The names that fit the value model and ``budget`` bytes (encoded
    ``variables`` and ``dropped`` together), and why each other one is left
    out (R-VARS-4, R-VARS-5)."""
    variables: dict[str, Value] = {}
    dropped: dict[str, str] = {}
    items_left = value_items(budget)
    reasons: list[tuple[str, str]] = []
    for name, value in names:
        if variable_name_problem(name) is not None:
            reasons.append((name, f"the name {variable_name_problem(name)}"))
            continue
        if _surely_over(value, budget, items_left):  # not converted: it could take long
            reasons.append((name, f"$: is over what is left of variables_bytes "
                                  f"({max(budget, 0)} bytes, {items_left} values)"))
            continue
        try:
            wire, plain = to_wire_plain(value, max_depth)
        except ValueModelError as exc:
            reasons.append((name, str(exc)))
            continue
        except Exception as exc:  # converting it ran the value's own code, which failed
            reasons.append((name, f"$: cannot be converted: {type(exc).__name__}: {shown(exc)}"))
            continue
        encoded = encode_payload({name: wire}, plain=plain)
        items = count_items(encoded, items_left)
        if len(encoded) > budget or items - 2 > items_left:
            reasons.append((name, f"$: takes {len(encoded)} bytes, over what is left of "
                                  f"variables_bytes ({max(budget, 0)})"))
            continue
        variables[name] = wire
        budget -= len(encoded)
        items_left -= items - 1
    for name, reason in reasons:  # after the values: the values matter more
        cost = len(encode_payload({name: reason}))
        if cost <= budget and items_left >= 2:  # its name and its reason
            dropped[name] = reason
            budget -= cost
            items_left -= 2
    return variables, dropped


def _surely_over(value: Any, budget: int, items: int) -> bool:
    """Whether ``value`` holds more than ``items`` items or more than
    ``budget`` bytes of text, looking at no more than that many items."""
    stack = [value]
    try:
        while stack:
            item = stack.pop()
            items -= 1
            if items < 0:
                return True
            if isinstance(item, str | bytes | bytearray):
                budget -= len(item)
                if budget < 0:
                    return True
            elif isinstance(item, dict):
                stack.extend(item.values())
                items -= len(item)
            elif isinstance(item, list | tuple):
                stack.extend(item)
    except Exception:  # the value's own code failed: the conversion will say so
        return False
    return False


class _Rehearsal:
    """Stands in for :class:`Channel` in :func:`rehearse`: the other end is an
    in-memory host that answers every call with its first argument."""

    def __init__(self) -> None:
        self.conn = Connection(Role.GUEST)
        self.host = Connection(Role.HOST)
        self.seen: list[Any] = []  # what the host received

    def send(self, message: Any, payload: Payload | None = None) -> None:
        self.host.receive_data(self.conn.send(message, payload))
        while (event := self.host.next_event()) is not NEED_DATA:
            self.seen.append(event)
            if isinstance(event, Call):
                self.conn.receive_data(self.host.send(Result(id=event.id, value=event.args[0])))

    def receive_blocking(self) -> Any:
        return self.conn.next_event()  # what the host said is already here

    def fail(self, exc: ProtocolError) -> NoReturn:
        raise exc


_REHEARSAL = "x = await f(1)\nprint('x', x)\nreturn [x, {'a': 1.5, 'b': None}]"


def rehearse() -> list[Any]:
    """Take a fixed program through a run's whole path (RUN decoded, compiled,
    a binding called, output and DONE encoded) against an in-memory host.
    A forked guest does this before its HELLO: the pages a run writes are
    then copied from the template already (fewer page faults after the RUN,
    a faster warm hello; figures: bench/README.md).
    No program code runs, and nothing of it is left for the program to see.
    Returns the messages the host received."""
    channel = _Rehearsal()
    channel.send(Hello(implementation="rehearsal", languages=LANGUAGES))
    limits = RunLimits(output_bytes=1 << 20, value_bytes=1 << 19, frame_bytes=1 << 20,
                       max_depth=64, max_calls_in_flight=1)
    channel.conn.receive_data(channel.host.send(Run(
        source=_REHEARSAL, language=LANGUAGES[0], bindings=(Binding("f"),), limits=limits)))
    streams = sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__
    try:
        run_program(channel, channel.receive_blocking(), last=False)  # type: ignore[arg-type]
    finally:
        sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__ = streams  # type: ignore[misc]
    return channel.seen


def preload(modules: Sequence[str]) -> None:
    """Import ``modules`` before any run (the fork server's template, a warm
    guest): a program that imports them then finds them loaded. A module
    that fails to import is reported on stderr and left out; the program's
    own import then raises the error where it can see it."""
    import importlib

    for name in modules:
        try:
            importlib.import_module(name)
        except Exception as exc:  # not ours to fix: the program sees it when it imports
            sys.stderr.write(f"tether: cannot preload {name}: {type(exc).__name__}: {exc}\n")


#: RUN's resource limits and the rlimit each sets (R-RUN-4).
RLIMITS = (("memory_bytes", "RLIMIT_AS"), ("cpu_seconds", "RLIMIT_CPU"),
           ("open_files", "RLIMIT_NOFILE"), ("file_bytes", "RLIMIT_FSIZE"),
           ("processes", "RLIMIT_NPROC"))


def limit_self(limits: RunLimits) -> None:
    """Over stdio the host may be on another machine and cannot set the
    run's rlimits from outside: the guest lowers its own (never raising a
    limit already set; the container's limits hold besides)."""
    import resource

    for field, name in RLIMITS:
        value = getattr(limits, field)
        if value is None:
            continue
        _, hard = resource.getrlimit(getattr(resource, name))
        value = value if hard == resource.RLIM_INFINITY else min(value, hard)
        with contextlib.suppress(OSError, ValueError):
            resource.setrlimit(getattr(resource, name), (value, value))


def main(cwd: str | None, warm: bool = False, stdio: bool = False) -> None:
    """``warm``: the guest waits in a pool, so it loads asyncio and makes its
    event loop before RUN; a cold guest loads them only for a program that
    imports asyncio (the only programs that run on the loop). ``stdio``: the
    frames travel on fds 0 and 1 instead of fd 3 (spec §3.1)."""
    if cwd is not None:
        os.chdir(cwd)
    channel = Channel.stdio() if stdio else Channel()
    real_stdout, real_stderr = sys.stdout, sys.stderr
    raw = None
    try:
        channel.send(Hello(
            implementation=f"tether-python/{__version__} {sys.implementation.name}/"
                           f"{'.'.join(map(str, sys.version_info[:3]))}",
            languages=LANGUAGES,
        ))
        loop = None
        if warm:  # while the host has nothing for us yet
            from .aio import new_loop

            loop = new_loop()
        # What the program's process writes to fds 1 and 2 is its output too
        # (R-OUTPUT-5), and it runs as a script would (R-RUN-9).
        raw = RawOutput.capture()
        script.prepare()
        run = channel.receive_blocking()
        if run is CONNECTION_CLOSED:
            os._exit(0)
        if not isinstance(run, Run):
            raise ProtocolError(ErrorCode.UNEXPECTED_MESSAGE, f"expected RUN, got {run!r}")
        if run.language not in LANGUAGES:
            raise ProtocolError(ErrorCode.LANGUAGE_UNSUPPORTED, f"cannot run {run.language!r}")
        # Past file_bytes (RLIMIT_FSIZE, set by the host) a write fails with
        # EFBIG instead of killing the process.
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        interrupt.arm(channel.read_fd)
        if stdio:
            limit_self(run.limits)
            interrupt.watch_for_end(channel.read_fd)
        run_program(channel, run, loop, raw=raw)
    except ProtocolError as exc:
        channel.fail(exc)
    except OSError:
        os._exit(1)  # the host went away
    finally:
        if raw is not None:
            raw.release()
        for stream in (real_stdout, real_stderr):
            with contextlib.suppress(OSError, ValueError):
                stream.flush()
    # The host, woken by DONE, may wait for this CPU: it gets it before the
    # exit (tearing down the address space) does.
    os.sched_yield()
    os._exit(0)  # R-DONE-4: nothing of the program's outlives DONE
