"""Payload encoding (spec §5) and the value model (spec §6).

A payload is exactly one CBOR data item in preferred serialization, its maps
in the sender's order (R-CBOR-2). The decoder is strict: cbor2 rejects
malformed items, indefinite lengths, duplicate keys, excess depth and every
tag except 2 and 3 (bignums); the result, whose dicts keep the order the keys
arrived in, is then re-encoded and compared with the input, which rejects
everything that is well-formed but not the one preferred serialization of
its value in that order (trailing bytes, non-shortest integers or floats,
bignums that fit in 64 bits, other NaN payloads).

A payload that is mostly string bytes (few data items for its size: a large
text or byte string, a few long ones) takes a second path to the same
outcome: it is decoded here, item by item, each head checked for its
preferred form and each string taken straight from the payload, with no
re-encoding; building and comparing a second copy of every string would cost
more than the strings themselves.
"""

from __future__ import annotations

import codecs
import itertools
import json
import math
import operator
import re
import struct
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final, NamedTuple, NoReturn, TypeAlias

import cbor2

from .errors import ErrorCode, RemoteProtocolError

#: A value of the tether value model, as Python holds it after decoding.
Value: TypeAlias = (
    bool | int | float | str | bytes | list["Value"] | dict[str, "Value"] | None
)

#: What payloads arrive in: a frame decoder hands a large one over in the
#: buffer it was received in.
Buffer: TypeAlias = bytes | bytearray | memoryview

#: A text or byte string of this many bytes or more is a piece of its own
#: in :func:`encode_payload_parts`: written where it is, not copied.
PART_BYTES: Final = 64 * 1024
#: The data items :func:`encode_payload_parts` looks through for one.
PARTS_SEARCH_ITEMS: Final = 64


@dataclass(frozen=True, slots=True)
class PayloadParts:
    """An encoded payload as pieces written one after the other, the same
    bytes as :func:`encode_payload`'s: the contents of each long string are
    a piece of their own. ``size``: the payload's length in bytes;
    ``items``: the data items it holds (as :func:`count_items` counts)."""

    parts: tuple[bytes, ...]
    size: int
    items: int


#: An encoded payload, whole or in pieces.
Payload: TypeAlias = bytes | PayloadParts


def payload_size(payload: Payload) -> int:
    return payload.size if isinstance(payload, PayloadParts) else len(payload)


def payload_pieces(payload: Payload) -> tuple[bytes, ...]:
    """The bytes to write, one piece after the other."""
    return payload.parts if isinstance(payload, PayloadParts) else (payload,)


#: Nesting depth: containers within containers, the payload's own map counted (spec §10).
DEFAULT_MAX_DEPTH: Final = 64
MIN_MAX_DEPTH: Final = 16
#: Above this a recursive walk would approach CPython's recursion limit.
MAX_MAX_DEPTH: Final = 512
#: Largest encoded value, by default (spec §10).
DEFAULT_VALUE_BYTES: Final = 8 * 1024 * 1024

_BIGNUM_TAGS: Final = frozenset({2, 3})

#: A value may hold one data item per this many bytes of ``value_bytes``
#: (R-VAL-1): what decoding costs follows the items, not the bytes.
BYTES_PER_ITEM: Final = 16
MIN_VALUE_ITEMS: Final = 1024
#: Data items a frame's envelope may add to its value's (R-CBOR-11).
ENVELOPE_ITEMS: Final = 64


