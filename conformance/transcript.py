"""Transcripts: the text format of recorded exchanges, and pattern matching.

A transcript is UTF-8 text (see conformance/README.md for the full format)::

    # scenario: sequential-calls
    # title: Two binding calls in a row
    # requirements: R-CALL-1, R-CALL-2, R-RESULT-2
    # modes: guest host
    # bindings: add
    # host-result: {"status": "ok", "value": 6}
    === frames
    < HELLO {"protocol": 1, "implementation": "<text>", "languages": "<any>", ...}
      # hex 5448010100...
    > RUN {"source": "<program>", "language": "<language>", ...}
    < CALL {"id": "<id:1>", "name": "add", "args": [1, 2], "kwargs": {}}

``<`` is a frame the guest sends, ``>`` one the host sends; ``<~``/``>~``
mark frames that may arrive in any order among their neighbours with the same
mark; ``<?`` a frame the guest SHOULD send (required only with --strict);
``> RAW <hex>`` raw bytes; ``< EOF``/``> EOF`` the end of that side's stream.
Each language's program lives beside the transcript as ``program.<ext>``
(``program.py``, ``program.js``, ``program.rb``: :data:`EXTENSIONS`).
Payloads are CBOR diagnostic notation (RFC 8949 §8); strings of the form
``"<...>"`` are placeholders (see :func:`match`).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cbor2

from tether.codec import FrameType

#: The ``applies`` of a scenario every guest runs.
EVERY_GUEST = "every guest"
PLACEHOLDER = re.compile(r"<([a-z]+)(?::([^<>]+))?>")
#: Recorded bytes longer than this (hex digits) are not written out.
HEX_SHOWN = 8192


@dataclass
class Step:
    """One line of the frames section."""

    sender: str  # "guest" | "host"
    kind: str  # a FrameType name, "RAW" or "EOF"
    payload: Any = None  # decoded pattern (None for RAW/EOF)
    raw: bytes = b""  # for RAW
    unordered: bool = False
    optional: bool = False
    hex: str = ""  # recorded bytes, informative
    note: str = ""


@dataclass
class Transcript:
    scenario: str
    title: str = ""
    requirements: list[str] = field(default_factory=list)
    modes: list[str] = field(default_factory=lambda: ["guest", "host"])
    bindings: list[str] = field(default_factory=list)
    limits: dict[str, int] = field(default_factory=dict)
    host_result: dict[str, Any] = field(default_factory=dict)
    timeout: float = 10.0  # the host's wall-clock limit in host mode
    level: str = "MUST"  # "SHOULD": run only with --strict
    programs: dict[str, str] = field(default_factory=dict)  # from program.* beside the file
    steps: list[Step] = field(default_factory=list)
    directory: Path | None = None  # where it was loaded from
    programs_directory: Path | None = None  # where its programs are kept (--programs), if apart
    variables: dict[str, Any] | None = None  # RUN's variables (spec §7.9), if any
    last_expression: bool = False
    #: "every guest", or the languages whose own case it is (a language
    #: without a program for it is not checked by it)
    applies: str = EVERY_GUEST

    @property
    def for_every_guest(self) -> bool:
        return self.applies == EVERY_GUEST


# -- diagnostic notation --------------------------------------------------------


def diag(value: Any) -> str:
    """Compact CBOR diagnostic notation of a wire value (JSON where JSON can)."""
    if value is None:
        return "null"
    if value is True or value is False:
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, bytes):
        return f"h'{value.hex()}'"
    if isinstance(value, list):
        return "[" + ", ".join(diag(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{diag(k)}: {diag(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"not a wire value: {value!r}")


class MissingDependency(RuntimeError):
    """A package the conformance tools need is not installed."""


def parse_diag(text: str) -> Any:
    try:
        import cbor_diag
    except ModuleNotFoundError:
        raise MissingDependency(
            "tether conformance reads CBOR diagnostic notation with the cbor-diag package, "
            "a dependency of tether that is not installed: pip install 'cbor-diag>=1.2,<2'"
        ) from None
    return cbor2.loads(cbor_diag.diag2cbor(text))


# -- the file format --------------------------------------------------------------


def format_transcript(t: Transcript) -> str:
    out = ["# tether conformance transcript (see conformance/README.md)",
           f"# scenario: {t.scenario}", f"# title: {t.title}",
           f"# requirements: {', '.join(t.requirements)}", f"# modes: {' '.join(t.modes)}",
           f"# level: {t.level}"]
    if not t.for_every_guest:
        out.append(f"# applies: {t.applies}")
    if t.bindings:
        out.append(f"# bindings: {', '.join(t.bindings)}")
    if t.limits:
        out.append(f"# limits: {json.dumps(t.limits, sort_keys=True)}")
    if t.variables is not None:
        out.append(f"# variables: {diag(t.variables)}")
    if t.last_expression:
        out.append("# last-expression: true")
    if t.host_result:
        out.append(f"# host-result: {diag(t.host_result)}")
    if t.timeout != 10.0:
        out.append(f"# timeout: {t.timeout:g}")
    out.append("=== frames")
    for step in t.steps:
        mark = ("<" if step.sender == "guest" else ">") + (
            "~" if step.unordered else "?" if step.optional else "")
        if step.kind == "EOF":
            out.append(f"{mark} EOF")
        elif step.kind == "RAW":
            out.append(f"{mark} RAW {step.raw.hex()}")
        else:
            out.append(f"{mark} {step.kind} {diag(step.payload)}")
        if step.note:
            out.append(f"  # note: {step.note}")
        if step.hex and step.kind != "RAW":
            shown = step.hex if len(step.hex) <= HEX_SHOWN else \
                f"({len(step.hex) // 2} bytes, not shown)"
            out.append(f"  # hex {shown}")
    return "\n".join(out) + "\n"


#: The file extension of each language's program beside a transcript:
#: ``program.<ext>``. A language not listed declares its own (``--extension``
#: of ``tether conformance guest``); without one, its name is the extension.
#: TypeScript runs the .js program where a scenario has no .ts one.
EXTENSIONS = {"python": "py", "javascript": "js", "typescript": "ts", "ruby": "rb",
              "lua": "lua", "go": "go", "rust": "rs", "java": "java", "kotlin": "kt",
              "csharp": "cs", "php": "php", "perl": "pl", "elixir": "exs", "swift": "swift"}


def extension_of(language: str) -> str:
    return EXTENSIONS.get(language, language)


def program_file(directory: Path, language: str, extension: str | None = None) -> Path:
    return directory / f"program.{extension or extension_of(language)}"


def load_transcript(directory: Path, languages: dict[str, str] | None = None) -> Transcript:
    """``directory/transcript.txt`` plus the ``program.*`` files beside it.
    ``languages``: extension -> language, for languages the table lacks."""
    t = parse_transcript((directory / "transcript.txt").read_text(encoding="utf-8"))
    t.directory = directory
    t.programs = read_programs(directory, languages)
    return t


def read_programs(directory: Path, languages: dict[str, str] | None = None) -> dict[str, str]:
    """The ``program.*`` files in ``directory``, by language (``languages``:
    extension -> language, for languages the table lacks). TypeScript runs
    the JavaScript program where there is no TypeScript one."""
    by_extension = {v: k for k, v in EXTENSIONS.items()} | (languages or {})
    programs = {}
    for path in sorted(directory.glob("program.*")):
        extension = path.suffix[1:]
        programs[by_extension.get(extension, extension)] = path.read_text(encoding="utf-8")
    if "javascript" in programs and "typescript" not in programs:
        programs["typescript"] = programs["javascript"]
    return programs


def parse_transcript(text: str) -> Transcript:
    t = Transcript(scenario="")
    in_frames = False
    for line in text.splitlines():
        if line.startswith("=== frames"):
            in_frames = True
        elif in_frames:
            _frame_line(t, line)
        else:
            match = re.match(r"# ([a-z-]+): ?(.*)", line)
            if match:
                _header(t, match.group(1), match.group(2))
    return t


def _header(t: Transcript, key: str, value: str) -> None:
    if key == "scenario":
        t.scenario = value
    elif key == "title":
        t.title = value
    elif key == "requirements":
        t.requirements = [r.strip() for r in value.split(",") if r.strip()]
    elif key == "modes":
        t.modes = value.split()
    elif key == "level":
        t.level = value
    elif key == "bindings":
        t.bindings = [b.strip() for b in value.split(",") if b.strip()]
    elif key == "limits":
        t.limits = json.loads(value)
    elif key == "host-result":
        t.host_result = parse_diag(value)
    elif key == "variables":
        t.variables = parse_diag(value)
    elif key == "last-expression":
        t.last_expression = value == "true"
    elif key == "timeout":
        t.timeout = float(value)
    elif key == "applies":
        t.applies = value


def _frame_line(t: Transcript, line: str) -> None:
    stripped = line.strip()
    if not stripped:
        return
    if stripped.startswith("# hex "):
        t.steps[-1].hex = stripped[6:]
        return
    if stripped.startswith("# note: "):
        t.steps[-1].note = stripped[8:]
        return
    match = re.match(r"([<>])([~?]?) (\w+) ?(.*)", stripped)
    if not match:
        raise ValueError(f"not a frame line: {line!r}")
    arrow, flag, kind, rest = match.groups()
    step = Step(sender="guest" if arrow == "<" else "host", kind=kind,
                unordered=flag == "~", optional=flag == "?")
    if kind == "RAW":
        step.raw = bytes.fromhex(rest)
    elif kind != "EOF":
        FrameType[kind]  # validates the name
        step.payload = parse_diag(rest)
    t.steps.append(step)


# -- matching -------------------------------------------------------------------


class Mismatch(Exception):
    pass


#: Envelope keys that hold values: maps below them keep the sender's order
#: (R-CBOR-2), so their keys are matched in order; the envelope's own keys
#: may come in any order.
VALUE_KEYS = frozenset({"value", "args", "kwargs"})


def match(pattern: Any, actual: Any, bindings: dict[str, Any], path: str = "$",
          *, ordered: bool = False) -> None:
    """Raise Mismatch unless ``actual`` fits ``pattern``. Placeholders:
    ``<any>`` anything, ``<text>`` any text, ``<prefix:T>`` text that starts
    with T, ``<int>`` any integer,
    ``<id:NAME>`` an integer bound to NAME on first use and equal to it after,
    ``<program>``/``<language>`` the run's source and language (bound by the
    runner). Containers match element by element, maps key by key; maps
    inside values (under ``value``, ``args``, ``kwargs``) in the same order.
    A pattern key ending in ``?`` (``"line?"``) is optional: its value is
    matched when the key is present (R-DONE-2's ``line``)."""
    if isinstance(pattern, str):
        placeholder = PLACEHOLDER.fullmatch(pattern)
        if placeholder:
            _match_placeholder(placeholder.group(1), placeholder.group(2), actual, bindings, path)
            return
    if isinstance(pattern, dict):
        def name_of(key: str) -> str:
            return key if ordered else _key_name(key)
        required = {k for k in pattern if name_of(k) == k}
        allowed = {name_of(k) for k in pattern}
        if not isinstance(actual, dict) or not required <= set(actual) <= allowed:
            raise Mismatch(f"{path}: expected keys {sorted(pattern)}, got {_show(actual)}")
        if ordered and list(actual) != list(pattern):
            raise Mismatch(f"{path}: expected the keys in the order {list(pattern)}, "
                           f"got {list(actual)} (R-CBOR-2)")
        for key in pattern:
            name = name_of(key)
            if name in actual:
                match(pattern[key], actual[name], bindings, f"{path}.{name}",
                      ordered=ordered or (path == "$" and name in VALUE_KEYS))
        return
    if isinstance(pattern, list):
        if not isinstance(actual, list) or len(actual) != len(pattern):
            raise Mismatch(f"{path}: expected {len(pattern)} items, got {_show(actual)}")
        for i, (p, a) in enumerate(zip(pattern, actual, strict=True)):
            match(p, a, bindings, f"{path}[{i}]", ordered=ordered)
        return
    if isinstance(pattern, float) and isinstance(actual, float) and math.isnan(pattern):
        if not math.isnan(actual):
            raise Mismatch(f"{path}: expected NaN, got {actual!r}")
        return
    if isinstance(pattern, float) and isinstance(actual, float) and \
            math.copysign(1, pattern) != math.copysign(1, actual):
        raise Mismatch(f"{path}: expected {pattern!r}, got {actual!r}")  # -0.0 is not 0.0
    if type(pattern) is not type(actual) or pattern != actual:
        raise Mismatch(f"{path}: expected {_show(pattern)}, got {_show(actual)}")


def _key_name(key: str) -> str:
    """An envelope key's name: ``"line?"`` is the optional key ``line``."""
    return key[:-1] if len(key) > 1 and key.endswith("?") else key


def _match_placeholder(kind: str, name: str | None, actual: Any, bindings: dict[str, Any],
                       path: str) -> None:
    if kind == "any":
        return
    if kind == "text":
        if not isinstance(actual, str):
            raise Mismatch(f"{path}: expected text, got {_show(actual)}")
        return
    if kind in ("int", "id"):
        if type(actual) is not int:
            raise Mismatch(f"{path}: expected an integer, got {_show(actual)}")
        if kind == "id" and name is not None:
            key = f"id:{name}"
            if key in bindings and bindings[key] != actual:
                raise Mismatch(f"{path}: expected id {name} = {bindings[key]}, got {actual}")
            if key not in bindings and actual in {v for k, v in bindings.items()
                                                  if k.startswith("id:")}:
                raise Mismatch(f"{path}: id {actual} was already used")
            bindings[key] = actual
        return
    if kind == "prefix":
        if not isinstance(actual, str) or not actual.startswith(name or ""):
            raise Mismatch(f"{path}: expected text starting {name!r}, got {_show(actual)}")
        return
    if kind in ("program", "language"):
        if bindings.get(kind) != actual:
            raise Mismatch(f"{path}: expected the run's {kind}, got {_show(actual)}")
        return
    raise Mismatch(f"{path}: unknown placeholder <{kind}>")


def fresh_ids(patterns: Any) -> dict[str, int]:
    """Bind every ``<id:k>`` in ``patterns`` (in order) to 1, 2, 3...: the
    call ids a scripted guest uses, which the runner can then predict."""
    found: dict[str, int] = {}

    def walk(item: Any) -> None:
        if isinstance(item, str):
            placeholder = PLACEHOLDER.fullmatch(item)
            if placeholder and placeholder.group(1) == "id":
                found.setdefault(f"id:{placeholder.group(2)}", len(found) + 1)
        elif isinstance(item, dict):
            for value in item.values():
                walk(value)
        elif isinstance(item, list):
            for value in item:
                walk(value)

    for pattern in patterns:
        walk(pattern)
    return found


def substitute(pattern: Any, bindings: dict[str, Any], *, in_value: bool = False) -> Any:
    """A concrete value from a pattern: placeholders replaced by bindings,
    optional envelope keys (``"line?"``) sent as present."""
    if isinstance(pattern, str):
        placeholder = PLACEHOLDER.fullmatch(pattern)
        if placeholder:
            kind, name = placeholder.groups()
            if kind == "prefix":  # the shortest text that fits
                return name
            key = f"{kind}:{name}" if name else kind
            if key not in bindings:
                raise KeyError(f"placeholder {pattern} has no value here")
            return bindings[key]
        return pattern
    if isinstance(pattern, dict):
        if in_value:
            return {k: substitute(v, bindings, in_value=True) for k, v in pattern.items()}
        return {_key_name(k): substitute(v, bindings, in_value=k in VALUE_KEYS)
                for k, v in pattern.items()}
    if isinstance(pattern, list):
        return [substitute(v, bindings, in_value=in_value) for v in pattern]
    return pattern


def _show(value: Any) -> str:
    text = diag(value) if _is_wire(value) else repr(value)
    return text if len(text) < 200 else text[:200] + "…"


def _is_wire(value: Any) -> bool:
    try:
        diag(value)
    except TypeError:
        return False
    return True
