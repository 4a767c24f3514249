"""Python stubs for a set of bindings, from their JSON Schemas.

One ``async def`` per binding with the binding's own call convention, a
``TypedDict`` per object type, ``Literal`` for enumerations and a docstring
with ``Args:``. The text is valid Python (and a valid ``.pyi``: the pre-run
check type-checks programs against it).
"""

from __future__ import annotations

import builtins
import keyword
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .description import (
    Description,
    ParamKind,
    TypeNames,
    alternatives,
    ref_name,
    resolve,
    schema_text,
    type_name,
)

HEADER = "from typing import Any, Literal, NotRequired, TypedDict\n"


@dataclass(frozen=True, slots=True)
class Keys:
    """A TypedDict's keys, and those it requires."""

    every: frozenset[str]
    required: frozenset[str]


class _Types:
    """Turns schemas into type expressions, collecting the TypedDicts they name."""

    def __init__(self, taken: set[str]) -> None:
        self.classes: list[str] = []
        self.keys: dict[str, Keys] = {}  # of each TypedDict in classes
        self._names = TypeNames(taken)

    def expression(self, schema: Any, root: Mapping[str, Any], hint: str) -> str:
        if schema is True or not isinstance(schema, Mapping) or not schema:
            return "Any"
        name = ref_name(schema)
        if name is not None:
            return self.expression(resolve(schema, root), root, name)
        if "const" in schema:
            return _literals([schema["const"]])
        if "enum" in schema and isinstance(schema["enum"], list):
            return _literals(schema["enum"])
        options = alternatives(schema)
        if options is not None:
            return _union(self.expression(s, root, hint) for s in options)
        kind = schema.get("type")
        if kind == "null":
            return "None"
        if kind == "boolean":
            return "bool"
        if kind == "integer":
            return "int"
        if kind == "number":
            return "float"
        if kind == "string":
            return "bytes" if schema.get("format") == "binary" else "str"
        if kind == "array":
            if isinstance(schema.get("prefixItems"), list):
                items = [self.expression(s, root, hint) for s in schema["prefixItems"]]
                return f"tuple[{', '.join(items)}]" if items else "tuple[()]"
            return f"list[{self.expression(schema.get('items', {}), root, hint + 'Item')}]"
        if kind == "object" or "properties" in schema:
            properties = schema.get("properties")
            if isinstance(properties, Mapping) and properties:
                return self._typed_dict(schema, root, hint)
            extra = schema.get("additionalProperties", {})
            return f"dict[str, {self.expression(extra, root, hint + 'Value')}]"
        return "Any"

    def _typed_dict(self, schema: Mapping[str, Any], root: Mapping[str, Any], hint: str) -> str:
        name, new = self._names.name(schema, hint)
        if not new:
            return name
        required = set(schema.get("required", []))
        self.keys[name] = Keys(frozenset(schema["properties"]),
                               frozenset(required & set(schema["properties"])))
        fields = []
        for field, sub in schema["properties"].items():
            text = self.expression(sub, root, name + type_name(field))
            fields.append((field, text if field in required else f"NotRequired[{text}]",
                           _about(sub, root)))
        if all(_is_name(f) for f, _, _ in fields):
            lines = [f"class {name}(TypedDict):"]
            doc = schema_text(schema, root)
            if doc:
                lines.append(_docstring(doc, "    "))
            for field, text, about in fields:
                lines.append(f"    {field}: {text}" + (f"  # {_one_line(about)}" if about else ""))
            if len(lines) == 1:
                lines.append("    pass")
        else:  # keys that are not identifiers: the functional form
            items = ", ".join(f"{field!r}: {text}" for field, text, _ in fields)
            lines = [f"{name} = TypedDict({name!r}, {{{items}}})"]
        self.classes.append("\n".join(lines))
        return name


def render(descriptions: Iterable[Description]) -> str:
    """The stubs, as one Python module."""
    return rendered(descriptions)[0]


def rendered(descriptions: Iterable[Description], *,
             one_dict: bool = False) -> tuple[str, dict[str, Keys]]:
    """The stubs, and the keys of the TypedDicts they declare. ``one_dict``:
    an explicit binding taken by keywords is also declared taking them as
    one dict (an overload), which it admits: for the check, not for the
    model to read."""
    descriptions = list(descriptions)
    types = _Types({d.identifier for d in descriptions} | _TAKEN)
    functions = [_one_dict(d, types) if one_dict and d.explicit and _keyword_form(d)
                 else _function(d, types) for d in descriptions]
    header = HEADER + ("from typing import overload as __tether_overload__\n" if one_dict else "")
    parts = [header, *types.classes, *functions]
    return "\n\n".join(part.rstrip("\n") for part in parts) + "\n", types.keys


def _keyword_form(description: Description) -> bool:
    """Whether an explicit binding is declared taking its arguments by keyword."""
    return all(_is_name(key) for key in description.parameters.get("properties", {}))


def _one_dict(description: Description, types: _Types) -> str:
    """The keyword form and the one-dict form, as overloads."""
    keywords, returns = _signature(description, types)
    root = description.parameters
    argument = types.expression({**root, "title": None}, root,
                                type_name(description.identifier) + "Arguments")
    name = description.identifier
    return (f"@__tether_overload__\nasync def {name}({', '.join(keywords)}) -> {returns}: ...\n"
            f"@__tether_overload__\nasync def {name}(arguments: {argument}, /) -> {returns}: ...")


