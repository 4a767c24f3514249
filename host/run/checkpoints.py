"""Checkpoints: what a suspended run saves, sealed with a key of the
Runtime's, and read back as the hostile input they are.

A checkpoint is data its caller stores anywhere (a database, a queue, a
file) and hands back to ``Runtime.resume`` hours later, perhaps in another
process: whoever holds the store may alter it. So it is sealed: an
HMAC-SHA256 under the Runtime's checkpoint key covers it, and resume
checks that before anything else is read. docs/checkpoints.md states the
format (3), what a checkpoint guarantees and what it does not.

Reading one: its size against ``Limits.checkpoint_bytes``, then the small
outer map (the codec's strict decoder), the format number, the MAC, and
only then the body, strictly decoded and bounded as the wire's payloads
are (spec §5), off the event loop in threads of their own; every field is
then checked and any fault is a :class:`CheckpointError`. The limits of the
resumed run are the host's, never the checkpoint's (it carries none).
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from tether.codec import (
    CallError,
    ProtocolError,
    Result,
    ValueModelError,
    check_value,
    decode_payload,
    decode_payload_in_steps,
    encode_payload,
    encode_payload_in_steps,
    value_excess,
)

from ..aio.reader import between_steps, paced
from ..aio.threads import WorkerThreads
from ..limits import Limits

#: The checkpoint format written and read. Formats 1 and 2 (before the
#: MAC) are refused: read unsealed, a store could make them say anything.
FORMAT: Final = 3
#: The least bytes a checkpoint key may have, and the MAC's size.
KEY_BYTES: Final = 32
#: What the MAC covers before the body: the format, so that it is sealed too.
_DOMAIN: Final = b"tether checkpoint 3\x00"
#: The containers around a value in the body: the body, "calls", a call, "args".
_BODY_DEPTH: Final = 4
_BODY_KEYS: Final = ("source", "language", "bindings", "variables", "last_expression",
                     "calls", "reason")
_ANSWERS: Final = ("value", "error", "suspended")

#: Sealing and opening checkpoints: threads of their own, so that neither
#: the event loop nor other runs' frames wait for a large one.
_work = WorkerThreads(2, "tether-checkpoint")


class Suspend(Exception):
    """Raised by a binding (or returned by an approval hook) to end the run
    with status ``suspended`` and a checkpoint to resume from later; the
    ``reason`` is the result's ``error.message``."""

    def __init__(self, reason: str = "the run was suspended") -> None:
        super().__init__(reason)
        self.reason = reason


class CheckpointError(ValueError):
    """The bytes are not a checkpoint this Runtime can resume: not one, of
    another format, altered or sealed with another key, too large for the
    limits, or with bindings other than those given to resume."""


@dataclass(slots=True)
class LoggedCall:
    """One call of the log: what the program asked, and how it was answered."""

    name: str
    args: list[Any]
    kwargs: dict[str, Any]
    value: Any = None
    error: CallError | None = None
    answered: bool = False  # else in flight when the run suspended: runs live on resume
    suspended: bool = False  # the call that suspended the run

    def to_wire(self) -> dict[str, Any]:
        entry: dict[str, Any] = {"name": self.name, "args": self.args, "kwargs": self.kwargs}
        if self.suspended:
            entry["suspended"] = True
        elif self.error is not None:
            entry["error"] = self.error.to_wire()
        elif self.answered:
            entry["value"] = self.value
        return entry


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """What a suspended run needs to go on (docs/checkpoints.md)."""

    source: str
    language: str
    bindings: list[str]  # the names of the run's bindings
    variables: dict[str, Any] | None
    last_expression: bool
    calls: list[LoggedCall]  # in call order; one of them is the call that suspended
    reason: str = ""

    def body(self) -> dict[str, Any]:
        return {"source": self.source, "language": self.language, "bindings": self.bindings,
                "variables": self.variables, "last_expression": self.last_expression,
                "calls": [c.to_wire() for c in self.calls], "reason": self.reason}


