"""The pre-run check for TypeScript and JavaScript programs, host side: the
declarations the program is checked against, the confined compiler's
command line (``guest/node/check.mjs``, kept running so that a check does
not pay the compiler's start-up and the library files are parsed once), the
request it is sent and its answer read back.

TypeScript programs get the compiler's errors (``strict``, implicit
``any`` allowed); JavaScript programs go through ``checkJs`` and keep only
what it knows for sure: unknown names, argument counts and the types of
arguments written out in the call. The compiler reads the program as text,
never runs it, and reads no file but its own library declarations.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ..bindings import stubs_typescript
from ..bindings.description import Description
from ..guests.languages import GuestCommand, guest_env
from ..result import RunError
from ..sandbox.paths import GUEST_DIR
from .processes import NotChecked

_GUEST_NAMES = """
declare class BindingError extends Error {
  readonly binding: string;
  readonly type: string;
  readonly code: number;
  readonly message: string;
}
"""
#: The compiler's heap (MiB): below the checker's memory limit, so that a
#: check that needs more fails in V8, not in the kernel.
_HEAP_MIB = 768


def declarations(descriptions: Iterable[Description]) -> str:
    return stubs_typescript.render(descriptions) + _GUEST_NAMES


def command(workdir: str, node: str, seccomp: bytes) -> GuestCommand:
    """The compiler's process: Node running check.mjs, confined as a Node
    guest is (through guest/python/confine.py under ``process``)."""
    argv = (node, "--disable-warning=ExperimentalWarning", f"--max-old-space-size={_HEAP_MIB}",
            str(GUEST_DIR / "node" / "check.mjs"))
    return GuestCommand(argv, guest_env(workdir), seccomp, landlock=True)


def request(source: str, language: str, descriptions: Iterable[Description],
            variables: Sequence[str]) -> dict[str, Any]:
    """One check's request; ``variables``: the names the run defines before
    the program starts (of any type to the check)."""
    return {"language": language, "declarations": declarations(descriptions),
            "source": source, "variables": list(variables)}


def diagnostics(answer: dict[str, Any], source: str) -> tuple[RunError, ...]:
    """The compiler's answer as the program's problems (those of the
    declarations themselves, a fault of the renderer, left out); raises
    NotChecked for an answer that says the check failed, or could not be
    made (a run with a variable it cannot declare: guest/node/check.mjs).
    The compiler read an untrusted program: every field is checked."""
    found = answer.get("diagnostics")
    if found is None:
        why = answer.get("error")
        raise NotChecked(f"the checker failed: {str(why)[:500]}" if why is not None else
                         "a variable of the run has a name only sloppy JavaScript allows")
    if not isinstance(found, list):
        raise NotChecked("the checker's answer is malformed")
    last = max(1, len(source.splitlines()))
    problems = []
    for item in found:
        if not (isinstance(item, dict) and isinstance(item.get("code"), int)
                and isinstance(item.get("message"), str)
                and all(item.get(key) is None or isinstance(item.get(key), int)
                        for key in ("line", "column"))):
            raise NotChecked("the checker's answer is malformed")
        if item.get("in") == "declarations":
            continue
        line = item.get("line")
        problems.append(RunError(type=f"TS{item['code']}", message=item["message"],
                                 line=None if line is None else min(max(1, line), last),
                                 column=item.get("column")))
    return tuple(problems)
