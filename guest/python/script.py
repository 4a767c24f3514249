"""The program as a script: what plain CPython shows a script of itself
(``python3 script.py``), the guest shows the program too.

- ``sys.argv`` and ``__file__`` name the program as its tracebacks do,
  ``<program>``;
- ``sys.modules`` holds none of the guest's own packages (``tether``,
  ``cbor2``): the program cannot import them, as a script could not (their
  modules stay loaded, as do the standard library's the guest uses);
- its stack ends at its own first frame (``traceback.extract_stack()``,
  ``inspect.stack()``), and it has a script's room to recurse: the guest's
  frames below it do not count against ``sys.getrecursionlimit()``;
- as it ends, what the interpreter does at its exit: ``atexit`` handlers
  run, then the module's dictionary is emptied and collected, so the
  ``__del__`` of what it held runs.

``sys._getframe().f_back`` of the first frame is still the guest's: a frame's
caller cannot be hidden from Python code.
"""

from __future__ import annotations

import atexit
import gc
import inspect
import sys
import traceback
import warnings
from collections.abc import Iterator
from types import CodeType, FrameType
from typing import Any, Final

from .program import FILENAME

#: The guest's own top-level packages.
_OWN: Final = ("tether", "cbor2")
_hidden: list[Any] = []


class _State:
    #: The program runs as a script (not a rehearsal), and its first frame
    #: runs this code (its module's, or its function's).
    bottom: CodeType | None = None
    #: Frames below the program's first one, as the recursion limit counts them.
    below: int | None = None
    #: ``atexit`` handlers registered before the program ran (the guest's:
    #: ``logging.shutdown``, with nothing of the program's to shut down).
    handlers = 0


_state = _State()


def prepare() -> None:
    """While the guest waits for its RUN: the interpreter as a script would
    find it (the guest's own imports from now on are of modules it has
    loaded, or of their packages' other modules)."""
    sys.argv = [FILENAME]
    _state.bottom = None  # its pages written now, not at the run
    _state.handlers = atexit._ncallbacks()
    for name in _OWN:
        # Its packages cannot be imported, and nothing of the guest is freed:
        # a forked guest's pages stay the template's.
        _hidden.append(sys.modules.pop(name, None))


def begin(namespace: dict[str, Any], code: CodeType) -> None:
    """Before the program runs: its names, and where its stack ends."""
    namespace["__file__"] = FILENAME
    namespace["__cached__"] = None
    _state.bottom = code


def enter(frame: FrameType, *, from_c: int = 0) -> None:
    """The program's first frame is about to run, called from ``frame``: from
    now on the frames below it do not count against the recursion limit.
    On CPython 3.11 the limit counts a frame called from C code twice: the
    guest's first frame is one (as a script's is), and ``from_c`` more of
    the frames below."""
    if _state.bottom is None or _state.below is not None:
        return
    below = 0
    while frame is not None:
        below += 1
        frame = frame.f_back  # type: ignore[assignment]
    if sys.version_info < (3, 12):
        below += 1 + from_c
    _state.below = below
    _set_limit(_get_limit() + below)


_get_limit = sys.getrecursionlimit
_set_limit = sys.setrecursionlimit


def _getrecursionlimit() -> int:
    return _get_limit() - (_state.below or 0)


def _setrecursionlimit(limit: int, /) -> None:
    _set_limit(limit + (_state.below or 0)) if isinstance(limit, int) else _set_limit(limit)


_getrecursionlimit.__doc__ = _get_limit.__doc__
_setrecursionlimit.__doc__ = _set_limit.__doc__
sys.getrecursionlimit = _getrecursionlimit
sys.setrecursionlimit = _setrecursionlimit

_walk_stack = traceback.walk_stack
_getouterframes = inspect.getouterframes


def _walk_program_stack(f: FrameType | None) -> Iterator[tuple[FrameType, int]]:
    if f is None:  # as traceback.walk_stack: the caller of its consumer's caller
        f = sys._getframe().f_back.f_back.f_back.f_back  # type: ignore[union-attr]
    while f is not None:
        yield f, f.f_lineno
        if f.f_code is _state.bottom:
            return
        f = f.f_back


def _program_outer_frames(frame: FrameType, context: int = 1) -> list[inspect.FrameInfo]:
    frames = _getouterframes(frame, context)
    for index, info in enumerate(frames):
        if info.frame.f_code is _state.bottom:
            return frames[:index + 1]
    return frames


_walk_program_stack.__doc__ = _walk_stack.__doc__
_program_outer_frames.__doc__ = _getouterframes.__doc__
traceback.walk_stack = _walk_program_stack
inspect.getouterframes = _program_outer_frames


def exit_handlers() -> None:
    """The ``atexit`` handlers, last registered first, as the interpreter
    runs them after its threads (an error in one is printed and the others
    run), where the program registered one."""
    if atexit._ncallbacks() > _state.handlers:
        atexit._run_exitfuncs()


def finalize(namespace: dict[str, Any], *, failed: bool = False) -> None:
    """The program's module as the interpreter leaves it at its exit: its
    dictionary emptied, what it held let go in the order it was defined,
    then, where the program defined a finalizer (``__del__``) or ``failed``
    (its traceback's frames hold what they held), what is left collected.
    What that finalizes warns as at the exit, where no frame runs: from
    ``sys:1``. (A run that needs neither is spared the collection.)"""
    held = list(namespace.values())
    namespace.clear()
    collect = failed or any(isinstance(value, type) and hasattr(value, "__del__")
                            for value in held)
    show = warnings.showwarning

    def at_the_exit(message: Any, category: Any, filename: str, lineno: int,
                    file: Any = None, line: str | None = None) -> None:
        if filename != FILENAME:
            filename, lineno, line = "sys", 1, None
        show(message, category, filename, lineno, file, line)

    warnings.showwarning = at_the_exit
    try:
        for index in range(len(held)):
            held[index] = None
        del held
        if collect:
            gc.collect()
    finally:
        if warnings.showwarning is at_the_exit:
            warnings.showwarning = show
