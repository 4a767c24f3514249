"""Stopping a program that computes when the host ends the run (R-CANCEL-3).

A program that neither awaits nor calls a binding never lets the guest read
fd 3, so a CANCEL would wait there unread. The host follows CANCEL with
SIGTERM (R-TERM-2); its handler, which CPython runs on the main thread
between two bytecodes of the program (or when a blocking call such as
``time.sleep`` is interrupted), raises :class:`ProgramCancelled` where the
program is, so the DONE's traceback shows the line it was running.

The handler raises only into the program's own code. While the guest's code
runs (a frame half written, a wait for the host's answer) it raises
nothing: a program waiting on the host is stopped by the CANCEL frame the
guest reads next, and one inside ``print`` by :func:`check` when the write
returns to it. Until the signal comes, all this costs a program is that check.
"""

from __future__ import annotations

import fcntl
import os
import select
import signal
import sys
import threading
import traceback
from types import FrameType
from typing import Final

from tether import codec

from .program import FILENAME

#: Frames of the guest itself (this folder, and the codec it writes frames with).
_GUEST: Final = (os.path.dirname(__file__) + os.sep, os.path.dirname(codec.__file__) + os.sep)


class ProgramCancelled(BaseException):  # not the program's error: no "Error" suffix
    """Raised into a program run without asyncio when CANCEL or EOF arrives,
    and into any program where it computes when SIGTERM follows the CANCEL."""


ProgramCancelled.__module__ = "builtins"  # as tracebacks name it (R-DONE-2)

#: What poll reports for a stream whose other end will send nothing more.
_ENDED: Final = select.POLLHUP | select.POLLERR | getattr(select, "POLLRDHUP", 0)


class _State:
    #: Set while the program runs: a SIGTERM then interrupts it, once.
    armed = False
    #: Where the host's frames arrive.
    channel = -1
    #: The program's thread, the one the interruption is raised in.
    main_thread = 0
    #: The guest has read the host's CANCEL (or EOF).
    cancelled = False
    #: The host's stream has ended: read, or seen by :func:`watch_for_end`.
    ended = False
    #: The signal came while the guest's code ran inside the program's.
    pending = False
    #: The end was seen while only the guest's code ran (compiling, waiting
    #: for a binding's answer): raised where it hands control to the program.
    at_handover = False
    #: The program's frames where the signal stopped it.
    stack: traceback.StackSummary | None = None
    #: The name of what was raised there.
    raised = "ProgramCancelled"
    #: The guest is reading the host's frames inside the program's (a loop
    #: the program started): a SIGTERM then waits for what they say.
    reading = False
    #: A SIGTERM came meanwhile, with no CANCEL read before it.
    term_while_reading = False


_state = _State()


def reset() -> None:
    """A fresh state, for a process that runs programs one after another
    (the tests' in-memory guest, tests/memory_guest.py); a guest process
    runs one, and never needs it."""
    global _state
    _state = _State()


def arm(channel: int) -> None:
    """From now on a SIGTERM that follows a frame from the host on
    ``channel`` (its CANCEL) interrupts the program; before, and for any
    other SIGTERM (the program's own), the guest dies of it as always."""
    _state.armed = True
    _state.channel = channel
    _state.main_thread = threading.get_ident()
    signal.signal(signal.SIGTERM, _on_terminate)


def disarm() -> None:
    """The program has ended: nothing is raised any more, whatever comes
    (code of the program's that the guest runs while it sends the DONE, a
    ``__str__`` or a dict's ``items``, cannot be interrupted out of it)."""
    _state.armed = _state.pending = _state.at_handover = False


def watch_for_end(channel: int) -> None:
    """Over stdio the host's SIGTERM reaches the carrier, not the guest
    (R-STDIO-6), and a program that computes never lets the guest read the
    end of its stream. So the kernel signals SIGIO whenever the channel has
    news (O_ASYNC), and the handler, reading nothing, looks whether the
    stream has ended; if it has, it does what the host's SIGTERM would
    (R-STDIO-7). A signal, not a thread: a thread would count against the
    run's ``memory_bytes`` and ``processes``."""
    signal.signal(signal.SIGIO, _on_io)
    # SIGIO comes with every frame too: a system call the program waits in
    # goes on after it (sleeps and polls still end, as for any signal).
    signal.siginterrupt(signal.SIGIO, False)
    try:
        fcntl.fcntl(channel, fcntl.F_SETOWN, os.getpid())
        fcntl.fcntl(channel, fcntl.F_SETFL, fcntl.fcntl(channel, fcntl.F_GETFL) | os.O_ASYNC)
    except OSError:  # no signal to be had: the engine's kill remains
        return
    _on_io(signal.SIGIO, None)  # it may have ended already


def cancel_read(*, eof: bool = False) -> None:
    """The guest read CANCEL, or EOF (``eof``): a SIGTERM now is the host's,
    and the guest raises its own cancellation where the program waits."""
    _state.cancelled = True
    _state.ended = _state.ended or eof
    _state.at_handover = False


def delivered(raised: str | None = None) -> None:
    """The guest has raised the CANCEL it read where the program waits (a
    binding call, or the program's task): that was the interruption, and
    the SIGTERM that follows leaves the program's cleanup alone, as a
    second Ctrl-C never came. ``raised``: the exception's name, when the
    guest keeps where the program waited for the DONE (a loop of the
    program's own: what comes out of ``asyncio.run`` has left ``main()``)."""
    if not _state.armed:
        return
    _state.armed = _state.pending = _state.at_handover = False
    if raised is not None:
        stack = _stack_at(sys._getframe(1))
        if any(f.filename == FILENAME for f in stack):
            _state.stack, _state.raised = stack, raised


