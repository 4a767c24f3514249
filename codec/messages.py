"""The message catalogue (spec §7): one frozen dataclass per frame type.

Each class knows its frame type and the role that may send it, turns itself
into its CBOR envelope (``to_wire``) and is rebuilt from a decoded envelope
by ``from_wire``, which enforces the CDDL in ``spec/tether.cddl``: required
keys, types, ranges, and no unknown keys.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Final, Literal, TypeAlias, TypeVar, overload

from .errors import ErrorCode, RemoteProtocolError
from .frames import MAX_PAYLOAD_LENGTH, MIN_MAX_FRAME_BYTES, FrameType
from .values import IDENTIFIER, MAX_MAX_DEPTH, MIN_MAX_DEPTH, Value

PROTOCOL_VERSION: Final = 1
#: Call ids are unsigned 53-bit so every language holds them exactly (R-CALL-2).
MAX_CALL_ID: Final = 2**53 - 1
#: A value sits at most this many containers deep inside its envelope (CALL: map, args).
ENVELOPE_DEPTH: Final = 2
#: Bytes a frame's envelope may add to the value it carries (spec §10).
ENVELOPE_OVERHEAD: Final = 1024
#: RESULT and DONE hold their value one level down, in their own map (R-CBOR-8).
_SHALLOW_ENVELOPES: Final = frozenset({FrameType.RESULT, FrameType.DONE})


def envelope_depth(frame_type: FrameType) -> int:
    """Containers a frame of this type puts around its value (R-CBOR-8)."""
    return 1 if frame_type in _SHALLOW_ENVELOPES else ENVELOPE_DEPTH


#: The largest ``variables_bytes``: a RUN carrying that much stays within the
#: bounds a guest applies before RUN (R-VARS-1, R-LIMIT-2).
MAX_VARIABLES_BYTES: Final = 4 * 1024 * 1024


def variable_name_problem(name: str) -> str | None:
    """Why ``name`` cannot be a variable a RUN carries (R-VARS-1), or None."""
    if not IDENTIFIER.fullmatch(name):
        return "is not an identifier of [A-Za-z_][A-Za-z0-9_]*"
    if name.startswith("_"):
        return "is private (starts with _)"
    return None


class Role(enum.Enum):
    HOST = "host"
    GUEST = "guest"


class Stream(enum.Enum):
    STDOUT = "stdout"
    STDERR = "stderr"


def _invalid(message: str) -> RemoteProtocolError:
    return RemoteProtocolError(ErrorCode.INVALID_MESSAGE, message)


_T = TypeVar("_T")


class _Fields:
    """Reads typed fields out of a decoded envelope, then rejects leftovers."""

    def __init__(self, envelope: object, what: str) -> None:
        if type(envelope) is not dict:
            raise _invalid(f"{what} payload is not a map")
        self._map: dict[str, Any] = envelope
        self._what = what
        self._seen: set[str] = set()

    def get(self, key: str, kind: type[_T], *, optional: bool = False) -> _T | None:
        self._seen.add(key)
        if key not in self._map:
            if optional:
                return None
            raise _invalid(f"{self._what} lacks {key!r}")
        value = self._map[key]
        if type(value) is not kind:
            raise _invalid(f"{self._what}.{key} must be {kind.__name__}")
        return value

    def req(self, key: str, kind: type[_T]) -> _T:
        value = self.get(key, kind)
        assert value is not None
        return value

    @overload
    def uint(self, key: str, *, optional: Literal[False] = False, minimum: int = 0,
             maximum: int = 2**64 - 1) -> int: ...
    @overload
    def uint(self, key: str, *, optional: bool, minimum: int = 0,
             maximum: int = 2**64 - 1) -> int | None: ...

    def uint(
        self, key: str, *, optional: bool = False, minimum: int = 0, maximum: int = 2**64 - 1
    ) -> int | None:
        value = self.get(key, int, optional=optional)
        if value is not None and not minimum <= value <= maximum:
            raise _invalid(f"{self._what}.{key} out of range")
        return value

    def any(self, key: str) -> Value:
        self._seen.add(key)
        if key not in self._map:
            raise _invalid(f"{self._what} lacks {key!r}")
        value: Value = self._map[key]
        return value

    def has(self, key: str) -> bool:
        return key in self._map

    def done(self) -> None:
        extra = sorted(set(self._map) - self._seen)
        if extra:
            raise _invalid(f"{self._what} has unknown keys {extra}")


def _texts(values: object, what: str, *, nonempty: bool = False) -> tuple[str, ...]:
    if type(values) is not list or not all(type(v) is str for v in values):
        raise _invalid(f"{what} must be an array of text")
    if nonempty and not values:
        raise _invalid(f"{what} must not be empty")
    return tuple(values)


@dataclass(frozen=True, slots=True)
class Hello:
    """Guest → host, first frame. ``protocol``: the version the guest speaks;
    ``implementation``: free text naming the guest; ``languages``: what RUN
    may ask for; ``capabilities``: extension names (spec §11)."""

    TYPE: ClassVar[FrameType] = FrameType.HELLO
    SENDER: ClassVar[Role] = Role.GUEST

    implementation: str
    languages: tuple[str, ...]
    protocol: int = PROTOCOL_VERSION
    capabilities: tuple[str, ...] = ()

    def to_wire(self) -> dict[str, Any]:
        return {
            "protocol": self.protocol,
            "implementation": self.implementation,
            "languages": list(self.languages),
            "capabilities": list(self.capabilities),
        }

    @classmethod
    def from_wire(cls, envelope: object) -> Hello:
        f = _Fields(envelope, "HELLO")
        hello = cls(
            protocol=f.uint("protocol"),  # a uint before its version is compared (R-ORDER-1)
            implementation=f.req("implementation", str),
            languages=_texts(f.req("languages", list), "HELLO.languages", nonempty=True),
            capabilities=_texts(f.req("capabilities", list), "HELLO.capabilities"),
        )
        f.done()
        return hello


@dataclass(frozen=True, slots=True)
class Binding:
    """A binding the program may call: its ``name`` (an identifier), and
    optional human/model-facing ``signature`` and ``doc`` text."""

    name: str
    signature: str | None = None
    doc: str | None = None

    def to_wire(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name}
        if self.signature is not None:
            out["signature"] = self.signature
        if self.doc is not None:
            out["doc"] = self.doc
        return out

    @classmethod
    def from_wire(cls, envelope: object) -> Binding:
        f = _Fields(envelope, "RUN.bindings[]")
        binding = cls(
            name=f.req("name", str),
            signature=f.get("signature", str, optional=True),
            doc=f.get("doc", str, optional=True),
        )
        f.done()
        if not IDENTIFIER.fullmatch(binding.name):
            raise _invalid(f"binding name {binding.name!r} is not an identifier")
        return binding


@dataclass(frozen=True, slots=True)
class RunLimits:
    """Limits the guest applies to the program (spec §10). The first five
    are protocol limits both sides enforce; the rest are resource limits the
    guest applies to its own process where the platform allows (absent:
    not applied)."""

    output_bytes: int
    value_bytes: int
    frame_bytes: int
    max_depth: int
    max_calls_in_flight: int
    memory_bytes: int | None = None
    cpu_seconds: int | None = None
    open_files: int | None = None
    file_bytes: int | None = None
    processes: int | None = None
    variables_bytes: int | None = None  # exactly when RUN has variables (R-VARS-1)

    _REQUIRED: ClassVar = ("output_bytes", "value_bytes", "frame_bytes", "max_depth",
                           "max_calls_in_flight")
    _OPTIONAL: ClassVar = ("memory_bytes", "cpu_seconds", "open_files", "file_bytes", "processes",
                           "variables_bytes")

    def to_wire(self) -> dict[str, int]:
        out = {name: getattr(self, name) for name in self._REQUIRED}
        out.update({n: getattr(self, n) for n in self._OPTIONAL if getattr(self, n) is not None})
        return out

    @classmethod
    def from_wire(cls, envelope: object) -> RunLimits:
        f = _Fields(envelope, "RUN.limits")
        values: dict[str, int | None] = {name: f.uint(name) for name in cls._REQUIRED}
        values.update({name: f.uint(name, optional=True) for name in cls._OPTIONAL})
        f.done()
        limits = cls(**values)  # type: ignore[arg-type]
        problem = limits.problem()
        if problem:
            raise _invalid(f"RUN.limits: {problem}")
        return limits

    def problem(self) -> str | None:
        """Why these limits break the floors of spec §10, or None."""
        if not MIN_MAX_FRAME_BYTES <= self.frame_bytes <= MAX_PAYLOAD_LENGTH:
            return f"frame_bytes must be in [{MIN_MAX_FRAME_BYTES}, {MAX_PAYLOAD_LENGTH}]"
        if not MIN_MAX_DEPTH <= self.max_depth <= MAX_MAX_DEPTH:
            return f"max_depth must be in [{MIN_MAX_DEPTH}, {MAX_MAX_DEPTH}]"
        if not 1 <= self.value_bytes <= self.frame_bytes - ENVELOPE_OVERHEAD:
            return f"value_bytes must be in [1, frame_bytes - {ENVELOPE_OVERHEAD}]"
        if self.max_calls_in_flight < 1:
            return "max_calls_in_flight must be at least 1"
        if self.variables_bytes is not None and self.variables_bytes > MAX_VARIABLES_BYTES:
            return f"variables_bytes must be at most {MAX_VARIABLES_BYTES}"
        return None


@dataclass(frozen=True, slots=True)
class Run:
    """Host → guest: the program ``source`` in ``language``, the ``bindings``
    to expose, and the ``limits`` to honour. ``variables`` (spec §7.9): names
    to put in the program's scope, and a request for its top-level names in
    DONE; None: neither. ``last_expression``: a last bare expression is the
    program's value (R-VARS-7)."""

    TYPE: ClassVar[FrameType] = FrameType.RUN
    SENDER: ClassVar[Role] = Role.HOST

    source: str
    language: str
    bindings: tuple[Binding, ...]
    limits: RunLimits
    variables: dict[str, Value] | None = None
    last_expression: bool = False

    def to_wire(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "source": self.source,
            "language": self.language,
            "bindings": [b.to_wire() for b in self.bindings],
            "limits": self.limits.to_wire(),
        }
        if self.variables is not None:
            out["variables"] = self.variables
        if self.last_expression:
            out["last_expression"] = True
        return out

    @classmethod
    def from_wire(cls, envelope: object) -> Run:
        f = _Fields(envelope, "RUN")
        last = f.get("last_expression", bool, optional=True)
        run = cls(
            source=f.req("source", str),
            language=f.req("language", str),
            bindings=tuple(Binding.from_wire(b) for b in f.req("bindings", list)),
            limits=RunLimits.from_wire(f.req("limits", dict)),
            variables=f.get("variables", dict, optional=True),
            last_expression=bool(last),
        )
        f.done()
        names = [b.name for b in run.bindings]
        if len(set(names)) != len(names):
            raise _invalid("RUN.bindings repeats a name")
        problem = run.variables_problem()
        if problem:
            raise _invalid(f"RUN.variables: {problem}")
        return run

    def variables_problem(self) -> str | None:
        """Why ``variables`` break R-VARS-1 (but for their size), or None."""
        if (self.variables is None) != (self.limits.variables_bytes is None):
            return "limits.variables_bytes must be present exactly when variables are"
        bindings = {b.name for b in self.bindings}
        for name in self.variables or ():
            problem = variable_name_problem(name)
            if problem is None and name in bindings:
                problem = "is the name of a binding"
            if problem:
                return f"{name!r} {problem}"
        return None