class CheckpointKeys:
    """The keys a Runtime seals checkpoints with (the first) and opens them
    with (any: a key being rotated out still opens what it sealed).

    ``key``: bytes of at least KEY_BYTES (``secrets.token_bytes(32)``), or
    a sequence of them, newest first; the caller keeps it, so that another
    process given the same key resumes the checkpoints. None: a random key
    made once per process, so checkpoints resume in this process only."""

    def __init__(self, key: bytes | Sequence[bytes] | None) -> None:
        keys = (_process_key(),) if key is None else \
            (key,) if isinstance(key, bytes | bytearray) else tuple(key)
        if not keys or not all(isinstance(k, bytes | bytearray) and len(k) >= KEY_BYTES
                               for k in keys):
            raise ValueError(f"checkpoint_key must be bytes of at least {KEY_BYTES} "
                             "(secrets.token_bytes(32)), or a sequence of such, newest first")
        self._keys = tuple(bytes(k) for k in keys)
        self.given = key is not None

    def mac(self, body: bytes) -> bytes:
        return _mac(self._keys[0], body)

    def sealed(self, body: bytes, mac: bytes) -> bool:
        return any(hmac.compare_digest(_mac(k, body), mac) for k in self._keys)


@functools.cache
def _process_key() -> bytes:
    return secrets.token_bytes(KEY_BYTES)


def _mac(key: bytes, body: bytes) -> bytes:
    digest = hmac.new(key, _DOMAIN, hashlib.sha256)
    digest.update(body)
    return digest.digest()


async def seal(checkpoint: Checkpoint, keys: CheckpointKeys, max_bytes: int) -> bytes:
    """``checkpoint``'s bytes, sealed with ``keys``; CheckpointError if they
    would take more than ``max_bytes`` (``Limits.checkpoint_bytes``)."""
    body = checkpoint.body()  # on the loop: the log as it is now
    return await paced(_work, functools.partial(_sealed, body, keys, max_bytes))


def _sealed(body: dict[str, Any], keys: CheckpointKeys, max_bytes: int) -> bytes:
    encoded = encode_payload_in_steps(body, plain=False, between_steps=between_steps)
    data = encode_payload({"tether_checkpoint": FORMAT, "body": encoded,
                           "mac": keys.mac(encoded)})
    if len(data) > max_bytes:
        raise CheckpointError(f"the checkpoint would take {len(data)} bytes, over "
                              f"Limits.checkpoint_bytes ({max_bytes})")
    return data


@dataclass(frozen=True, slots=True)
class Opened:
    """A checkpoint read back: ``size``, the bytes its body took."""

    checkpoint: Checkpoint
    size: int


async def open_checkpoint(data: object, keys: CheckpointKeys, limits: Limits) -> Opened:
    """Read ``data`` back (see the module's docstring), for a run under
    ``limits``; CheckpointError for anything but a checkpoint sealed with
    ``keys`` whose answers fit ``limits``."""
    if not isinstance(data, bytes | bytearray | memoryview):
        raise CheckpointError(f"a checkpoint is bytes, not {type(data).__name__}")
    data = bytes(data)
    if len(data) > limits.checkpoint_bytes:
        raise CheckpointError(f"the checkpoint takes {len(data)} bytes, over "
                              f"Limits.checkpoint_bytes ({limits.checkpoint_bytes})")
    return await paced(_work, functools.partial(_opened, data, keys, limits))


def _opened(data: bytes, keys: CheckpointKeys, limits: Limits) -> Opened:
    version = _format_of(data)
    if version is None:
        raise CheckpointError("not a tether checkpoint")
    if version != FORMAT:
        raise CheckpointError(
            f"a tether checkpoint of format {version}; this version of tether reads "
            f"format {FORMAT} only (formats 1 and 2 were not sealed)")
    try:
        outer = decode_payload(data, max_depth=1, max_items=7)
    except ProtocolError as exc:
        raise CheckpointError(f"not a tether checkpoint: {exc.message}") from None
    fields = _fields(outer, "the checkpoint", ("tether_checkpoint", "body", "mac"))
    body, mac = fields["body"], fields["mac"]
    if type(body) is not bytes or type(mac) is not bytes:
        raise CheckpointError("not a tether checkpoint: its body and MAC must be bytes")
    if not keys.sealed(body, mac):
        raise CheckpointError(
            "the checkpoint's MAC does not match: it was altered, or sealed by a Runtime with "
            "another checkpoint_key" + ("" if keys.given else
                                        " (this Runtime was given none: its key is this "
                                        "process's own)"))
    try:
        decoded = decode_payload_in_steps(body, limits.max_depth + _BODY_DEPTH,
                                          between_steps=between_steps)
    except ProtocolError as exc:
        raise CheckpointError(f"the checkpoint's body is not strict CBOR: {exc.message}") \
            from None
    checkpoint = _checkpoint(decoded)
    for number, call in enumerate(checkpoint.calls, 1):
        problem = None if not call.answered or call.error is not None else \
            answer_problem(call.value, limits)
        if problem is not None:
            raise CheckpointError(f"call {number} of the checkpoint's log: its answer {problem}")
    return Opened(checkpoint, len(body))


