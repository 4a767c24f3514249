"""One description per binding, from which everything else is derived.

A description holds a binding's name, what it does, and a JSON Schema for
its arguments (and optionally its result). The model's text
(:mod:`.render`), the argument check before a call (:mod:`.arguments`), the
guest's docstrings and the pre-run check all read it; nothing reads the
callable's signature again.

A binding is described either explicitly (:class:`Binding`: the form tools
from MCP servers, agent SDKs and OpenAPI operations arrive in) or from a
plain callable, whose name, parameters, defaults, type hints and docstring
(with a Google-style ``Args:`` section) are introspected; pydantic turns the
type hints into JSON Schema. Types outside the value model (spec §6) are
refused here, naming the parameter, not when the program calls.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import inspect
import math
import operator
import sys
import types
import typing
from collections.abc import Awaitable, Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .identifiers import identifier


@dataclass(frozen=True, slots=True)
class Binding:
    """A binding described explicitly.

    ``parameters`` is a JSON Schema of type ``object``: its properties are the
    binding's arguments. A Python program passes them as keyword arguments
    (``get_weather(city="Oslo")``) or as one dict, a JavaScript or TypeScript
    program as one object (``get_weather({city: "Oslo"})``); ``function`` is
    called with them as keyword arguments, after they were checked against
    ``parameters``. ``result``, when given, is the JSON Schema of what
    ``function`` returns (shown to the model, and checked when
    ``check_result`` is set). ``name`` may be any text: the program sees it as
    an identifier (see :func:`tether.host.bindings.identifiers.identifier`). A
    description is made once per Binding object (and reused while cached).
    """

    name: str  #: the binding's name (any text; the program sees an identifier)
    description: str  #: what it does, for the model
    parameters: Mapping[str, Any]  #: JSON Schema (type object) of its arguments
    function: Callable[..., Any]  #: called with the checked arguments as keywords
    result: Mapping[str, Any] | None = None  #: JSON Schema of what it returns, if known
    check_result: bool = False  #: check what it returns against ``result``
    #: Ask the approval hook before each call (True), or before the calls a
    #: predicate of the :class:`~tether.ApprovalRequest` picks.
    requires_approval: bool | Callable[..., bool] = False


class ParamKind(enum.Enum):
    POSITIONAL_ONLY = "positional_only"
    POSITIONAL = "positional"  # by position or by keyword
    KEYWORD_ONLY = "keyword_only"
    VAR_POSITIONAL = "var_positional"  # *args: an array in the schema
    VAR_KEYWORD = "var_keyword"  # **kwargs: an object in the schema


@dataclass(frozen=True, slots=True)
class Param:
    """One parameter in the binding's call convention; its type is
    ``Description.parameters["properties"][name]``."""

    name: str
    kind: ParamKind
    required: bool


@dataclass(frozen=True, slots=True)
class Description:
    """Everything known about one binding.

    ``explicit`` bindings take their arguments as one object (keywords in
    Python); the others keep their callable's convention, given by ``params``.
    ``convert`` turns checked arguments into the callable's declared types
    (enum members, dataclasses, models) where its hints ask for them, and
    ``plain`` turns a result of such a declared type back into values.
    """

    name: str
    identifier: str
    doc: str
    parameters: dict[str, Any]
    result: dict[str, Any] | None
    params: tuple[Param, ...]
    explicit: bool
    function: Callable[..., Any]
    check_result: bool = False
    convert: Callable[[dict[str, Any]], dict[str, Any]] | None = None
    plain: Callable[[Any], Any] | None = None

    @property
    def summary(self) -> str:
        """The description's first line."""
        return self.doc.strip().split("\n", 1)[0].strip()


def describe(binding: Binding | Callable[..., Any], name: str | None = None) -> Description:
    """Describe ``binding``: an explicit :class:`Binding`, or a callable (named
    ``name``, default its ``__name__``). Raises TypeError/ValueError for what
    cannot be described, naming the binding and the parameter."""
    if isinstance(binding, Binding):
        return _explicit(binding, name)
    if isinstance(binding, Description):
        return binding
    if not callable(binding):
        raise TypeError(f"binding {name!r} is not callable")
    if name is None:
        name = getattr(binding, "__name__", None)
        if not isinstance(name, str):
            raise TypeError(f"binding {binding!r} has no __name__; pass a mapping")
    return _from_callable(binding, name)


# -- the explicit form ---------------------------------------------------------