@dataclass(frozen=True, slots=True)
class Call:
    """Guest → host: call binding ``name`` with ``args`` and ``kwargs``;
    ``id`` is strictly greater than every earlier CALL's id (R-CALL-2)."""

    TYPE: ClassVar[FrameType] = FrameType.CALL
    SENDER: ClassVar[Role] = Role.GUEST

    id: int
    name: str
    args: list[Value] = field(default_factory=list)
    kwargs: dict[str, Value] = field(default_factory=dict)

    def to_wire(self) -> dict[str, Any]:
        # Keys in wire order (length-first), so the payload encodes fast.
        return {"id": self.id, "args": self.args, "name": self.name, "kwargs": self.kwargs}

    @classmethod
    def from_wire(cls, envelope: object) -> Call:
        f = _Fields(envelope, "CALL")
        call_id = f.uint("id", minimum=1, maximum=MAX_CALL_ID)
        call = cls(
            id=call_id, name=f.req("name", str), args=f.req("args", list),
            kwargs=f.req("kwargs", dict),
        )
        f.done()
        return call


@dataclass(frozen=True, slots=True)
class CallError:
    """Why a call failed: a call-scoped ``code`` (spec §9), the ``type`` name
    the program sees (the host exception's class name for BINDING_ERROR) and
    a ``message``."""

    code: ErrorCode
    type: str
    message: str

    def to_wire(self) -> dict[str, Any]:
        return {"code": int(self.code), "type": self.type, "message": self.message}

    def fitted(self, value_bytes: int) -> CallError:
        """R-RESULT-6: the error as a host may send it, whatever raised it:
        valid text, ``type`` within 256 bytes, and the RESULT's payload
        within ``value_bytes`` + ENVELOPE_OVERHEAD (the message cut)."""
        type_ = _cut(_valid(self.type), MAX_ERROR_TYPE_BYTES)
        room = value_bytes + ENVELOPE_OVERHEAD - _RESULT_ERROR_FRAMING - len(type_.encode())
        return CallError(self.code, type_, _cut(_valid(self.message), room))

    @classmethod
    def from_wire(cls, envelope: object) -> CallError:
        f = _Fields(envelope, "RESULT.error")
        code = _error_code(f.req("code", int), fatal=False, what="RESULT.error.code")
        error = cls(code=code, type=f.req("type", str), message=f.req("message", str))
        f.done()
        return error