_FORMAT_KEY: Final = b"\x71tether_checkpoint"  # the first key of every format


def _format_of(data: bytes) -> int | None:
    """The format number a checkpoint of any format starts with: a map
    whose first key is "tether_checkpoint", its value a small uint."""
    if len(data) < 3 + len(_FORMAT_KEY) or not 0xA1 <= data[0] <= 0xB7 \
            or not data.startswith(_FORMAT_KEY, 1):
        return None
    head = data[1 + len(_FORMAT_KEY):]
    if head[0] < 0x18:
        return head[0]
    return head[1] if head[0] == 0x18 else None


def _checkpoint(body: Any) -> Checkpoint:
    """The body's fields, each checked (the strict decoder made every value
    one of the value model already)."""
    fields = _fields(body, "the checkpoint's body", _BODY_KEYS)

    def field(name: str, kind: type) -> Any:
        return _of(fields[name], kind, f"the checkpoint's {name}")

    bindings = field("bindings", list)
    if not all(type(name) is str for name in bindings) or len(set(bindings)) != len(bindings):
        raise CheckpointError("the checkpoint's bindings must be distinct names")
    calls = [_call(entry, number, bindings)
             for number, entry in enumerate(field("calls", list), 1)]
    suspending = sum(c.suspended for c in calls)
    if suspending != 1:
        raise CheckpointError(f"the checkpoint's log marks {suspending} suspending calls, "
                              "not one")
    variables = None if fields["variables"] is None else field("variables", dict)
    return Checkpoint(source=field("source", str), language=field("language", str),
                      bindings=bindings, variables=variables,
                      last_expression=field("last_expression", bool), calls=calls,
                      reason=field("reason", str))


def _call(entry: Any, number: int, bindings: list[str]) -> LoggedCall:
    what = f"call {number} of the checkpoint's log"
    fields = _fields(entry, what, ("name", "args", "kwargs"), _ANSWERS)
    answers = [key for key in _ANSWERS if key in fields]
    if len(answers) > 1:
        raise CheckpointError(f"{what} has {' and '.join(answers)}: at most one")
    name = _of(fields["name"], str, f"{what}: name")
    if name not in bindings:
        raise CheckpointError(f"{what} calls {name!r}, not one of the checkpoint's bindings")
    call = LoggedCall(name, _of(fields["args"], list, f"{what}: args"),
                      _of(fields["kwargs"], dict, f"{what}: kwargs"))
    if "suspended" in fields:
        if fields["suspended"] is not True:
            raise CheckpointError(f"{what}: suspended must be true")
        call.suspended = True
    elif "error" in fields:
        try:
            call.error = CallError.from_wire(fields["error"])
        except ProtocolError as exc:
            raise CheckpointError(f"{what}: {exc.message}") from None
        call.answered = True
    elif "value" in fields:
        call.value, call.answered = fields["value"], True
    return call


def answer_problem(value: Any, limits: Limits) -> str | None:
    """Why ``value`` (a wire value) cannot answer a call of a guest under
    ``limits``, as a RESULT's value must fit them, or None."""
    try:
        check_value(value, limits.max_depth)
    except ValueModelError as exc:
        return f"is outside Limits.max_depth ({limits.max_depth}): {exc}"
    payload = encode_payload(Result(id=1, value=value).to_wire())
    envelope = len(encode_payload(Result(id=1).to_wire())) - 1
    excess = value_excess(payload, limits.value_bytes, envelope_bytes=envelope,
                          envelope_items=4)
    if excess is not None:
        return f"is over Limits.value_bytes ({limits.value_bytes}): {excess.amount} {excess.kind}"
    return None


def _fields(value: Any, what: str, required: Sequence[str],
            optional: Sequence[str] = ()) -> dict[str, Any]:
    if type(value) is not dict:
        raise CheckpointError(f"{what} is not a map")
    missing = [key for key in required if key not in value]
    unknown = sorted(set(value) - set(required) - set(optional))
    if missing or unknown:
        raise CheckpointError(f"{what} " + "; ".join(
            ([f"lacks {missing}"] if missing else []) + ([f"has unknown keys {unknown}"]
                                                         if unknown else [])))
    return value


_KINDS: Final = {str: "text", bool: "a bool", list: "an array", dict: "a map",
                 bytes: "bytes", int: "an integer", float: "a float", type(None): "null"}


def _of(value: Any, kind: type, what: str) -> Any:
    if type(value) is not kind:
        raise CheckpointError(f"{what} must be {_KINDS[kind]}, not {_KINDS[type(value)]}")
    return value