#: Names a TypedDict must not take: the header's, the guest's and Python's
#: builtins (the check star-imports the stubs into the program's scope).
_TAKEN = frozenset({"Any", "Literal", "TypedDict", "NotRequired", "BindingError", *dir(builtins)})


def signature(description: Description) -> str:
    """``(query: str, limit: int = 3) -> list[Hit]``: the binding's signature
    as the stubs write it (the types it names are the stubs')."""
    parts, returns = _signature(description, _Types({description.identifier}))
    return f"({', '.join(parts)}) -> {returns}"


#: Longer ``def`` lines put each parameter on a line of its own.
LINE_LENGTH = 88


def _function(description: Description, types: _Types) -> str:
    parts, returns = _signature(description, types)
    head = f"async def {description.identifier}({', '.join(parts)}) -> {returns}:"
    if len(head) > LINE_LENGTH:
        lines = "".join(f"    {part},\n" for part in parts)
        head = f"async def {description.identifier}(\n{lines}) -> {returns}:"
    doc = docstring(description)
    return f"{head}\n{_docstring(doc, '    ')}\n    ..." if doc else f"{head} ..."


def docstring(description: Description) -> str:
    """The description, then ``Args:`` and ``Returns:`` where they say anything."""
    root = description.parameters
    properties = root.get("properties", {})
    args = [(p.name, _about(properties.get(p.name, {}), root)) for p in description.params]
    text = description.doc
    if any(about for _, about in args):
        text += "\n\nArgs:\n" + "\n".join(f"    {name}: {_one_line(about)}"
                                          for name, about in args if about)
    returns = schema_text(description.result, description.result or {})
    if returns:
        text += f"\n\nReturns:\n    {_one_line(returns)}"
    return text.strip()


def _signature(description: Description, types: _Types) -> tuple[list[str], str]:
    root = description.parameters
    properties = root.get("properties", {})
    base = type_name(description.identifier)
    result = description.result
    returns = "Any" if result is None else types.expression(result, result, base + "Result")
    if description.explicit and not all(_is_name(key) for key in properties):
        # Keys that cannot be keywords: the arguments go as one dict.
        argument = types.expression({**root, "title": None}, root, base + "Arguments")
        return [f"arguments: {argument}", "/"], returns
    parts: list[str] = []
    star = slash = False
    for param in description.params:
        schema = properties.get(param.name, {})
        hint = base + type_name(param.name)
        if param.kind is not ParamKind.POSITIONAL_ONLY and not slash and any(
                p.kind is ParamKind.POSITIONAL_ONLY for p in description.params):
            parts.append("/")
            slash = True
        if param.kind is ParamKind.VAR_POSITIONAL:
            item = resolve(schema, root).get("items", {}) if isinstance(schema, Mapping) else {}
            parts.append(f"*{param.name}: {types.expression(item, root, hint)}")
            star = True
            continue
        if param.kind is ParamKind.VAR_KEYWORD:
            value = resolve(schema, root).get("additionalProperties", {})
            parts.append(f"**{param.name}: {types.expression(value, root, hint)}")
            continue
        if param.kind is ParamKind.KEYWORD_ONLY and not star:
            parts.append("*")
            star = True
        text = f"{param.name}: {types.expression(schema, root, hint)}"
        if not param.required:
            default = schema.get("default", ...) if isinstance(schema, Mapping) else ...
            text += f" = {_literal(default) if default is not ... else '...'}"
        parts.append(text)
    if not slash and description.params and all(
            p.kind is ParamKind.POSITIONAL_ONLY for p in description.params):
        parts.append("/")
    return parts, returns


def _is_name(key: str) -> bool:
    return key.isidentifier() and not keyword.iskeyword(key)


def _literals(values: list[Any]) -> str:
    """``Literal[...]`` of the values; ``float`` for numbers where one is a
    float (a float is no valid ``Literal``; the text lists the values)."""
    floats = any(isinstance(v, float) for v in values)
    kept = [v for v in values
            if not (floats and isinstance(v, int | float) and not isinstance(v, bool))]
    texts = [f"Literal[{', '.join(_literal(v) for v in kept)}]"] if kept else []
    return _union([*texts, "float"] if floats else texts)


def _about(schema: Any, root: Mapping[str, Any]) -> str:
    """:func:`schema_text`, and the values of a float enumeration (its
    type is only ``float``)."""
    text = schema_text(schema, root)
    target = resolve(schema, root) if isinstance(schema, Mapping) else schema
    if not isinstance(target, Mapping):
        return text
    enum = target.get("enum")
    values: list[Any] = enum if isinstance(enum, list) else (
        [target["const"]] if "const" in target else [])
    if not any(isinstance(v, float) for v in values):
        return text
    listed = "one of " + ", ".join(_literal(v) for v in values)
    return f"{text} ({listed})" if text else listed


def _literal(value: Any) -> str:
    return repr(value)  # JSON's scalars read the same in Python (None, True, 1.5, 'text')


def _union(items: Iterable[str]) -> str:
    unique = list(dict.fromkeys(items))
    return "Any" if "Any" in unique else " | ".join(unique)


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _docstring(text: str, indent: str) -> str:
    text = text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    quote = len(text) - len(text.rstrip('"'))
    if quote and (len(text) - quote - len(text[:-quote].rstrip("\\"))) % 2 == 0:
        text = text[:-1] + '\\"'  # a last quote would run into the closing ones
    lines = text.split("\n")
    body = "\n".join((indent + line) if line.strip() else "" for line in lines[1:])
    if len(lines) == 1:
        return f'{indent}"""{lines[0]}"""'
    return f'{indent}"""{lines[0]}\n{body}\n{indent}"""'