def cancelled() -> bool:
    """Whether the guest has read the host's CANCEL (or EOF)."""
    return _state.cancelled


def ended() -> bool:
    """Whether the host's stream has ended: a binding call then raises the
    cancellation at once, without a frame (R-TRANS-4)."""
    return _state.ended


def read_begins() -> None:
    """The guest reads fd 3 inside the program's frames (an event loop the
    program started): the CANCEL that precedes the host's SIGTERM may be
    read but not yet handled when the signal comes."""
    _state.reading = True


def read_ends() -> None:
    """The frames read are handled: a SIGTERM that came meanwhile and
    followed no CANCEL is the program's own (or another process's), of
    which the guest dies as always."""
    _state.reading = False
    if _state.term_while_reading:
        _state.term_while_reading = False
        if not _state.cancelled:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGTERM)


def check() -> None:
    """Raise the interruption that came while the guest's code ran inside
    the program's (its ``print``), now that control returns to it, on the
    program's own thread."""
    if _state.pending and _state.armed and threading.get_ident() == _state.main_thread:
        _state.pending = False
        _state.armed = False
        _state.stack = traceback.extract_stack(sys._getframe(1))
        raise ProgramCancelled


def handover() -> None:
    """Where the guest hands control to the program (its first line, a
    binding's answer): raise the end of the stream seen meanwhile. The
    exception's own traceback says where the program was."""
    if _state.at_handover and _state.armed:
        _state.at_handover = False
        _state.armed = False
        raise ProgramCancelled


def stopped_at() -> tuple[str, int | None] | None:
    """Where the signal stopped the program: its traceback (its own frames
    only) and line; None if it did not. The stack is the one taken when
    the signal came, not the exception's, which a program that catches it,
    or a task of its that awaits the stopped one, would change."""
    if _state.stack is None:
        return None
    frames = [f for f in _state.stack if f.filename == FILENAME]
    text = "".join(["Traceback (most recent call last):\n",
                    *traceback.StackSummary.from_list(frames).format(), _state.raised + "\n"])
    return text, frames[-1].lineno if frames else None


def _on_terminate(signum: int, frame: FrameType | None) -> None:
    if not _state.armed:
        return
    where = _innermost(frame)
    if where is None:
        return  # the guest's own code: it reads the CANCEL, or is ending the run
    if not _state.cancelled and not select.select([_state.channel], [], [], 0)[0]:
        if _state.reading:  # the CANCEL may be read already: decided once it is handled
            _state.term_while_reading = True
            return
        # Not after a CANCEL: the program's own, or another process's.
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)
        return
    _interrupt(where, frame)


def _on_io(signum: int, frame: FrameType | None) -> None:
    if _state.ended or not _state.armed:
        return
    # A poll object of each call's own: one SIGIO may come while the
    # handler of another polls, and a poll object polls once at a time.
    poller = select.poll()
    poller.register(_state.channel, _ENDED)
    try:
        ready = poller.poll(0)
    except OSError:
        return
    if any(events & _ENDED for _, events in ready):
        _state.ended = _state.cancelled = True
        where = _innermost(frame)
        if where is None:
            # No SIGTERM follows: unless the guest reads the end itself (it
            # waits on the host), it is raised where the guest hands over.
            _state.at_handover = True
        else:
            _interrupt(where, frame)


def _interrupt(where: str, frame: FrameType | None) -> None:
    if where == "program":
        _state.armed = False
        _state.stack = _stack_at(frame)
        raise ProgramCancelled
    _state.pending = True


def _stack_at(frame: FrameType | None) -> traceback.StackSummary:
    """The stack at ``frame``; where an event loop of the program's waits
    there for a task (``asyncio.run(main())`` between two steps), with the
    coroutines that task is suspended in: the program waits in them."""
    stack = traceback.extract_stack(frame)
    base_events = sys.modules.get("asyncio.base_events")
    if base_events is None:
        return stack
    waiting = base_events.BaseEventLoop.run_until_complete.__code__
    while frame is not None and frame.f_code is not waiting:
        if frame.f_code.co_filename == FILENAME:
            return stack  # a step of the program's runs: it is where it is
        frame = frame.f_back
    task = frame.f_locals.get("future") if frame is not None else None
    coroutine = getattr(task, "get_coro", lambda: None)()
    suspended = []
    while coroutine is not None:
        inner = getattr(coroutine, "cr_frame", None) or getattr(coroutine, "gi_frame", None)
        if inner is None:
            break
        suspended.append((inner, inner.f_lineno))
        coroutine = getattr(coroutine, "cr_await", None) or getattr(coroutine, "gi_yieldfrom", None)
    return traceback.StackSummary.from_list([*stack, *traceback.StackSummary.extract(suspended)])


def _innermost(frame: FrameType | None) -> str | None:
    """Whose code runs: ``"program"`` when the program's own frame comes
    before any of the guest's (library code the program called counts as
    the program's), ``"guest"`` when the guest's code runs inside the
    program's, None when the program is not on the stack at all (the
    guest waits on the host, or the program has ended)."""
    guest = False
    while frame is not None:
        name = frame.f_code.co_filename
        if name == FILENAME:
            return "guest" if guest else "program"
        # This module's own frames are a handler that a second signal
        # interrupted (SIGIO comes with every frame): where that handler
        # came is what counts.
        if name.startswith(_GUEST) and name != __file__:
            guest = True
        frame = frame.f_back
    return None