#: The longest error type name a DONE or a RESULT carries (R-DONE-7, R-RESULT-6).
MAX_ERROR_TYPE_BYTES: Final = 256
#: What a RESULT with an error takes besides its two texts, at most: the
#: maps' heads, the keys, the id, the code and the texts' length heads.
_RESULT_ERROR_FRAMING: Final = 64


def _valid(text: str) -> str:
    """Each surrogate (a Python string may hold them) as U+FFFD, as R-OUTPUT-2 says."""
    return text if text.isascii() else _SURROGATE.sub("\ufffd", text)


_SURROGATE: Final = re.compile("[\ud800-\udfff]")


def _cut(text: str, limit: int) -> str:
    """``text`` within ``limit`` UTF-8 bytes, cut at a code point and ending
    with an ellipsis (U+2026) when cut."""
    data = text.encode()
    if len(data) <= limit:
        return text
    if limit < 3:
        return ""
    return data[: limit - 3].decode(errors="ignore") + "\u2026"


@dataclass(frozen=True, slots=True)
class Result:
    """Host → guest: the outcome of call ``id``: ``value``, or ``error``."""

    TYPE: ClassVar[FrameType] = FrameType.RESULT
    SENDER: ClassVar[Role] = Role.HOST

    id: int
    value: Value = None
    error: CallError | None = None

    def to_wire(self) -> dict[str, Any]:
        if self.error is not None:
            return {"id": self.id, "error": self.error.to_wire()}
        return {"id": self.id, "value": self.value}

    @classmethod
    def from_wire(cls, envelope: object) -> Result:
        f = _Fields(envelope, "RESULT")
        call_id = f.uint("id", minimum=1, maximum=MAX_CALL_ID)
        if f.has("error") == f.has("value"):
            raise _invalid("RESULT needs exactly one of 'value' and 'error'")
        if f.has("error"):
            result = cls(id=call_id, error=CallError.from_wire(f.req("error", dict)))
        else:
            result = cls(id=call_id, value=f.any("value"))
        f.done()
        return result


