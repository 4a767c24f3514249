"""Payload encoding (spec §5) and the value model (spec §6).

A payload is exactly one CBOR data item in deterministic encoding. The
decoder is strict: cbor2 rejects malformed items, indefinite lengths,
duplicate keys, excess depth and every tag except 2 and 3 (bignums); the
result is then re-encoded and compared with the input, which rejects
everything that is well-formed but not the one deterministic encoding of
its value (trailing bytes, non-shortest integers or floats, unsorted keys,
bignums that fit in 64 bits, other NaN payloads).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, NoReturn, TypeAlias

import cbor2

from .errors import ErrorCode, RemoteProtocolError

#: A value of the tether value model, as Python holds it after decoding.
Value: TypeAlias = (
    bool | int | float | str | bytes | list["Value"] | dict[str, "Value"] | None
)

#: Nesting depth: containers within containers, the payload's own map counted (spec §10).
DEFAULT_MAX_DEPTH: Final = 64
MIN_MAX_DEPTH: Final = 16
#: Above this a recursive walk would approach CPython's recursion limit.
MAX_MAX_DEPTH: Final = 512

_BIGNUM_TAGS: Final = frozenset({2, 3})


class ValueModelError(TypeError):
    """A value outside the value model, with the JSONPath-like ``path`` of the
    offending part (``$``, ``$.items[3].when``)."""

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(f"{path}: {problem}")
        self.path = path
        self.problem = problem


class _RejectTags(dict[int, Any]):
    """cbor2 ``semantic_decoders`` that refuses every tag but the bignums.

    cbor2 looks a tag up here before its built-in decoders; a KeyError sends
    it on to them (only for tags 2 and 3), anything else aborts the decode.
    """

    def __getitem__(self, tag: int) -> Any:
        if tag in _BIGNUM_TAGS:
            raise KeyError(tag)
        raise ValueError(f"tag {tag} is not allowed")


def _reject_unknown_tag(tag: cbor2.CBORTag, _immutable: bool) -> NoReturn:
    raise ValueError(f"tag {tag.tag} is not allowed")


_REJECT_TAGS: Final = _RejectTags()


def _malformed(message: str) -> RemoteProtocolError:
    return RemoteProtocolError(ErrorCode.MALFORMED_PAYLOAD, message)


def encode_payload(item: Mapping[str, Any]) -> bytes:
    """Deterministic encoding of an envelope whose values are already wire values.

    cbor2's canonical mode sorts keys length-first, which equals RFC 8949
    §4.2.1 bytewise order because every map key on the wire is a text string.
    """
    return cbor2.dumps(item, canonical=True)


def decode_payload(payload: bytes, max_depth: int = DEFAULT_MAX_DEPTH) -> Any:
    """Strictly decode one payload (R-CBOR-1..8); raise MALFORMED_PAYLOAD."""
    try:
        item = cbor2.loads(
            payload,
            max_depth=max_depth,
            allow_indefinite=False,
            allow_duplicate_keys=False,
            strict_hashable_types=True,
            semantic_decoders=_REJECT_TAGS,
            tag_hook=_reject_unknown_tag,
        )
    except cbor2.CBORDecodeError as exc:
        cause = f" ({exc.__cause__})" if exc.__cause__ is not None else ""
        raise _malformed(f"{exc}{cause}") from None
    except (ValueError, TypeError, OverflowError, RecursionError) as exc:
        raise _malformed(str(exc)) from None
    try:
        check_value(item, max_depth)
    except ValueModelError as exc:
        raise _malformed(str(exc)) from None
    if cbor2.dumps(item, canonical=True) != payload:
        raise _malformed("not the deterministic encoding of its value (or trailing bytes)")
    return item


def check_value(value: object, max_depth: int = DEFAULT_MAX_DEPTH) -> None:
    """Raise :class:`ValueModelError` unless ``value`` is exactly a wire value
    (exact types, text keys) within ``max_depth`` nested containers."""
    _check(value, "$", max_depth)


def _check(value: object, path: str, depth_left: int) -> None:
    if value is None or type(value) in _SCALARS:
        return
    if type(value) is list:
        if depth_left <= 0:
            raise ValueModelError(path, "nested too deeply")
        for index, item in enumerate(value):
            _check(item, f"{path}[{index}]", depth_left - 1)
        return
    if type(value) is dict:
        if depth_left <= 0:
            raise ValueModelError(path, "nested too deeply")
        for key, item in value.items():
            if type(key) is not str:
                raise ValueModelError(path, f"map key {key!r} is not a text string")
            _check(item, child_path(path, key), depth_left - 1)
        return
    raise ValueModelError(path, f"{type(value).__name__} is outside the value model")


_SCALARS: Final = frozenset({bool, int, float, str, bytes})


def child_path(path: str, key: str) -> str:
    """``$.name`` for identifier-like keys, ``$["odd key"]`` otherwise."""
    if key.isidentifier():
        return f"{path}.{key}"
    escaped = key.replace("\\", "\\\\").replace('"', '\\"')
    return f'{path}["{escaped}"]'


def _text(value: str, path: str) -> str:
    """Text that UTF-8 can carry: Python strings may hold lone surrogates."""
    if not value.isascii():
        try:
            value.encode()
        except UnicodeEncodeError as exc:
            raise ValueModelError(path, f"text is not valid Unicode ({exc.reason})") from None
    return value


def to_wire(value: object, max_depth: int = DEFAULT_MAX_DEPTH) -> Value:
    """Map a Python value onto the value model (spec §6.2, Python column).

    Tuples become arrays, bytearray/memoryview become bytes, subclasses of
    the model's types (IntEnum, str enums, OrderedDict...) become their base
    type. Anything else, a non-text map key, a cycle or excess depth raises
    :class:`ValueModelError` naming the path.
    """
    return _to_wire(value, "$", max_depth, set())


def _to_wire(value: object, path: str, depth_left: int, active: set[int]) -> Value:
    if value is None or value is True or value is False:
        return value
    kind = type(value)
    if kind is str:
        return _text(value, path)  # type: ignore[arg-type]
    if kind in _SCALARS:
        return value  # type: ignore[return-value]
    if isinstance(value, (list, tuple, dict)):
        if id(value) in active:
            raise ValueModelError(path, "cycle: the value contains itself")
        if depth_left <= 0:
            raise ValueModelError(path, "nested too deeply")
        active.add(id(value))
        try:
            if isinstance(value, dict):
                out: dict[str, Value] = {}
                for key, item in value.items():
                    if not isinstance(key, str):
                        raise ValueModelError(
                            path, f"map key {key!r} is a {type(key).__name__}, not a str"
                        )
                    text = _text(str.__str__(key), path)
                    out[text] = _to_wire(item, child_path(path, text), depth_left - 1, active)
                return out
            return [
                _to_wire(item, f"{path}[{index}]", depth_left - 1, active)
                for index, item in enumerate(value)
            ]
        finally:
            active.discard(id(value))
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, str):
        return _text(str.__str__(value), path)  # str() would call a subclass's __str__
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    raise ValueModelError(path, f"{kind.__name__} is outside the value model")
