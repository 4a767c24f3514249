"""Binding names as identifiers the program can write.

A binding may be named anything (``get-weather``, ``class``): tools from
other systems are. The program sees one identifier per binding, valid in
every guest language, so the text the model reads, the name in the guest's
scope and the CALL's name are the same string; the host maps it back.
"""

from __future__ import annotations

import keyword
import re

_INVALID = re.compile(r"[^A-Za-z0-9_]")

# Reserved words of JavaScript and TypeScript (ES2023 strict mode, plus the
# names a `declare function` may not take); Python's come from `keyword`.
_JS_RESERVED = frozenset({
    "arguments", "await", "break", "case", "catch", "class", "const", "continue", "debugger",
    "default", "delete", "do", "else", "enum", "eval", "export", "extends", "false", "finally",
    "for", "function", "if", "implements", "import", "in", "instanceof", "interface", "let",
    "new", "null", "package", "private", "protected", "public", "return", "static", "super",
    "switch", "this", "throw", "true", "try", "typeof", "var", "void", "while", "with", "yield",
})


def identifier(name: str) -> str:
    """``name`` as an identifier in Python, JavaScript and TypeScript:
    invalid characters become ``_``, a leading digit gets a ``_`` before it,
    a reserved word a ``_`` after it (``get-weather`` → ``get_weather``,
    ``class`` → ``class_``)."""
    if not isinstance(name, str) or not name:
        raise ValueError(f"binding name {name!r} is empty or not a str")
    mapped = _INVALID.sub("_", name)
    if mapped[0].isdigit():
        mapped = "_" + mapped
    if is_reserved(mapped):
        mapped += "_"
    return mapped


def is_reserved(name: str) -> bool:
    return keyword.iskeyword(name) or name in _JS_RESERVED


def is_identifier(name: str) -> bool:
    """A name usable as is in every guest language."""
    return bool(name) and identifier(name) == name