@dataclass(frozen=True, slots=True)
class Output:
    """Guest → host: ``text`` the program wrote to ``stream``."""

    TYPE: ClassVar[FrameType] = FrameType.OUTPUT
    SENDER: ClassVar[Role] = Role.GUEST

    stream: Stream
    text: str

    def to_wire(self) -> dict[str, Any]:
        return {"text": self.text, "stream": self.stream.value}  # in wire order

    @classmethod
    def from_wire(cls, envelope: object) -> Output:
        f = _Fields(envelope, "OUTPUT")
        stream = f.req("stream", str)
        if stream not in ("stdout", "stderr"):
            raise _invalid(f"OUTPUT.stream {stream!r} is neither 'stdout' nor 'stderr'")
        output = cls(stream=Stream(stream), text=f.req("text", str))
        f.done()
        return output


@dataclass(frozen=True, slots=True)
class ProgramError:
    """Why the program failed: exception ``type`` name and ``message``; the
    ``traceback`` text showing only the program's own frames; ``line``, the
    1-based line of the program where it was raised, if known; ``code``, set
    only when a tether limit caused it (e.g. VALUE_TOO_LARGE)."""

    type: str
    message: str
    traceback: str = ""
    line: int | None = None
    code: ErrorCode | None = None

    def to_wire(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "type": self.type, "message": self.message, "traceback": self.traceback,
        }
        if self.line is not None:
            out["line"] = self.line
        if self.code is not None:
            out["code"] = int(self.code)
        return out

    @classmethod
    def from_wire(cls, envelope: object) -> ProgramError:
        f = _Fields(envelope, "DONE.error")
        code = f.get("code", int, optional=True)
        error = cls(
            type=f.req("type", str),
            message=f.req("message", str),
            traceback=f.req("traceback", str),
            line=f.uint("line", optional=True, maximum=MAX_CALL_ID),
            code=None if code is None else _error_code(code, fatal=False, what="DONE.error.code"),
        )
        f.done()
        return error


