"""The text a model reads before writing a program: the program contract
(what the source is, how it returns, what it may import, the run's limits)
followed by the bindings' declarations in the program's language."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from ..limits import Limits
from . import stubs_python, stubs_typescript
from .description import Description

_PYTHON = """\
Write a Python program: the body of an async function. Top-level `await` works;
so does a script ending in `asyncio.run(main())` (not both: with top-level `await`,
write `await main()`). `return <value>` ends the program with that value; what it
prints, and what its subprocesses write, is the log.
The functions declared below are already defined: call them with `await`, do not
import them. A failed call raises `BindingError` (`.type`, `.message`).
Values passed to and from them are None, bool, int, float, str, bytes, list and
dict with str keys. The standard library can be imported; use `asyncio.gather`
to make calls concurrently. `sys.exit()` ends the program; `os._exit()` ends it
as a crash.
"""

_JAVASCRIPT = """\
Write a {language} program: the body of an async function. Top-level `await` works;
`return <value>` ends the program with that value; console.log and console.error
write the log. The functions declared below are already defined: call them with
`await`, do not import them. A failed call rejects with a `BindingError` (`.type`,
`.message`). Values passed to and from them are null, boolean, number, bigint,
string, Uint8Array, arrays and plain objects. Node's built-in modules load
with `import` or `require`; the program is one file, with no local modules to
import. Use `Promise.all` to make calls concurrently. The program ends as
`node` ends a script: pending timers run first, and an unhandled rejection or
a non-zero `process.exitCode` fails it. Throw `Error` objects: a thrown string or
plain object fails the program without a line. As in an ES module,
`process.nextTick` callbacks run after promise callbacks.
"""

LANGUAGES = ("python", "javascript", "typescript")


def contract(language: str, limits: Limits, modules: Iterable[str] = ()) -> str:
    """``modules``: third-party packages a program may import besides the
    standard library (the Runtime's ``python_packages`` or ``node_packages``)."""
    text = _PYTHON if language == "python" else _JAVASCRIPT.format(
        language="TypeScript" if language == "typescript" else "JavaScript")
    names = sorted(modules)
    if names:
        text += f"Also importable: {', '.join(names)}.\n"
    return text + (
        f"Limits: {limits.timeout:g} s in all, {limits.output_bytes} bytes of output, "
        f"{limits.value_bytes} bytes per value, {limits.max_calls_in_flight} calls at a time.\n")


def declarations(descriptions: Iterable[Description], language: str) -> str:
    """The stubs (Python) or the ``.d.ts`` (JavaScript, TypeScript)."""
    if language == "python":
        return stubs_python.render(descriptions)
    return stubs_typescript.render(descriptions)


def summaries(descriptions: Iterable[Description]) -> str:
    """One line per binding: its name and the first line of its description."""
    return "".join(f"- {d.identifier}: {d.summary}\n" for d in descriptions)


#: The binding a program calls for a declaration it was not shown (see :func:`lookup`).
LOOKUP = "describe_binding"


def text(descriptions: Iterable[Description], language: str, limits: Limits, *,
         summary_only: bool = False, modules: Iterable[str] = ()) -> str:
    """The whole text: the contract, then the declarations (or, with
    ``summary_only``, the names and one-line summaries, and how to read a
    declaration: the run must then include the binding :func:`lookup` makes,
    named ``describe_binding``)."""
    if language not in LANGUAGES:
        raise ValueError(f"unsupported language {language!r}; tether describes: "
                         f"{', '.join(LANGUAGES)}")
    descriptions = [d for d in descriptions if d.identifier != LOOKUP]
    fence = "python" if language == "python" else "typescript"
    if summary_only:
        argument = f'"{descriptions[0].identifier}"' if descriptions else '"name"'
        return (contract(language, limits, modules) + "\nFunctions (only their names are shown: "
                f"`await {LOOKUP}({argument})` returns one's full declaration as text; "
                "read it before calling a function):\n" + summaries(descriptions))
    return (contract(language, limits, modules) + f"\nDeclarations:\n```{fence}\n"
            + declarations(descriptions, language) + "```\n")


def lookup(descriptions: Iterable[Description], language: str) -> Callable[[str], str]:
    """A binding that returns one binding's declaration as text (with the
    types it uses), for programs given only the summaries."""
    by_name = {d.identifier: d for d in descriptions if d.identifier != LOOKUP}

    def describe_binding(name: str) -> str:
        """The full declaration of one of the functions listed, as text.

        Args:
            name: the function's name, as listed
        """
        description = by_name.get(name)
        if description is None:
            raise KeyError(f"no function named {name!r}; there are: {', '.join(by_name)}")
        return declarations([description], language)

    return describe_binding
