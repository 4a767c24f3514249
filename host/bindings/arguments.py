"""A CALL's arguments checked against the binding's description.

The program is untrusted, so what it passes is hostile input: it is checked
on the host before the binding runs, and a mismatch raises TypeError naming
the parameter (the program gets a ``BindingError`` of type ``TypeError``; the
binding is never invoked). The JSON Schema decides what is admitted, one rule
for both kinds of description, and JSON's types are strict by themselves
(``"1"`` is not an integer). jsonschema-rs checks it: compiled once per
binding, it costs little beside the call's round trip (bench/README.md).
Then, for a callable whose hints ask for enum members, dataclasses, models
or tuples, pydantic builds those from the admitted values.

Two values of the value model are not JSON: bytes, and the non-finite
floats. jsonschema-rs cannot take bytes, so arguments that hold some are
checked in a copy where each is a marker string, against a copy of the
schema where the bytes type (``format: binary``) admits only the marker and
the other strings refuse it. NaN and ±Infinity are refused where the schema
asks for a number (JSON Schema has none).
"""

from __future__ import annotations

import json
import os
from typing import Any

from .description import Description, ParamKind

#: Longest error message sent back: the offending value may be large.
MAX_MESSAGE = 400


class ArgumentCheck:
    """Checks one binding's arguments: ``check(args, kwargs)`` returns the
    arguments to call the binding with, or raises TypeError."""

    def __init__(self, description: Description) -> None:
        import jsonschema_rs

        self._description = description
        self._name = description.identifier
        self._validator = jsonschema_rs.validator_for(description.parameters)
        # With bytes in the schema, a text must not pass for them: always the marked copy.
        self._has_bytes = '"format": "binary"' in json.dumps(description.parameters)
        self._schema_with_bytes: Any = None
        self._result_validator: Any = None
        if description.check_result and description.result is not None:
            # Results are checked in the marked form only: they are rarely checked at all.
            self._result_validator = jsonschema_rs.validator_for(
                _bytes_as_marker(description.result))
        params = description.params
        self._positional = [p.name for p in params
                            if p.kind in (ParamKind.POSITIONAL_ONLY, ParamKind.POSITIONAL)]
        self._positional_only = {p.name for p in params if p.kind is ParamKind.POSITIONAL_ONLY}
        self._keywords = {p.name for p in params
                          if p.kind in (ParamKind.POSITIONAL, ParamKind.KEYWORD_ONLY)}
        self._required = [p.name for p in params if p.required]
        self._var_positional = next(
            (p.name for p in params if p.kind is ParamKind.VAR_POSITIONAL), None)
        self._var_keyword = next((p.name for p in params if p.kind is ParamKind.VAR_KEYWORD), None)

    def check(self, args: list[Any], kwargs: dict[str, Any], *,
              extra_positional: bool = False) -> tuple[list[Any], dict[str, Any]]:
        """``extra_positional``: positional arguments past the parameters are
        left out, as JavaScript leaves them (``xs.map(binding)`` passes each
        element's index and the array too); otherwise they are an error, as
        in Python."""
        description = self._description
        if description.explicit:
            if extra_positional and args and isinstance(args[0], dict):
                args = args[:1]  # the one object it takes
            arguments = self._explicit_arguments(args, kwargs)
        else:
            if extra_positional and self._var_positional is None:
                args = args[:len(self._positional)]
            arguments = self._bind(args, kwargs)
        self._validate(arguments)
        if description.explicit:
            return [], arguments
        if description.convert is not None:
            arguments = description.convert(arguments)
        return self._call_arguments(arguments)

    def check_result(self, value: Any) -> None:
        """Raise TypeError when the binding's result does not fit its result
        schema (only for bindings described with ``check_result``)."""
        if self._result_validator is None:
            return
        error = _first_error(self._result_validator, _marked(value))
        if error is not None:
            raise TypeError(_clip(f"{self._name}() returned a value its result schema refuses: "
                                  f"{error}"))

    def _explicit_arguments(self, args: list[Any], kwargs: dict[str, Any]) -> dict[str, Any]:
        if not args:
            return kwargs
        if len(args) == 1 and not kwargs and isinstance(args[0], dict):
            return dict(args[0])
        # The guest's language is unknown here: both words.
        raise TypeError(f"{self._name}() takes its arguments by keyword, or as one dict "
                        f"(an object in JavaScript)")

    def _validate(self, arguments: dict[str, Any]) -> None:
        try:
            if self._has_bytes:
                raise ValueError
            error = _first_error(self._validator, arguments)
        except ValueError:  # bytes somewhere: JSON has none
            error = _first_error(self._bytes_validator(), _marked(arguments))
        if error is not None:
            raise TypeError(_clip(f"{self._name}(){error}"))

    def _bytes_validator(self) -> Any:
        import jsonschema_rs

        if self._schema_with_bytes is None:
            self._schema_with_bytes = jsonschema_rs.validator_for(
                _bytes_as_marker(self._description.parameters))
        return self._schema_with_bytes

    def _bind(self, args: list[Any], kwargs: dict[str, Any]) -> dict[str, Any]:
        """The arguments by parameter name, as Python would bind them (the
        messages are Python's too)."""
        positional = self._positional
        arguments: dict[str, Any] = dict(zip(positional, args, strict=False))
        if len(args) > len(positional):
            if self._var_positional is None:
                raise TypeError(f"{self._name}() takes {len(positional)} positional "
                                f"argument{'s' * (len(positional) != 1)} but {len(args)} "
                                f"were given")
            arguments[self._var_positional] = list(args[len(positional):])
        extra: dict[str, Any] = {}
        for key, value in kwargs.items():
            if key in self._keywords:
                if key in arguments:
                    raise TypeError(f"{self._name}() got multiple values for argument {key!r}")
                arguments[key] = value
            elif self._var_keyword is not None:
                extra[key] = value
            elif key in self._positional_only:
                raise TypeError(f"{self._name}() got a positional-only argument {key!r} "
                                f"passed as a keyword")
            else:
                raise TypeError(f"{self._name}() got an unexpected keyword argument {key!r}")
        if self._var_keyword is not None and extra:
            arguments[self._var_keyword] = extra
        for key in self._required:
            if key not in arguments:
                raise TypeError(f"{self._name}() missing a required argument: {key!r}")
        return arguments

    def _call_arguments(self, arguments: dict[str, Any]) -> tuple[list[Any], dict[str, Any]]:
        """Back from names to a call: positional-only and ``*args`` by
        position, the rest by keyword."""
        args: list[Any] = []
        for key in self._positional:
            if key not in self._positional_only:
                break
            if key not in arguments:
                break  # the rest take their defaults
            args.append(arguments.pop(key))
        if self._var_positional is not None and self._var_positional in arguments:
            # Everything before *args must then go by position too.
            for key in self._positional[len(args):]:
                args.append(arguments.pop(key))
            args += arguments.pop(self._var_positional)
        if self._var_keyword is not None:
            arguments.update(arguments.pop(self._var_keyword, {}))
        return args, arguments