def value_items(value_bytes: int) -> int:
    """The most data items one value may hold (spec §10, ``value_items``)."""
    return max(MIN_VALUE_ITEMS, value_bytes // BYTES_PER_ITEM)


def exceeds_value_items(payload: bytes, value_bytes: int, envelope_items: int) -> bool:
    """Whether the value encoded in ``payload``, inside ``envelope_items``
    items of envelope (2 for ``{"value": v}``), holds more data items than
    ``value_items(value_bytes)`` allows (R-VAL-1)."""
    limit = value_items(value_bytes) + envelope_items
    return len(payload) > limit and count_items(payload, limit) > limit


class Excess(NamedTuple):
    """How a value breaks ``value_bytes`` (R-VAL-1): ``kind`` ``"bytes"``
    (``amount``: the bytes it takes) or ``"items"`` (``amount``: the most
    data items it may hold)."""

    kind: str
    amount: int


def value_excess(payload: Payload, value_bytes: int, *, envelope_bytes: int,
                 envelope_items: int) -> Excess | None:
    """How the value encoded in ``payload`` exceeds ``value_bytes``, or None:
    the value is ``payload`` less ``envelope_bytes`` of envelope, holding
    ``envelope_items`` data items (2 for ``{"value": v}``, 7 bytes)."""
    size = payload_size(payload) - envelope_bytes
    if size > value_bytes:
        return Excess("bytes", size)
    if isinstance(payload, PayloadParts):
        over = payload.items > value_items(value_bytes) + envelope_items
    else:
        over = exceeds_value_items(payload, value_bytes, envelope_items)
    if over:
        return Excess("items", value_items(value_bytes))
    return None


def count_items(payload: Buffer, limit: int) -> int:
    """How many data items ``payload`` holds, counting no further than
    ``limit + 1``. A tag and its content count as one item. Only the heads
    are read (string contents are skipped), nothing is built; a malformed
    payload counts 0 (the decoder then says what is wrong)."""
    try:
        return _walk(payload, 0, limit)[0]
    except (IndexError, RemoteProtocolError):
        return 0


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


def encode_payload(item: Mapping[str, Any], *, plain: bool | None = None) -> bytes:
    """Preferred serialization of an envelope whose values are already wire
    values, every map in its own order (R-CBOR-2).

    cbor2's plain mode writes maps in their order but every float in 64 bits;
    its canonical mode would sort the keys. So the plain encoding is used as
    it is where every float needs all 64 bits, and with a shortest-float
    encoder otherwise. ``plain``: the caller knows that already (from
    :func:`to_wire_plain`); None looks.
    """
    if plain is None:
        try:
            plain = _checked_plain(item, MAX_MAX_DEPTH + 2)
        except _Slow:
            plain = False
    return _dumps(item, plain)


def encode_payload_in_steps(item: Mapping[str, Any], *, plain: bool, step_items: int = 4096,
                            between_steps: Callable[[], None] | None = None) -> bytes:
    """:func:`encode_payload` (with ``plain`` known, from :func:`to_wire_plain`),
    with no call into the C encoder given more than about ``step_items``
    items, and ``between_steps`` called between them: the same bytes
    (preferred serialization is made of its parts' encodings)."""
    parts: list[bytes] = []
    _encode_steps(item, plain, step_items, between_steps or _no_pause, parts)
    return b"".join(parts)


def encode_payload_parts(item: Mapping[str, Any], *, plain: bool) -> Payload:
    """:func:`encode_payload` (with ``plain`` known, from :func:`to_wire_plain`),
    in parts when ``item`` holds a text or byte string of :data:`PART_BYTES`
    or more among at most :data:`PARTS_SEARCH_ITEMS` data items (a document
    a binding returns): its contents are a part of their own (a byte
    string's the very object), so a large value is not copied into a fresh
    buffer beside the rest of the frame."""
    if not _long_string_within(item):
        return _dumps(item, plain)
    parts: list[bytes] = []
    pending = bytearray()
    items = _encode_apart(item, plain, pending, parts)
    if pending:
        parts.append(bytes(pending))
    return PayloadParts(tuple(parts), sum(map(len, parts)), items)


def _long_string_within(value: Any) -> bool:
    stack = [value]
    seen, found = 0, False
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind is dict or kind is list:
            seen += len(item)
            if seen > PARTS_SEARCH_ITEMS:
                return False
            stack.extend(item.values() if kind is dict else item)
        elif (kind is str or kind is bytes) and len(item) >= PART_BYTES:
            found = True
    return found


def _encode_apart(value: Any, plain: bool, pending: bytearray, parts: list[bytes]) -> int:
    """Preferred serialization is made of its parts' encodings: a container's
    head, then its elements' (maps in their order). Returns the data items
    written."""
    kind = type(value)
    items = 1
    if kind is dict:
        pending += _head_bytes(5, len(value))
        for key, item in value.items():
            pending += _dumps(key, True)
            items += 1 + _encode_apart(item, plain, pending, parts)
    elif kind is list:
        pending += _head_bytes(4, len(value))
        for item in value:
            items += _encode_apart(item, plain, pending, parts)
    elif (kind is str or kind is bytes) and len(value) >= PART_BYTES:
        data = value.encode() if kind is str else value
        pending += _head_bytes(3 if kind is str else 2, len(data))
        parts.append(bytes(pending))
        pending.clear()
        parts.append(data)
    else:
        pending += _dumps(value, plain)
    return items


def holds_more_items(value: Any, budget: int) -> bool:
    """Whether ``value`` (a wire value, or a Python value before
    :func:`to_wire`) holds more than ``budget`` items, looking at no more:
    to tell a value that is costly to convert or encode. A value whose own
    code fails here is left to the conversion to report."""
    stack = [value]
    try:
        while stack:
            item = stack.pop()
            if isinstance(item, dict | list | tuple):
                budget -= len(item) * (2 if isinstance(item, dict) else 1)
                if budget < 0:
                    return True
                stack.extend(item.values() if isinstance(item, dict) else item)
    except Exception:
        return False
    return False


def _encode_steps(value: Any, plain: bool, step: int, pause: Callable[[], None],
                  parts: list[bytes]) -> None:
    if not holds_more_items(value, step):
        parts.append(_dumps(value, plain))
        return
    pairs = type(value) is dict
    parts.append(_head_bytes(5 if pairs else 4, len(value)))
    elements = list(value.items()) if pairs else value
    inner = [element[1] for element in elements] if pairs else elements
    start = size = 0
    unit = 2 if pairs else 1

    def flush(end: int) -> None:
        nonlocal start, size
        if end > start:
            pause()
            group = elements[start:end]
            encoded = _dumps(dict(group) if pairs else group, plain)
            parts.append(encoded[len(_head_bytes(5 if pairs else 4, len(group))):])
        start, size = end, 0

    # Rows of scalars: an element's size is its length (found by C loops);
    # otherwise the element is walked.
    flat = _flat(inner)
    for index, length in enumerate(map(_length, inner)):
        if (length > step) if flat else holds_more_items(inner[index], step):
            flush(index)  # an element too big for one step has steps of its own
            if pairs:
                parts.append(_dumps(elements[index][0], plain))
            _encode_steps(inner[index], plain, step, pause, parts)
            start = index + 1
            continue
        size += unit + length
        if size >= step:
            flush(index + 1)
    flush(len(elements))


def _flat(values: list[Any]) -> bool:
    """Whether no element of ``values`` (wire values) holds a container."""
    children = _children(_of_type(values, dict), _of_type(values, list))
    return not set(map(type, children)) & _CONTAINERS


def _children(maps: list[dict[str, Any]], lists: list[list[Any]]) -> list[Any]:
    """The values of ``maps`` and the elements of ``lists``: a tree's next level."""
    return list(itertools.chain(itertools.chain.from_iterable(map(dict.values, maps)),
                                itertools.chain.from_iterable(lists)))


def _length(value: Any) -> int:
    return len(value) if type(value) is dict or type(value) is list else 0


def _of_type(values: list[Any], kind: type) -> list[Any]:
    """The elements of ``values`` of exactly type ``kind``, picked by C loops."""
    return list(itertools.compress(values, map(operator.is_, map(type, values),
                                               itertools.repeat(kind))))


def _dumps(item: Any, plain: bool) -> bytes:
    return cbor2.dumps(item) if plain else cbor2.dumps(item, encoders=_SHORT_FLOATS)


def _encode_float(encoder: cbor2.CBOREncoder, value: float) -> None:
    encoder.write(_float_bytes(value))


def _float_bytes(value: float) -> bytes:
    """The shortest of binary16/32/64 that holds ``value`` exactly (R-CBOR-2, -3)."""
    if math.isnan(value):
        return b"\xf9\x7e\x00"
    if not _float_plain(value):
        for head, layout in _SHORTER_FLOATS:
            try:
                data = layout.pack(value)
            except OverflowError:
                continue
            if layout.unpack(data)[0] == value:
                return head + data
    return b"\xfb" + _F64.pack(value)


#: Payloads from this size on whose data items take at least
#: ``SPARSE_BYTES_PER_ITEM`` bytes each on average are decoded by
#: :func:`decode_sparse`, not by cbor2 and a re-encoding.
SPARSE_MIN_BYTES: Final = 16 * 1024
SPARSE_BYTES_PER_ITEM: Final = 1024
#: From this size on a decoded value is checked a level at a time.
LEVELS_MIN_BYTES: Final = 16 * 1024


def decode_payload(payload: Buffer, max_depth: int = DEFAULT_MAX_DEPTH,
                   max_items: int | None = None) -> Any:
    """Strictly decode one payload (R-CBOR-1..8, and R-CBOR-11 for
    ``max_items``); raise MALFORMED_PAYLOAD. The items are counted before
    anything is built, and only where the payload is long enough to hold
    more than ``max_items`` (every item takes at least one byte)."""
    if max_items is not None and len(payload) > max_items and \
            count_items(payload, max_items) > max_items:
        raise _malformed(f"more than {max_items} data items")
    if _sparse(payload):
        return decode_sparse(payload, max_depth)
    return decode_dense(payload, max_depth)  # cbor2 reads any buffer: no copy


def _sparse(payload: Buffer) -> bool:
    """Whether ``payload`` is for :func:`decode_sparse` (few items, long strings)."""
    if len(payload) < SPARSE_MIN_BYTES:
        return False
    most = len(payload) // SPARSE_BYTES_PER_ITEM
    return count_items(payload, most) <= most


def decode_dense(payload: Buffer, max_depth: int = DEFAULT_MAX_DEPTH) -> Any:
    """:func:`decode_payload` by cbor2's decoder, then a re-encoding of the
    value compared with ``payload``: for payloads of many small items."""
    try:
        item = cbor2.loads(
            payload,
            max_depth=max_depth + 1,  # cbor2 counts a tag as a level: R-CBOR-8 counts containers
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
        plain = (_checked_plain_levels if len(payload) >= LEVELS_MIN_BYTES else
                 _checked_plain)(item, max_depth)
    except _Slow:
        try:
            check_value(item, max_depth)
        except ValueModelError as exc:
            deep = exc.problem == "nested too deeply"  # a path as long as the nesting
            raise _malformed("nested too deeply" if deep else str(exc)) from None
        plain = False
    if _dumps(item, plain) != payload:
        raise _malformed("not the preferred serialization of its value (or trailing bytes)")
    return item


def decode_sparse(payload: Buffer, max_depth: int = DEFAULT_MAX_DEPTH) -> Any:
    """:func:`decode_payload` item by item: every head in its shortest form,
    strings decoded from the payload in place, every float and bignum in the
    encoding :func:`encode_payload` would give it. The same value, or the
    same error code; for payloads of few items and long strings."""
    with memoryview(payload) as view:
        try:
            item, end = _sparse_item(view, 0, max_depth)
        except IndexError:
            raise _malformed("the payload ends inside an item") from None
        except RecursionError:
            raise _malformed("nested too deeply") from None
    if end != len(payload):
        raise _malformed("bytes after the item")
    return item


def _sparse_item(view: memoryview, pos: int, depth: int) -> tuple[Any, int]:
    """The item at ``pos`` and where it ends; ``depth`` as in :func:`_decode_steps`."""
    initial = view[pos]
    if initial >= 0xE0:
        return _sparse_simple(view, pos, initial)
    major, argument, start = _head(view, pos)
    if major == 0:
        return argument, start
    if major == 1:
        return -1 - argument, start
    if major in (2, 3):
        end = start + argument
        if end > len(view):
            raise IndexError
        if major == 2:
            return bytes(view[start:end]), end
        try:
            return codecs.utf_8_decode(view[start:end], "strict", True)[0], end
        except UnicodeDecodeError as exc:
            raise _malformed(f"text is not valid UTF-8 ({exc.reason})") from None
    if major == 6:
        return _sparse_bignum(view, argument, start)
    if depth <= 0:
        raise _malformed("nested too deeply")
    if major == 4:
        items = []
        for _ in range(argument):
            item, start = _sparse_item(view, start, depth - 1)
            items.append(item)
        return items, start
    pairs: dict[str, Any] = {}
    for _ in range(argument):
        if view[start] >> 5 != 3:
            raise _malformed("a map key is not a text string")
        key, start = _sparse_item(view, start, depth - 1)
        if key in pairs:
            raise _malformed(f"duplicate key {key!r}")
        pairs[key], start = _sparse_item(view, start, depth - 1)
    return pairs, start


def _sparse_simple(view: memoryview, pos: int, initial: int) -> tuple[Any, int]:
    if initial == 0xF4:
        return False, pos + 1
    if initial == 0xF5:
        return True, pos + 1
    if initial == 0xF6:
        return None, pos + 1
    layout = _FLOAT_LAYOUTS.get(initial)
    if layout is None:
        raise _malformed(f"simple value 0x{initial:02x} is outside the value model")
    end = pos + 1 + layout.size
    if end > len(view):
        raise IndexError
    encoded = bytes(view[pos:end])
    value = layout.unpack(encoded[1:])[0]
    if _float_bytes(value) != encoded:
        raise _malformed(f"{value!r} not in its shortest form")
    return value, end


def _sparse_bignum(view: memoryview, tag: int, start: int) -> tuple[int, int]:
    if tag not in _BIGNUM_TAGS:
        raise _malformed(f"tag {tag} is not allowed")
    if view[start] >> 5 != 2:
        raise _malformed("a bignum's content is not a byte string")
    content, end = _sparse_item(view, start, 0)
    magnitude = int.from_bytes(content, "big")
    value = magnitude if tag == 2 else -1 - magnitude
    if magnitude < 1 << 64 or content[0] == 0:
        raise _malformed(f"{value} not in its shortest form")
    return value, end


def decode_payload_in_steps(payload: Buffer, max_depth: int = DEFAULT_MAX_DEPTH,
                            max_items: int | None = None, *, step_bytes: int = 16 * 1024,
                            between_steps: Callable[[], None] | None = None) -> Any:
    """:func:`decode_payload`, with no step longer than ``step_bytes`` of
    the payload: containers larger than that are walked here, their elements
    decoded (strictly, as :func:`decode_payload` does) in groups of at most
    ``step_bytes``, and ``between_steps`` (if given) is called before each.
    The same value, or the same error code. For a thread that shares the
    interpreter with others: the C decoder holds it for as long as a call
    lasts, and ``between_steps`` can hand it over (``os.sched_yield``)."""
    if max_items is not None and len(payload) > max_items and \
            count_items(payload, max_items) > max_items:
        raise _malformed(f"more than {max_items} data items")
    if len(payload) <= step_bytes:
        return decode_payload(payload, max_depth)
    if _sparse(payload):  # no long call into C but for one string's
        return decode_sparse(payload, max_depth)
    try:
        value, end = _decode_steps(payload, 0, max_depth, step_bytes,
                                   between_steps or _no_pause)
    except IndexError:
        raise _malformed("the payload ends inside an item") from None
    if end != len(payload):
        raise _malformed("bytes after the item")
    return value


def _head(payload: Buffer, pos: int) -> tuple[int, int, int]:
    """``(major type, argument, position after the head)``, in preferred
    serialization only (the shortest argument, definite lengths)."""
    initial = payload[pos]
    major, info = initial >> 5, initial & 0x1F
    if info < 24:
        return major, info, pos + 1
    if info > 27:
        raise _malformed("indefinite length or reserved additional information")
    width = 1 << (info - 24)
    if pos + 1 + width > len(payload):
        raise IndexError
    argument = int.from_bytes(payload[pos + 1:pos + 1 + width], "big")
    if major != 7 and argument < (24 if width == 1 else 1 << (4 * width)):
        raise _malformed(f"{argument} not in its shortest form")
    return major, argument, pos + 1 + width


def _item_end(payload: Buffer, pos: int) -> int:
    """Where the item at ``pos`` ends (its heads are read, nothing is built)."""
    return _walk(payload, pos, -1)[1]


def _walk(payload: Buffer, pos: int, limit: int) -> tuple[int, int]:
    """``(items, end)`` of the item at ``pos``, its heads read and string
    contents skipped; with ``limit >= 0`` it stops once it has counted past
    it. IndexError where the payload ends inside the item."""
    remaining, count = 1, 0
    while remaining:
        initial = payload[pos]
        if initial & 0x1F < 24:  # the argument in the initial byte: most items
            major, argument, pos = initial >> 5, initial & 0x1F, pos + 1
        else:
            major, argument, pos = _head(payload, pos)
        remaining -= 1
        if major == 6:
            remaining += 1  # the tag's content is the item
            continue
        count += 1
        if count > limit >= 0:
            return count, pos
        if major in (2, 3):
            pos += argument
        elif major == 4:
            remaining += argument
        elif major == 5:
            remaining += 2 * argument
    if pos > len(payload):
        raise IndexError
    return count, pos


def _head_bytes(major: int, length: int) -> bytes:
    """The preferred head of an item of major type ``major`` (a string's,
    an array's, a map's) and ``length``."""
    if length < 24:
        return bytes([major << 5 | length])
    for info, width in ((24, 1), (25, 2), (26, 4), (27, 8)):
        if length < 1 << (8 * width):
            return bytes([major << 5 | info]) + length.to_bytes(width, "big")
    raise _malformed(f"a length of {length}")


def _no_pause() -> None:
    pass


def _decode_steps(payload: Buffer, pos: int, depth: int, step: int,
                  pause: Callable[[], None]) -> tuple[Any, int]:
    """The item at ``pos`` and where it ends. ``depth`` is what is left of
    the depth bound for it, as :func:`decode_payload`'s ``max_depth`` for a
    payload holding only this item."""
    end = _item_end(payload, pos)
    major, length, start = _head(payload, pos)
    if end - pos <= step or major not in (4, 5):  # small, or one string or number
        return decode_payload(payload[pos:end], depth), end
    if depth <= 0:
        raise _malformed("nested too deeply")
    pairs = major == 5
    out: Any = {} if pairs else []
    group_start = position = start
    group_items = 0

    def flush() -> None:
        if not group_items:
            return
        wrapper = _head_bytes(major, group_items) + payload[group_start:position]
        pause()
        decoded = decode_payload(wrapper, depth)  # the wrapper stands where the container is
        if not pairs:
            out.extend(decoded)
            return
        for key, value in decoded.items():
            if key in out:
                raise _malformed(f"duplicate key {key!r}")
            out[key] = value

    for _ in range(length):
        key_end = _item_end(payload, position) if pairs else position
        item_end = _item_end(payload, key_end)
        if item_end - position <= step:
            if item_end - group_start > step:
                flush()
                group_start, group_items = position, 0
            group_items += 1
            position = item_end
            continue
        flush()  # a large element: walked on its own
        if pairs:
            key = decode_payload(payload[position:key_end], depth - 1)
            if type(key) is not str:
                raise _malformed(f"map key {key!r} is not a text string")
            if key in out:
                raise _malformed(f"duplicate key {key!r}")
            out[key], position = _decode_steps(payload, key_end, depth - 1, step, pause)
        else:
            item, position = _decode_steps(payload, position, depth - 1, step, pause)
            out.append(item)
        group_start, group_items = position, 0
    flush()
    return out, position


def check_value(value: object, max_depth: int = DEFAULT_MAX_DEPTH) -> None:
    """Raise :class:`ValueModelError` unless ``value`` is exactly a wire value
    (exact types, text keys) within ``max_depth`` nested containers."""
    _check(value, "$", max_depth)


# -- fast paths -------------------------------------------------------------
# Walks without path bookkeeping for the common case; when one meets anything
# unusual it raises _Slow and the caller takes the walk that names the path.


class _Slow(Exception):
    pass


_F32: Final = struct.Struct("<f")
_F64: Final = struct.Struct(">d")
_SHORTER_FLOATS: Final = ((b"\xf9", struct.Struct(">e")), (b"\xfa", struct.Struct(">f")))
_FLOAT_LAYOUTS: Final = {0xF9: struct.Struct(">e"), 0xFA: struct.Struct(">f"), 0xFB: _F64}


def _float_plain(value: float) -> bool:
    """Whether the shortest exact encoding of ``value`` is the 64-bit one."""
    if math.isnan(value):  # preferred serialization has a 16-bit one
        return False
    try:
        return bool(_F32.unpack(_F32.pack(value))[0] != value)
    except OverflowError:
        return True  # beyond float32's range


def _checked_plain(value: Any, depth: int) -> bool:
    """check_value's test without paths (raises _Slow instead), and whether
    the plain encoding is the preferred serialization."""
    kind = type(value)
    if kind is dict or kind is list:
        if depth <= 0:
            raise _Slow
        if kind is dict:
            if any(type(k) is not str for k in value):
                raise _Slow
            items = value.values()
        else:
            items = value
        plain = True
        for item in items:
            kind = type(item)
            if kind is dict or kind is list:
                plain = _checked_plain(item, depth - 1) and plain
            elif kind is float:
                plain = plain and _float_plain(item)
            elif item is not None and kind not in _SCALARS:
                raise _Slow
        return plain
    if kind is float:
        return _float_plain(value)
    if value is not None and kind not in _SCALARS:
        raise _Slow
    return True


def _checked_plain_levels(value: Any, depth: int) -> bool:
    """:func:`_checked_plain` for a large tree (what a decoder builds): one
    level at a time, every element of a level looked at by C loops (``map``,
    ``set``), not by a Python loop per container; slower for a small one."""
    level = [value]
    plain = True
    seen = 0
    while True:
        seen += len(level)
        if seen > _LEVELS_BUDGET:  # shared references can make a small value huge
            raise _Slow
        kinds = set(map(type, level))
        if not kinds <= _LEAVES | _CONTAINERS:
            raise _Slow
        if float in kinds and plain:
            plain = all(map(_float_plain, _of_type(level, float)))
        if not kinds & _CONTAINERS:
            return plain
        if depth <= 0:
            raise _Slow
        maps = _of_type(level, dict) if dict in kinds else []
        if maps and not set(map(type, itertools.chain.from_iterable(maps))) <= _KEYS:
            raise _Slow
        level = _children(maps, _of_type(level, list) if list in kinds else [])
        depth -= 1


def _fast_wire(value: Any, depth: int, short_floats: list[bool]) -> Any:
    """to_wire for values made of exactly the model's types; maps keep their
    order, and ``short_floats`` turns true at a float that has a shorter
    exact encoding than 64 bits. A cycle runs into the depth bound and so into
    the slow walk."""
    kind = type(value)
    if kind is dict:
        if depth <= 0:
            raise _Slow
        out = {}
        for key, item in value.items():
            if type(key) is not str:
                raise _Slow
            if not key.isascii():
                _fast_text(key)
            kind = type(item)
            if kind is str:
                if not item.isascii():
                    _fast_text(item)
                out[key] = item
            elif kind is dict or kind is list:
                out[key] = _fast_wire(item, depth - 1, short_floats)
            elif kind is float:
                if not _float_plain(item):
                    short_floats[0] = True
                out[key] = item
            elif item is None or kind in _SCALARS:
                out[key] = item
            else:
                raise _Slow
        return out
    if kind is list:
        if depth <= 0:
            raise _Slow
        items = []
        for item in value:
            kind = type(item)
            if kind is str:
                if not item.isascii():
                    _fast_text(item)
                items.append(item)
            elif kind is dict or kind is list:
                items.append(_fast_wire(item, depth - 1, short_floats))
            elif kind is float:
                if not _float_plain(item):
                    short_floats[0] = True
                items.append(item)
            elif item is None or kind in _SCALARS:
                items.append(item)
            else:
                raise _Slow
        return items
    if kind is str:
        if not value.isascii():
            _fast_text(value)
        return value
    if kind is float:
        short_floats[0] = not _float_plain(value)
        return value
    if value is None or kind in _SCALARS:
        return value
    raise _Slow


def _fast_text(value: str) -> None:
    try:
        value.encode()
    except UnicodeEncodeError:
        raise _Slow from None


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
_LEAVES: Final = _SCALARS | {type(None)}
_CONTAINERS: Final = frozenset({dict, list})
_KEYS: Final = frozenset({str})
_LEVELS_BUDGET: Final = 1 << 20
_SHORT_FLOATS: Final[Mapping[type, Callable[[cbor2.CBOREncoder, Any], None]]] = {
    float: _encode_float,
}
#: The portable ASCII identifier: binding and variable names (R-RUN-3,
#: R-VARS-1), and the map keys a path writes as ``.name`` (R-VAL-3).
IDENTIFIER: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def child_path(path: str, key: str) -> str:
    """``$.name`` for ASCII identifier keys, ``$["odd key"]`` (a JSON string)
    otherwise: the same in every language (R-VAL-3)."""
    if IDENTIFIER.fullmatch(key):
        return f"{path}.{key}"
    return f"{path}[{json.dumps(key, ensure_ascii=False)}]"


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
    :class:`ValueModelError` naming the path. Maps keep their order.
    """
    return to_wire_plain(value, max_depth)[0]


def to_wire_plain(value: object, max_depth: int = DEFAULT_MAX_DEPTH) -> tuple[Value, bool]:
    """:func:`to_wire`, and whether cbor2's plain encoding of the result is
    its preferred serialization (``plain=`` of :func:`encode_payload`)."""
    short_floats = [False]
    try:
        return _fast_wire(value, max_depth, short_floats), not short_floats[0]
    except _Slow:
        return _to_wire(value, "$", max_depth, set()), False


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
                            path, f"map key {key!r} is {_a(type(key).__name__)}, not a str"
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
    hint = "; did you forget `await`?" if isinstance(value, Awaitable) else ""
    raise ValueModelError(path, f"{kind.__name__} is outside the value model{hint}")


def _a(noun: str) -> str:
    return f"an {noun}" if noun[:1] in "aeiou" else f"a {noun}"
