"""TypeScript declarations for a set of bindings, from their JSON Schemas.

One ``declare function`` per binding with JSDoc, an ``interface`` per named
object type, unions of literals for enumerations. The text is a valid
``.d.ts``: the pre-run check compiles TypeScript programs against it, and
JavaScript programs through ``checkJs``. A binding described from a callable
takes its positional parameters (keyword-only ones cannot be passed from
JavaScript); an explicit one takes one object.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
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
from .identifiers import identifier

_PLAIN_KEY = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")

#: The global type names of the library the check compiles against (ES2023
#: and @types/node; those of a capital letter: a type's name always has one).
#: An interface of one of these names would merge with the global one, or make
#: the declarations invalid: a type takes another name.
_GLOBALS = frozenset({
    "AbortController", "AbortSignal", "AggregateError", "AggregateErrorConstructor",
    "AllowSharedBuffer", "Array", "ArrayBuffer", "ArrayBufferConstructor",
    "ArrayBufferLike", "ArrayBufferTypes", "ArrayBufferView", "ArrayConstructor",
    "ArrayIterator", "ArrayLike", "AsyncDisposable", "AsyncGenerator",
    "AsyncGeneratorFunction", "AsyncGeneratorFunctionConstructor", "AsyncIterable",
    "AsyncIterableIterator", "AsyncIterator", "AsyncIteratorObject", "Atomics", "Awaited",
    "BigInt", "BigInt64Array", "BigInt64ArrayConstructor", "BigIntConstructor",
    "BigIntToLocaleStringOptions", "BigUint64Array", "BigUint64ArrayConstructor", "Blob",
    "Boolean", "BooleanConstructor", "Buffer", "BufferConstructor", "BufferEncoding",
    "BuiltinIteratorReturn", "ByteLengthQueuingStrategy", "CallableFunction", "Capitalize",
    "ClassAccessorDecoratorContext", "ClassAccessorDecoratorResult",
    "ClassAccessorDecoratorTarget", "ClassDecorator", "ClassDecoratorContext",
    "ClassFieldDecoratorContext", "ClassGetterDecoratorContext",
    "ClassMemberDecoratorContext", "ClassMethodDecoratorContext",
    "ClassSetterDecoratorContext", "CompressionStream", "ConcatArray", "Console",
    "ConstructorParameters", "CountQueuingStrategy", "CustomEvent", "DOMException",
    "DataView", "DataViewConstructor", "Date", "DateConstructor", "DecompressionStream",
    "DecoratorContext", "DecoratorMetadata", "DecoratorMetadataObject", "Disposable",
    "Error", "ErrorConstructor", "ErrorOptions", "EvalError", "EvalErrorConstructor",
    "Event", "EventListenerOptions", "EventSource", "EventSourceInit", "EventTarget",
    "Exclude", "Extract", "File", "FinalizationRegistry", "FinalizationRegistryConstructor",
    "FlatArray", "Float32Array", "Float32ArrayConstructor", "Float64Array",
    "Float64ArrayConstructor", "FormData", "Function", "FunctionConstructor", "Generator",
    "GeneratorFunction", "GeneratorFunctionConstructor", "Global", "Headers", "IArguments",
    "ImportAssertions", "ImportAttributes", "ImportCallOptions", "ImportMeta",
    "InstanceType", "Int16Array", "Int16ArrayConstructor", "Int32Array",
    "Int32ArrayConstructor", "Int8Array", "Int8ArrayConstructor", "Intl", "Iterable",
    "IterableIterator", "Iterator", "IteratorObject", "IteratorResult",
    "IteratorReturnResult", "IteratorYieldResult", "JSON", "Lowercase", "Map",
    "MapConstructor", "MapIterator", "Math", "MessageEvent", "MessageEventInit",
    "MethodDecorator", "NewableFunction", "NoInfer", "NodeJS", "NodeModule", "NodeRequire",
    "NonNullable", "NonSharedBuffer", "Number", "NumberConstructor", "Object",
    "ObjectConstructor", "Omit", "OmitThisParameter", "ParameterDecorator", "Parameters",
    "Partial", "Pick", "Promise", "PromiseConstructor", "PromiseConstructorLike",
    "PromiseFulfilledResult", "PromiseLike", "PromiseRejectedResult",
    "PromiseSettledResult", "PropertyDecorator", "PropertyDescriptor",
    "PropertyDescriptorMap", "PropertyKey", "ProxyConstructor", "ProxyHandler",
    "QueuingStrategy", "RangeError", "RangeErrorConstructor",
    "ReadableByteStreamController", "ReadableStream", "ReadableStreamBYOBReader",
    "ReadableStreamBYOBRequest", "ReadableStreamDefaultController",
    "ReadableStreamDefaultReader", "Readonly", "ReadonlyArray", "ReadonlyMap",
    "ReadonlySet", "Record", "ReferenceError", "ReferenceErrorConstructor", "Reflect",
    "RegExp", "RegExpConstructor", "RegExpExecArray", "RegExpIndicesArray",
    "RegExpMatchArray", "RegExpStringIterator", "RelativeIndexable", "Request",
    "RequestInit", "RequireResolve", "Required", "Response", "ResponseInit", "ReturnType",
    "Set", "SetConstructor", "SetIterator", "SharedArrayBuffer",
    "SharedArrayBufferConstructor", "String", "StringConstructor", "StringIterator",
    "Symbol", "SymbolConstructor", "SyntaxError", "SyntaxErrorConstructor",
    "TemplateStringsArray", "TextDecoderStream", "TextEncoderStream", "ThisParameterType",
    "ThisType", "TransformStream", "TransformStreamDefaultController", "TypeError",
    "TypeErrorConstructor", "TypedPropertyDescriptor", "URIError", "URIErrorConstructor",
    "URL", "URLSearchParams", "Uint16Array", "Uint16ArrayConstructor", "Uint32Array",
    "Uint32ArrayConstructor", "Uint8Array", "Uint8ArrayConstructor", "Uint8ClampedArray",
    "Uint8ClampedArrayConstructor", "Uncapitalize", "Uppercase", "WeakKey", "WeakKeyTypes",
    "WeakMap", "WeakMapConstructor", "WeakRef", "WeakRefConstructor", "WeakSet",
    "WeakSetConstructor", "WebSocket", "WebSocketInit", "WritableStream",
    "WritableStreamDefaultController", "WritableStreamDefaultWriter",
})


class _Types:
    def __init__(self, taken: set[str]) -> None:
        self.interfaces: list[str] = []
        self._names = TypeNames(taken)

    def expression(self, schema: Any, root: Mapping[str, Any], hint: str) -> str:
        if schema is True or not isinstance(schema, Mapping) or not schema:
            return "any"
        name = ref_name(schema)
        if name is not None:
            target = resolve(schema, root)
            if _is_record(target):
                return self._interface(target, root, name)
            return self.expression(target, root, name)
        if "const" in schema:
            return json.dumps(schema["const"])
        if "enum" in schema and isinstance(schema["enum"], list):
            return _union(json.dumps(v) for v in schema["enum"])
        options = alternatives(schema)
        if options is not None:
            return _union(self.expression(s, root, hint) for s in options)
        kind = schema.get("type")
        if kind == "null":
            return "null"
        if kind == "boolean":
            return "boolean"
        if kind in ("integer", "number"):
            return "number"
        if kind == "string":
            return "Uint8Array" if schema.get("format") == "binary" else "string"
        if kind == "array":
            if isinstance(schema.get("prefixItems"), list):
                items = [self.expression(s, root, hint) for s in schema["prefixItems"]]
                return f"[{', '.join(items)}]"
            item = self.expression(schema.get("items", {}), root, hint + "Item")
            return f"({item})[]" if " | " in item else f"{item}[]"
        if _is_record(schema):
            return self._object(schema, root, hint, "")
        if kind == "object":
            extra = schema.get("additionalProperties", {})
            return f"Record<string, {self.expression(extra, root, hint + 'Value')}>"
        return "any"

    def _object(self, schema: Mapping[str, Any], root: Mapping[str, Any], hint: str,
                indent: str) -> str:
        required = set(schema.get("required", []))
        lines = []
        for field, sub in schema["properties"].items():
            key = field if _PLAIN_KEY.fullmatch(field) else json.dumps(field)
            about = schema_text(sub, root)
            if about:
                lines.append(f"{indent}  /** {_comment(about)} */")
            optional = "" if field in required else "?"
            lines.append(f"{indent}  {key}{optional}: "
                         f"{self.expression(sub, root, hint + type_name(field))};")
        return "{\n" + "\n".join(lines) + f"\n{indent}}}"

    def _interface(self, schema: Mapping[str, Any], root: Mapping[str, Any], hint: str) -> str:
        name, new = self._names.name(schema, hint)
        if not new:
            return name
        body = self._object(schema, root, name, "")
        about = schema_text(schema, root)
        head = f"/** {_comment(about)} */\n" if about else ""
        self.interfaces.append(f"{head}interface {name} {body}")
        return name


def render(descriptions: Iterable[Description]) -> str:
    """The declarations, as one ``.d.ts``."""
    descriptions = list(descriptions)
    types = _Types({d.identifier for d in descriptions} | {"BindingError"} | _GLOBALS)
    functions = [_function(d, types) for d in descriptions]
    return "\n\n".join([*types.interfaces, *functions]) + "\n"


def signature(description: Description) -> str:
    """``(query: string, limit?: number): Promise<Hit[]>``, as the declarations write it."""
    return _signature(description, _Types({description.identifier} | _GLOBALS))


def _function(description: Description, types: _Types) -> str:
    signature_text = _signature(description, types)
    doc = jsdoc(description)
    return f"{doc}\n" * bool(doc) + f"declare function {description.identifier}{signature_text};"


def jsdoc(description: Description) -> str:
    """The JSDoc comment: the description, ``@param`` and ``@returns`` (empty
    when there is nothing to say)."""
    root = description.parameters
    properties = root.get("properties", {})
    lines = [_comment(line) for line in description.doc.split("\n")] if description.doc else []
    params = [] if description.explicit else [
        (p.name, schema_text(properties.get(p.name, {}), root)) for p in _positional(description)]
    tags = [f"@param {name} {_comment(about)}" for name, about in params if about]
    returns = schema_text(description.result, description.result or {})
    if returns:
        tags.append(f"@returns {_comment(returns)}")
    unreachable = [] if description.explicit else [
        p.name for p in description.params if p.kind is ParamKind.KEYWORD_ONLY and p.required]
    if unreachable:
        names = ", ".join(f"`{name}`" for name in unreachable)
        note = (f"Not callable from JavaScript: its required keyword-only parameter"
                f"{'s' * (len(unreachable) > 1)} {names} cannot be passed from here.")
        lines += ["", note] if lines else [note]
    if tags:
        lines += ["", *tags] if lines else tags
    if not lines:
        return ""
    return "/**\n" + "\n".join(f" * {line}".rstrip() for line in lines) + "\n */"


def _positional(description: Description) -> list[Any]:
    return [p for p in description.params if p.kind in (
        ParamKind.POSITIONAL_ONLY, ParamKind.POSITIONAL, ParamKind.VAR_POSITIONAL)]


def _signature(description: Description, types: _Types) -> str:
    root = description.parameters
    base = type_name(description.identifier)
    result = description.result
    returns = "any" if result is None else types.expression(result, result, base + "Result")
    if description.explicit:
        argument = types.expression({**root, "title": None}, root, base + "Input")
        optional = "" if root.get("required") else "?"
        return f"(input{optional}: {argument}): Promise<{returns}>"
    properties = root.get("properties", {})
    parts = []
    for param in _positional(description):
        schema = properties.get(param.name, {})
        hint = base + type_name(param.name)
        name = identifier(param.name)
        if param.kind is ParamKind.VAR_POSITIONAL:
            item = resolve(schema, root).get("items", {}) if isinstance(schema, Mapping) else {}
            item_type = types.expression(item, root, hint)
            parts.append(f"...{name}: ({item_type})[]" if " | " in item_type
                         else f"...{name}: {item_type}[]")
            continue
        optional = "" if param.required else "?"
        parts.append(f"{name}{optional}: {types.expression(schema, root, hint)}")
    return f"({', '.join(parts)}): Promise<{returns}>"


def _is_record(schema: Any) -> bool:
    return (isinstance(schema, Mapping) and isinstance(schema.get("properties"), Mapping)
            and bool(schema["properties"]) and schema.get("type", "object") == "object")


def _union(items: Iterable[str]) -> str:
    unique = list(dict.fromkeys(items))
    return "any" if "any" in unique else " | ".join(unique)


def _comment(text: str) -> str:
    return text.replace("*/", "*\\/")