def _first_error(validator: Any, instance: Any) -> str | None:
    for error in validator.iter_errors(instance):
        path = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.instance_path)
        return (f" argument {path[1:]!r}: " if path else ": ") + _plain(error)
    return None


def _plain(error: Any) -> str:
    """The error's message, in the words a type error would use where the
    bytes marker (an implementation detail, and secret) is involved."""
    if error.instance == _MARKER:  # bytes where a text is declared
        if f'{{"const":{_MARKER_JSON}}} is not allowed' in error.message:
            return 'bytes is not of type "string"'
    elif f"{_MARKER_JSON} was expected" in error.message:  # something else where bytes are
        return f"{_value_text(error.instance)} is not of type \"bytes\""
    message: str = error.message.replace(_MARKER_JSON, "bytes")  # the marker stays secret
    return message


def _value_text(value: Any) -> str:
    try:
        return json.dumps(_unmarked(value), ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(value)


def _unmarked(value: Any) -> Any:
    """The value with ``"bytes"`` for the marker, to show it."""
    if value == _MARKER:
        return "bytes"
    if isinstance(value, dict):
        return {k: _unmarked(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_unmarked(v) for v in value]
    return value


def _clip(message: str) -> str:
    return message if len(message) <= MAX_MESSAGE else message[:MAX_MESSAGE - 3] + "..."


# One per host process; a program cannot know it, so cannot forge bytes.
_MARKER = "\x00bytes:" + os.urandom(8).hex()
_MARKER_JSON = json.dumps(_MARKER)


def _marked(value: Any) -> Any:
    if isinstance(value, bytes | bytearray | memoryview):
        return _MARKER
    if isinstance(value, dict):
        return {k: _marked(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_marked(v) for v in value]
    return value


def _bytes_as_marker(schema: Any) -> Any:
    """The schema with bytes (``type: string, format: binary``) admitting only
    the marker, and every other string schema refusing it."""
    if isinstance(schema, list):
        return [_bytes_as_marker(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    if schema.get("type") == "string" and schema.get("format") == "binary":
        return {"const": _MARKER}
    out: dict[str, Any] = {key: _bytes_as_marker(value) for key, value in schema.items()}
    kind = out.get("type")
    if kind == "string" or (isinstance(kind, list) and "string" in kind):
        return {"allOf": [out, {"not": {"const": _MARKER}}]}
    return out

