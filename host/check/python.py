"""The pre-run check for Python programs, host side: the stubs the
program is checked against, the confined checker's command line
(guest/python/check.py, which parses the program, lays it out and runs ty
on it), the request it is sent and its answer read back.

ty (Astral's checker, the one pydantic's Monty uses) was chosen over mypy
and basedpyright: it answers a check in a fresh process faster than the
others do warm, so nothing needs to stay running (bench/README.md has the
figures). Each check is a checker process of its own, run by the guests'
interpreter (a syntax error is the one the guest would report), with ty's
binary, tether's confinement code and ``python_packages`` in its file
view, and nothing else of the host's.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from functools import cache
from typing import Any

from ..bindings import stubs_python
from ..bindings.description import Description
from ..bindings.stubs_python import Keys
from ..guests.languages import GuestCommand, Interpreters, Packages, guest_env
from ..result import RunError
from ..sandbox.paths import GUEST_DIR, PACKAGE_DIR
from .processes import NotChecked

_GUEST_NAMES = '''

class BindingError(Exception):
    """A binding call failed on the host."""
    binding: str
    type: str
    message: str
    code: int

def help(*request: object) -> None: ...
'''
#: ty's own threads: one is enough for a single file, and the checker's
#: process count stays small.
_TY_THREADS = "1"


def stubs(descriptions: Iterable[Description], variables: Sequence[str] = (), *,
          one_dict: bool = True) -> tuple[str, dict[str, Keys]]:
    """The stubs the program is checked against: the bindings, the names
    the guest adds (BindingError, help) and the run's variables (of any
    type); and the keys of the TypedDicts they declare. ``__all__`` names
    them all: a star import leaves out names that begin with ``_`` (a
    binding may). ``one_dict``: an explicit binding taking keywords is also
    declared taking them as one dict (stubs_python.rendered)."""
    descriptions = list(descriptions)
    text, typed_dicts = stubs_python.rendered(descriptions, one_dict=one_dict)
    declared = "".join(f"{name}: __TetherAny\n" for name in variables)
    text += _GUEST_NAMES + ("from typing import Any as __TetherAny\n" + declared
                            if declared else "")
    names = [*(d.identifier for d in descriptions), *typed_dicts, "BindingError", "help",
             *variables]
    return text + f"__all__ = {names!r}\n", typed_dicts


@cache
def find_ty() -> str:
    """ty's binary; raises NotChecked where it is not installed."""
    try:
        from ty import find_ty_bin

        return os.path.realpath(find_ty_bin())
    except (ImportError, FileNotFoundError):
        raise NotChecked("ty is not installed (the check extra: pip install "
                         "'tether[check]')") from None


def command(workdir: str, ty: str, interpreters: Interpreters, seccomp: bytes,
            packages: Packages) -> GuestCommand:
    """The checker, as the guests' interpreter runs it: it confines itself
    (as the CPython guest does) and may read ty and ``python_packages``
    besides what every guest may."""
    argv = [os.path.realpath(interpreters.python), "-I", "-S", "-B",
            str(GUEST_DIR / "python" / "check.py"), "--cwd", workdir, "--ty", ty,
            "--path", str(PACKAGE_DIR.resolve().parent)]
    binds: tuple[str, ...] = (ty,)
    if packages.python:
        argv += ["--packages", packages.python]
        binds += (packages.python,)
    return GuestCommand(tuple(argv), guest_env(workdir, {"TY_MAX_PARALLELISM": _TY_THREADS}),
                        seccomp, landlock=True, confines_itself=True, binds=binds)


def request(source: str, descriptions: Iterable[Description],
            variables: Sequence[str]) -> dict[str, Any]:
    """What the checker is sent: the program, its stubs (and, where they
    declare a binding in two forms, the stubs of its keyword form alone:
    guest/python/check.py asks ty again with them where it could not say
    which form a call missed) and what it needs to map ty's view back to
    the run's."""
    descriptions = list(descriptions)
    text, typed_dicts = stubs(descriptions, variables)
    keywords, _ = stubs(descriptions, variables, one_dict=False)
    return {"source": source, "stubs": text, "variables": list(variables),
            "keyword_stubs": keywords if keywords != text else None,
            "typed_dicts": {name: {"every": sorted(keys.every), "required": sorted(keys.required)}
                            for name, keys in typed_dicts.items()}}


def diagnostics(answer: dict[str, Any], source: str) -> tuple[RunError, ...]:
    """The checker's answer as the program's problems; raises NotChecked
    for an answer that says the check failed, or is not one. The checker
    read an untrusted program: every field is checked."""
    found = answer.get("diagnostics")
    if not isinstance(found, list):
        raise NotChecked(f"the checker failed: {str(answer.get('error'))[:500]}")
    last = max(1, len(source.splitlines()))
    problems = []
    for item in found:
        if not (isinstance(item, dict) and isinstance(item.get("type"), str)
                and isinstance(item.get("message"), str)
                and isinstance(item.get("line"), int) and isinstance(item.get("column"), int)):
            raise NotChecked("the checker's answer is malformed")
        problems.append(RunError(type=item["type"], message=item["message"],
                                 line=min(max(1, item["line"]), last),
                                 column=max(1, item["column"])))
    return tuple(problems)