def _explicit(binding: Binding, name: str | None) -> Description:
    name = binding.name if name is None else name
    if not callable(binding.function):
        raise TypeError(f"binding {name!r}: function is not callable")
    if not isinstance(binding.description, str):
        raise TypeError(f"binding {name!r}: description must be a str")
    parameters = _plain_schema(binding.parameters, f"binding {name!r}: parameters")
    if parameters.get("type", "object") != "object":
        raise ValueError(f"binding {name!r}: parameters must be a JSON Schema of type object")
    properties = parameters.get("properties", {})
    required = parameters.get("required", [])
    if not isinstance(properties, dict) or not isinstance(required, list):
        raise ValueError(f"binding {name!r}: parameters' properties/required are malformed")
    result = None
    if binding.result is not None:
        result = _plain_schema(binding.result, f"binding {name!r}: result")
    params = tuple(Param(key, ParamKind.KEYWORD_ONLY, key in required) for key in properties)
    _check_schema(parameters, f"binding {name!r}: parameters")
    if result is not None:
        _check_schema(result, f"binding {name!r}: result")
    return Description(name=name, identifier=identifier(name), doc=binding.description.strip(),
                       parameters=parameters, result=result, params=params, explicit=True,
                       function=binding.function, check_result=binding.check_result)


def _plain_schema(schema: object, where: str) -> dict[str, Any]:
    """A copy made of plain dicts and lists (a MappingProxy or a pydantic
    schema object would not render or validate)."""
    def copy(value: object) -> Any:
        if isinstance(value, Mapping):
            return {str(k): copy(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [copy(v) for v in value]
        if value is None or isinstance(value, str | int | float | bool):
            return value
        raise TypeError(f"{where}: {value!r} is not JSON")

    if not isinstance(schema, Mapping):
        raise TypeError(f"{where} must be a JSON Schema (a mapping)")
    out: dict[str, Any] = copy(schema)
    return out


def _check_schema(schema: dict[str, Any], where: str) -> None:
    import jsonschema_rs

    try:
        jsonschema_rs.validator_for(schema)
    except (ValueError, jsonschema_rs.ValidationError) as exc:
        raise ValueError(f"{where} is not a valid JSON Schema: {exc}") from None


# -- a plain callable ----------------------------------------------------------

_KINDS = {
    inspect.Parameter.POSITIONAL_ONLY: ParamKind.POSITIONAL_ONLY,
    inspect.Parameter.POSITIONAL_OR_KEYWORD: ParamKind.POSITIONAL,
    inspect.Parameter.KEYWORD_ONLY: ParamKind.KEYWORD_ONLY,
    inspect.Parameter.VAR_POSITIONAL: ParamKind.VAR_POSITIONAL,
    inspect.Parameter.VAR_KEYWORD: ParamKind.VAR_KEYWORD,
}


@functools.cache
def _result_schema_generator() -> type[Any]:
    """pydantic's JSON Schema generator, but a result's fields that have a
    default are required: the dump the program receives always holds them
    (a TypeScript declaration would make them optional, ``u.tags`` possibly
    undefined). A TypedDict's own NotRequired keys stay optional."""
    from pydantic.json_schema import GenerateJsonSchema

    class ResultSchema(GenerateJsonSchema):
        def field_is_required(self, field: Any, total: bool) -> bool:
            if self.mode != "serialization" or field["type"] == "typed-dict-field":
                return super().field_is_required(field, total)
            return field.get("serialization_exclude_if") is None

    return ResultSchema


def _from_callable(function: Callable[..., Any], name: str) -> Description:
    # pydantic loads here, when a callable is first described, not with tether.
    from typing import NotRequired, Required

    import docstring_parser
    from pydantic import PydanticUserError, TypeAdapter
    from typing_extensions import TypedDict

    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):
        signature = inspect.Signature([
            inspect.Parameter("args", inspect.Parameter.VAR_POSITIONAL),
            inspect.Parameter("kwargs", inspect.Parameter.VAR_KEYWORD)])
    hints = _hints(function, name)
    parsed = docstring_parser.parse(inspect.getdoc(function) or "")
    arg_docs = {p.arg_name.lstrip("*"): p.description or "" for p in parsed.params}

    fields: dict[str, Any] = {}
    params: list[Param] = []
    defaults: dict[str, Any] = {}
    needs_conversion = False
    for param in signature.parameters.values():
        hint = hints.get(param.name, Any)
        where = f"binding {name!r}: parameter {param.name!r}"
        needs_conversion |= _in_value_model(hint, where)
        kind = _KINDS[param.kind]
        if kind is ParamKind.VAR_POSITIONAL:
            hint = list[hint]  # type: ignore[valid-type]
        elif kind is ParamKind.VAR_KEYWORD:
            hint = dict[str, hint]  # type: ignore[valid-type]
        required = param.default is inspect.Parameter.empty and kind not in (
            ParamKind.VAR_POSITIONAL, ParamKind.VAR_KEYWORD)
        fields[param.name] = Required[hint] if required else NotRequired[hint]
        params.append(Param(param.name, kind, required))
        if param.default is not inspect.Parameter.empty:
            default = _json_default(param.default)
            if default is not _NO_DEFAULT:
                defaults[param.name] = default
    arguments: Any = TypedDict(f"{identifier(name)}_arguments", fields)  # type: ignore[misc]
    try:
        adapter: Any = TypeAdapter(arguments)
        parameters: dict[str, Any] = adapter.json_schema()
    except PydanticUserError as exc:
        raise TypeError(f"binding {name!r}: {exc.message}") from None
    result: dict[str, Any] | None = None
    plain: Callable[[Any], Any] | None = None
    if "return" in hints:
        returns = _awaited(hints["return"])
        declared = _in_value_model(returns, f"binding {name!r}: return type")
        try:
            returned: Any = TypeAdapter(returns)
            result = returned.json_schema(mode="serialization",
                                          schema_generator=_result_schema_generator())
        except PydanticUserError:  # e.g. a dict subclass: in the model, but no schema
            result = None
        else:
            if declared:  # models, dataclasses, enums: dumped into values
                def plain(value: Any) -> Any:
                    return _values(returned.dump_python(value, by_alias=True, warnings=False))
    parameters.pop("title", None)
    properties = parameters.setdefault("properties", {})
    for key, schema in properties.items():
        schema.pop("title", None)
        if arg_docs.get(key):
            schema["description"] = arg_docs[key]
        if key in defaults:
            schema["default"] = defaults[key]
    if result is not None:
        if not _named_class(returns):  # a class's name names its declaration
            result.pop("title", None)
        if parsed.returns is not None and parsed.returns.description:
            result["description"] = parsed.returns.description
    doc = "\n\n".join(part for part in (parsed.short_description, parsed.long_description)
                      if part)

    def convert(values: dict[str, Any]) -> dict[str, Any]:
        converted: dict[str, Any] = adapter.validate_python(values)
        return converted

    return Description(
        name=name, identifier=identifier(name), doc=doc, parameters=parameters, result=result,
        params=tuple(params), explicit=False, function=function,
        convert=convert if needs_conversion else None, plain=plain)


def _named_class(hint: Any) -> bool:
    """Whether ``hint`` is a class whose name the model should read (a
    TypedDict, a pydantic model, a dataclass), not a builtin."""
    return isinstance(hint, type) and hint.__module__ != "builtins"


def _values(value: Any) -> Any:
    """A dumped result with its enum members as their values (as the
    program passes them), containers walked."""
    if isinstance(value, dict):
        return {key: _values(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_values(item) for item in value]
    if isinstance(value, enum.Enum) and not isinstance(value, int | str):
        return _values(value.value)
    return value


def _awaited(hint: Any) -> Any:
    """What a sync binding's ``-> Awaitable[X]`` gives: X."""
    while typing.get_origin(hint) in (Awaitable, Coroutine):
        hint = typing.get_args(hint)[-1] if typing.get_args(hint) else Any
    return hint


def _hints(function: Callable[..., Any], name: str) -> dict[str, Any]:
    target: Any = function
    if not (inspect.isfunction(function) or inspect.ismethod(function)):
        target = type(function).__call__  # a callable object: its __call__'s hints
    try:
        hints = typing.get_type_hints(target, include_extras=True)
    except Exception as exc:  # an annotation that does not evaluate
        raise TypeError(f"binding {name!r}: its type hints do not evaluate: {exc}") from None
    if sys.version_info < (3, 12):
        hints = {key: _typed_dicts_for_pydantic(hint, {}) for key, hint in hints.items()}
    return hints


def _typed_dicts_for_pydantic(hint: Any, made: dict[int, Any]) -> Any:
    """``hint`` with each ``typing.TypedDict`` in it made again as a
    ``typing_extensions.TypedDict`` of the same name, keys and types:
    pydantic refuses the first before Python 3.12, and a binding declaring
    one would lose its types."""
    from typing import NotRequired, Required

    from typing_extensions import TypedDict

    if typing.is_typeddict(hint) and type(hint).__module__ == "typing":
        if id(hint) in made:  # a TypedDict that refers to itself
            return made[id(hint)]
        made[id(hint)] = Any
        keys = typing.get_type_hints(hint, include_extras=True)
        fields = {key: (Required if key in hint.__required_keys__ else NotRequired)[
            _typed_dicts_for_pydantic(value, made)] for key, value in keys.items()}
        rebuilt = TypedDict(hint.__name__, fields)  # type: ignore[misc]
        rebuilt.__doc__ = hint.__doc__
        made[id(hint)] = rebuilt
        return rebuilt
    origin = typing.get_origin(hint)
    if origin is typing.Annotated:  # its first argument only: the rest is metadata
        inner = _typed_dicts_for_pydantic(typing.get_args(hint)[0], made)
        return hint.copy_with((inner,))
    arguments = typing.get_args(hint)
    if not arguments or origin is None:
        return hint
    ready = tuple(_typed_dicts_for_pydantic(argument, made) for argument in arguments)
    if ready == arguments:
        return hint
    if origin in (types.UnionType, typing.Union):
        return functools.reduce(operator.or_, ready)
    if origin is typing.Literal:
        return hint
    try:
        return hint.copy_with(ready)  # typing's generic aliases
    except AttributeError:
        return origin[ready]  # list[...], dict[...] and the like


_NO_DEFAULT = object()


def _json_default(value: Any) -> Any:
    """The default as JSON for the schema, or _NO_DEFAULT for one that is not
    (it still applies; the text just does not show it)."""
    if isinstance(value, enum.Enum):
        value = value.value
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else _NO_DEFAULT
    if isinstance(value, list | tuple) and all(
            _json_default(v) is not _NO_DEFAULT for v in value):
        return [_json_default(v) for v in value]
    return _NO_DEFAULT


_QUALIFIERS = frozenset({"Required", "NotRequired", "ReadOnly"})  # TypedDict fields'
_SCALARS = (bool, int, float, str, bytes, type(None))
_LISTS = (list, tuple, Sequence, typing.Sequence)
_MAPS = (dict, Mapping, typing.Mapping)


def _in_value_model(hint: Any, where: str, seen: set[int] | None = None) -> bool:
    """Raise TypeError unless every value of type ``hint`` is in the value
    model (spec §6). Returns whether the callable needs its arguments
    converted (enum members, dataclasses, models, tuples are built from the
    wire's values)."""
    seen = set() if seen is None else seen
    if id(hint) in seen:  # a recursive type: checked already
        return False
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if hint is Any or hint is object or hint in _SCALARS or hint is None:
        return False
    if origin is typing.Annotated or _QUALIFIERS.intersection({repr(origin).rsplit(".", 1)[-1]}):
        return _in_value_model(args[0], where, seen)
    if origin is typing.Literal:
        for arg in args:
            if not isinstance(arg, (bool, int, float, str, type(None), enum.Enum)):
                _refuse(where, f"Literal[{arg!r}]")
        return any(isinstance(arg, enum.Enum) for arg in args)
    if origin is typing.Union or origin is types.UnionType:
        return any([_in_value_model(arg, where, seen) for arg in args])
    if isinstance(hint, typing.NewType):
        return _in_value_model(hint.__supertype__, where, seen)
    if type(hint).__name__ == "TypeAliasType":
        return _in_value_model(hint.__value__, where, seen)
    if origin in _LISTS or hint in _LISTS:
        converts = origin is tuple or hint is tuple
        return any([converts, *(_in_value_model(a, where, seen) for a in args if a is not ...)])
    if origin in _MAPS or hint in _MAPS:
        if args and not (args[0] is str or args[0] is Any):
            _refuse(where, f"a map keyed by {args[0]!r} (keys are text)")
        return any([_in_value_model(a, where, seen) for a in args[1:]])
    if isinstance(hint, type):
        if issubclass(hint, enum.Enum):
            for member in hint:
                if not isinstance(member.value, _SCALARS):
                    _refuse(where, f"{hint.__name__}.{member.name} = {member.value!r}")
            return True
        seen.add(id(hint))
        if typing.is_typeddict(hint) or _is_typeddict(hint):
            field_hints = typing.get_type_hints(hint, include_extras=True)
            return any([_in_value_model(h, f"{where}, field {k!r}", seen)
                        for k, h in field_hints.items()])
        if dataclasses.is_dataclass(hint) or _is_model(hint):
            field_hints = typing.get_type_hints(hint, include_extras=True)
            names = ([f.name for f in dataclasses.fields(hint)] if dataclasses.is_dataclass(hint)
                     else list(hint.model_fields))  # type: ignore[attr-defined]
            for key in names:
                _in_value_model(field_hints.get(key, Any), f"{where}, field {key!r}", seen)
            return True
        if issubclass(hint, (*_SCALARS, dict, list, tuple)):  # and their subclasses
            return False
    _refuse(where, getattr(hint, "__name__", repr(hint)))


def _is_typeddict(hint: type) -> bool:
    from typing_extensions import is_typeddict  # pydantic's own TypedDict, on 3.11

    return is_typeddict(hint)


def _is_model(hint: type) -> bool:
    return any(c.__module__.startswith("pydantic") and c.__name__ == "BaseModel"
               for c in hint.__mro__)


def _refuse(where: str, what: str) -> typing.NoReturn:
    raise TypeError(f"{where}: {what} is outside the value model (spec §6)")


def resolve(schema: Any, root: Mapping[str, Any]) -> Any:
    """``schema`` with a local ``$ref`` (``#/$defs/Name``) followed in ``root``."""
    seen = 0
    while isinstance(schema, Mapping) and isinstance(schema.get("$ref"), str) and seen < 32:
        target: Any = root
        for part in schema["$ref"].removeprefix("#/").split("/"):
            if not part:
                continue
            if not isinstance(target, Mapping) or part not in target:
                return {}  # a reference outside the schema: any value, for the text
            target = target[part]
        schema, seen = target, seen + 1
    return schema


def ref_name(schema: Any) -> str | None:
    """The definition's name for a local ``$ref``, else None."""
    if isinstance(schema, Mapping) and isinstance(schema.get("$ref"), str):
        return str(schema["$ref"]).rsplit("/", 1)[-1] or None
    return None


def alternatives(schema: Mapping[str, Any]) -> list[Any] | None:
    """The schemas a value matches one of, for a schema made of others
    (``anyOf``, ``oneOf``, a single ``allOf``, a list of types); else None.
    Both renderings write them as a union."""
    for union in ("anyOf", "oneOf"):
        if isinstance(schema.get(union), list):
            return list(schema[union])
    if isinstance(schema.get("allOf"), list) and len(schema["allOf"]) == 1:
        return [schema["allOf"][0]]
    kind = schema.get("type")
    if isinstance(kind, list):
        return [{**schema, "type": k} for k in kind]
    return None


class TypeNames:
    """The names a rendering declares its object types by: one per distinct
    schema, from its title or ``hint``, never one already ``taken``."""

    def __init__(self, taken: set[str]) -> None:
        self._taken = taken
        self._named: dict[str, str] = {}  # the schema's text -> its name

    def name(self, schema: Mapping[str, Any], hint: str) -> tuple[str, bool]:
        """The schema's name, and whether it is new (still to declare)."""
        key = repr(sorted(schema.items(), key=lambda kv: kv[0]))
        if key in self._named:
            return self._named[key], False
        name = identifier(str(schema.get("title") or hint))
        name = name[:1].upper() + name[1:]
        while name in self._taken:
            name += "_"
        self._taken.add(name)
        self._named[key] = name
        return name, True


_CONSTRAINTS = (
    ("minimum", ">= {}"), ("exclusiveMinimum", "> {}"), ("maximum", "<= {}"),
    ("exclusiveMaximum", "< {}"), ("multipleOf", "a multiple of {}"),
    ("minLength", "at least {} characters"), ("maxLength", "at most {} characters"),
    ("pattern", "matching {}"), ("minItems", "at least {} items"),
    ("maxItems", "at most {} items"), ("uniqueItems", "unique items"),
)


def constraints(schema: Any) -> str:
    """What a schema asks beyond its type, in words (``>= 1, <= 7``), for the
    text: the declarations' types cannot say it."""
    if not isinstance(schema, Mapping):
        return ""
    return ", ".join(text.format(schema[key]) if "{}" in text else text
                     for key, text in _CONSTRAINTS if key in schema and schema[key] is not False)


def type_name(name: str) -> str:
    """The CamelCase name a rendered declaration gives a schema's type."""
    return "".join(part[:1].upper() + part[1:] for part in identifier(name).split("_"))


def schema_text(schema: Any, root: Mapping[str, Any]) -> str:
    """What a schema tells about itself, for a comment or docstring: its
    description (or its referenced type's) and its constraints."""
    if not isinstance(schema, Mapping):
        return ""
    about = schema.get("description")
    if not about and "$ref" in schema:
        about = resolve(schema, root).get("description")
    text = about.strip() if isinstance(about, str) else ""
    limits = constraints(schema)
    return f"{text} ({limits})" if text and limits else text or limits