@dataclass(frozen=True, slots=True)
class Done:
    """Guest → host, last frame of a run: the program's return ``value``, or
    the ``error`` that ended it; when RUN had variables, the program's
    top-level ``variables`` and the names ``dropped`` (name → why) (§7.9)."""

    TYPE: ClassVar[FrameType] = FrameType.DONE
    SENDER: ClassVar[Role] = Role.GUEST

    value: Value = None
    error: ProgramError | None = None
    variables: dict[str, Value] | None = None
    dropped: dict[str, str] | None = None

    def to_wire(self) -> dict[str, Any]:
        out: dict[str, Any] = (
            {"error": self.error.to_wire()} if self.error is not None else {"value": self.value})
        if self.variables is not None:
            out["dropped"] = self.dropped or {}
            out["variables"] = self.variables
        return out

    @classmethod
    def from_wire(cls, envelope: object) -> Done:
        f = _Fields(envelope, "DONE")
        if f.has("error") == f.has("value"):
            raise _invalid("DONE needs exactly one of 'value' and 'error'")
        if f.has("variables") != f.has("dropped"):
            raise _invalid("DONE needs both or neither of 'variables' and 'dropped'")
        variables = f.get("variables", dict, optional=True)
        dropped = f.get("dropped", dict, optional=True)
        if dropped is not None and not all(type(v) is str for v in dropped.values()):
            raise _invalid("DONE.dropped must map names to text")
        if f.has("error"):
            done = cls(error=ProgramError.from_wire(f.req("error", dict)),
                       variables=variables, dropped=dropped)
        else:
            done = cls(value=f.any("value"), variables=variables, dropped=dropped)
        f.done()
        return done


@dataclass(frozen=True, slots=True)
class Cancel:
    """Host → guest: stop the program (``reason`` is informative)."""

    TYPE: ClassVar[FrameType] = FrameType.CANCEL
    SENDER: ClassVar[Role] = Role.HOST

    reason: str = ""

    def to_wire(self) -> dict[str, Any]:
        return {"reason": self.reason}

    @classmethod
    def from_wire(cls, envelope: object) -> Cancel:
        f = _Fields(envelope, "CANCEL")
        cancel = cls(reason=f.req("reason", str))
        f.done()
        return cancel


@dataclass(frozen=True, slots=True)
class Error:
    """Either side: a connection error ``code`` and ``message``; the sender
    closes the connection after it (R-ERR-1)."""

    TYPE: ClassVar[FrameType] = FrameType.ERROR
    SENDER: ClassVar[Role | None] = None  # either role

    code: ErrorCode
    message: str

    def to_wire(self) -> dict[str, Any]:
        return {"code": int(self.code), "message": self.message}

    @classmethod
    def from_wire(cls, envelope: object) -> Error:
        f = _Fields(envelope, "ERROR")
        code = _error_code(f.req("code", int), fatal=True, what="ERROR.code")
        error = cls(code=code, message=f.req("message", str))
        f.done()
        return error


def _error_code(value: int, *, fatal: bool, what: str) -> ErrorCode:
    try:
        code = ErrorCode(value)
    except ValueError:
        raise _invalid(f"{what} {value} is not in the registry") from None
    if code.fatal != fatal:
        kind = "connection" if fatal else "call"
        raise _invalid(f"{what} {value} is not a {kind} error code")
    return code


Message: TypeAlias = Hello | Run | Call | Result | Output | Done | Cancel | Error

MESSAGE_TYPES: Final[Mapping[FrameType, Callable[[object], Message]]] = {
    cls.TYPE: cls.from_wire for cls in (Hello, Run, Call, Result, Output, Done, Cancel, Error)
}
