"""The ``tether`` command line."""

from __future__ import annotations

import argparse
import asyncio
import base64
import dataclasses
import importlib
import json
import math
import os
import re
import sys
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, NoReturn, cast

from . import __version__
from .conformance import cli as conformance_cli
from .host import (
    Binding,
    GuestUnavailable,
    Limits,
    Printed,
    RunEvent,
    RunResult,
    Runtime,
    Sandbox,
    SandboxUnavailable,
)
from .host.bindings import prompt
from .host.bindings.prepared import describe_bindings

EXTENSIONS = {".py": "python", ".js": "javascript", ".mjs": "javascript", ".ts": "typescript"}
DESCRIPTION = ("Run one program written by a language model in a fresh child process, with "
               "your functions available to it as async calls.")
_DEFAULTS = Limits()
_SIZE = re.compile(r"(\d+)\s*([KMG]i?B?)?", re.IGNORECASE)
_UNITS = {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3}


class UsageError(Exception):
    """A mistake in how tether was called (exit status 2)."""

    def __init__(self, message: str, type_: str = "UsageError") -> None:
        super().__init__(message)
        self.type = type_


def _size(text: str) -> int | None:
    """Bytes, with an optional K/M/G suffix (binary: 1K = 1024), or "none"."""
    if text.lower() in ("none", "unlimited"):
        return None
    match = _SIZE.fullmatch(text.strip())
    if match is None:
        raise argparse.ArgumentTypeError(f"{text!r} is not a size (e.g. 65536, 512K, 2G, none)")
    return int(match[1]) * _UNITS[(match[2] or "")[:1].lower()]


def _count(text: str) -> int | None:
    if text.lower() in ("none", "unlimited"):
        return None
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number or none") from None


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive whole number")
    return value


def _human_size(n: int | None) -> str:
    if n is None:
        return "none"
    for unit, factor in (("G", 1024**3), ("M", 1024**2), ("K", 1024)):
        if n >= factor and n % factor == 0:
            return f"{n // factor}{unit}"
    return str(n)


#: Limits the command line sets: flag, Limits field, parser, help.
_LIMIT_FLAGS: tuple[tuple[str, str, Callable[[str], Any], str], ...] = (
    ("--timeout", "timeout", float, "wall-clock limit for the run, in seconds"),
    ("--call-timeout", "call_timeout", float, "limit for one binding call, in seconds"),
    ("--memory", "memory_bytes", _size, "memory of the guest (e.g. 512M; none: unlimited)"),
    ("--cpu-seconds", "cpu_seconds", _count, "CPU seconds of the guest"),
    ("--output-bytes", "output_bytes", _size, "printed output kept (head and tail)"),
    ("--value-bytes", "value_bytes", _size, "largest return value, argument set or result"),
    ("--open-files", "open_files", _count, "open file descriptors"),
    ("--file-bytes", "file_bytes", _size, "largest file the program writes"),
    ("--processes", "processes", _count, "processes and threads of the run"),
    ("--disk-bytes", "disk_bytes", _size, "what the program may write to each writable place"),
)


_METAVARS: dict[Callable[[str], Any], str] = {float: "SECONDS", _size: "BYTES", _count: "N"}


def _default_text(field: str) -> str:
    value = getattr(_DEFAULTS, field)
    if field == "timeout":
        return f"{value:g}"
    if field == "cpu_seconds" and value is None:
        return "timeout + 1"
    if field.endswith("_bytes"):
        return _human_size(value)
    return "none" if value is None else str(value)


class _Parser(argparse.ArgumentParser):
    """Says what was wrong in one line, not under the whole usage block
    (``--help`` shows that); its subcommands' parsers are of this class."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: {message} (see {self.prog} --help)\n")


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="tether", description=DESCRIPTION)
    parser.add_argument("--version", action="version", version=f"tether {__version__}")
    # Its parsers are _Parsers; the conformance command adds one of its own.
    commands = cast("argparse._SubParsersAction[argparse.ArgumentParser]",
                    parser.add_subparsers(dest="command", required=True))
    run = commands.add_parser(
        "run", help="run one program and print what it printed and returned",
        description="Run one program and print what it printed, then => and the value it "
        "returned. Exit status: 0 if it returned, 1 if it ended otherwise (an error, a "
        "timeout, a limit...), 2 if tether could not run it.")
    run.add_argument("path", nargs="?", help="the program's file, or - for standard input")
    run.add_argument("--demo", action="store_true",
                     help="run the demo program (examples/demo.py), with the demo bindings "
                     "unless --bindings names others")
    run.add_argument("--lang", choices=sorted(set(EXTENSIONS.values())),
                     help="the program's language (default: from the file's extension; "
                     "python for standard input)")
    run.add_argument("--bindings", action="append", default=[], metavar="MODULE:ATTR",
                     help="a mapping of name to callable, or an iterable of callables, "
                     "imported with the current directory on the path; repeatable")
    run.add_argument("--env", action="append", default=[], metavar="NAME[=VALUE]",
                     help="a variable for the program's otherwise empty environment "
                     "(NAME alone: this shell's value); repeatable")
    run.add_argument("--sandbox", choices=[s.value for s in Sandbox], default="auto",
                     help="isolation profile (default: auto = namespaces where available, "
                     "else process with a warning)")
    run.add_argument("--json", action="store_true",
                     help="print exactly one JSON object describing the result")
    run.add_argument("--events", action="store_true",
                     help="with --json, first one JSON line per event as it happens "
                     "(printed, call_started, call_ended, events_dropped)")
    run.add_argument("--buffer", action="store_true",
                     help="print the output once the run ends, not as it is printed")
    run.add_argument("--check", action="store_true",
                     help="type-check the program against the bindings first; "
                     "a program that fails is not run (status invalid); one the check "
                     "cannot read runs unchecked, and a line on stderr says why")
    _add_limits(run)
    describe = commands.add_parser("describe", help="print the text that tells a model what "
                                   "its program may call")
    describe.add_argument("--bindings", action="append", default=[], metavar="MODULE:ATTR",
                          help="a mapping of name to binding, or an iterable; repeatable")
    describe.add_argument("--language", choices=["python", "javascript", "typescript"],
                          default="python", help="the program's language (default: %(default)s)")
    describe.add_argument("--summary", action="store_true",
                          help="names and one-line summaries only")
    doctor = commands.add_parser("doctor", help="what isolation this machine offers, and what "
                                 "each profile costs to start")
    doctor.add_argument("--repeat", type=_positive, default=5, metavar="N",
                        help="cold starts to time per profile (default: %(default)s)")
    mcp = commands.add_parser("mcp", help="serve a run_code tool over MCP (the mcp "
                              "extra)")
    mcp.add_argument("--bindings", action="append", default=[], metavar="MODULE:ATTR",
                     help="a mapping of name to binding, or an iterable; repeatable")
    mcp.add_argument("--upstream", action="append", default=[], metavar="COMMAND",
                     help="an MCP server to start (over stdio) whose tools become "
                     "bindings; repeatable")
    mcp.add_argument("--language", choices=["python", "javascript", "typescript"],
                     default="python", help="the programs' language (default: %(default)s)")
    mcp.add_argument("--transport", choices=["stdio", "streamable-http"], default="stdio",
                     help="how clients connect (default: %(default)s)")
    mcp.add_argument("--port", type=int, default=8000,
                     help="with streamable-http, the port on 127.0.0.1 (default: %(default)s)")
    mcp.add_argument("--sandbox", choices=[s.value for s in Sandbox], default="auto",
                     help="isolation profile of the programs' guests (default: %(default)s)")
    mcp.add_argument("--check", action=argparse.BooleanOptionalAction, default=True,
                     help="type-check each program against the bindings before it runs; "
                     "one that fails is not run (default: check)")
    _add_limits(mcp)
    conformance_cli.add_parser(commands)
    return parser


def _add_limits(command: argparse.ArgumentParser) -> None:
    limits = command.add_argument_group("limits")
    for flag, field, kind, text in _LIMIT_FLAGS:
        limits.add_argument(flag, dest=field, type=kind, default=argparse.SUPPRESS,
                            metavar=_METAVARS[kind],
                            help=f"{text} (default: {_default_text(field)})")


def _fail(message: str, type_: str = "UsageError") -> NoReturn:
    raise UsageError(message, type_)


def _load_bindings(specs: Sequence[str]) -> dict[str, Callable[..., Any] | Binding]:
    bindings: dict[str, Callable[..., Any] | Binding] = {}
    if specs and os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.insert(0, os.getcwd())  # as `python -m` does: a module next to the program
    for spec in specs:
        module_name, _, attr = spec.partition(":")
        if not module_name or not attr:
            _fail(f"--bindings {spec!r}: expected MODULE:ATTR")
        try:
            obj: Any = getattr(importlib.import_module(module_name), attr)
        except (ImportError, AttributeError) as exc:
            _fail(f"--bindings {spec!r}: {exc}")
        except Exception as exc:  # the module itself failed: say how, in one line
            _fail(f"--bindings {spec!r}: importing {module_name} raised "
                  f"{type(exc).__name__}: {exc}")
        if isinstance(obj, Mapping):
            bindings.update(obj)
        elif isinstance(obj, Iterable):
            bindings.update({f.name if isinstance(f, Binding)
                             else str(getattr(f, "__name__", repr(f))): f for f in obj})
        else:
            _fail(f"--bindings {spec!r}: not a mapping or an iterable of callables")
    return bindings


def _env(specs: Sequence[str]) -> dict[str, str]:
    env: dict[str, str] = {}
    for spec in specs:
        name, sep, value = spec.partition("=")
        if not name:
            _fail(f"--env {spec!r}: expected NAME=VALUE or NAME")
        if not sep:
            if name not in os.environ:
                _fail(f"--env {name}: not set in this environment")
            value = os.environ[name]
        env[name] = value
    return env


def _limits(args: argparse.Namespace) -> Limits:
    changes = {field: getattr(args, field) for _, field, _, _ in _LIMIT_FLAGS
               if hasattr(args, field)}
    try:
        return dataclasses.replace(_DEFAULTS, **changes)
    except (ValueError, TypeError) as exc:
        _fail(str(exc))


def _read_program(path: str, lang: str | None) -> tuple[str, str]:
    if path == "-":
        return sys.stdin.read(), lang or "python"
    file = Path(path)
    language = lang or EXTENSIONS.get(file.suffix)
    if language is None:
        _fail(f"cannot tell the language of {path!r}; pass --lang")
    try:
        return file.read_text(encoding="utf-8"), language
    except (OSError, UnicodeDecodeError) as exc:
        _fail(f"cannot read {path!r}: {exc}")


def jsonable(value: Any) -> Any:
    """The value model in JSON: bytes as {"$base64": ...}, non-finite floats as {"$float": ...}."""
    if isinstance(value, bytes):
        return {"$base64": base64.b64encode(value).decode()}
    if isinstance(value, float) and not math.isfinite(value):
        return {"$float": repr(value)}
    if isinstance(value, list):
        return [jsonable(v) for v in value]
    if isinstance(value, dict):
        return {k: jsonable(v) for k, v in value.items()}
    return value


def _print_live(event: RunEvent) -> None:
    if isinstance(event, Printed):
        stream = sys.stdout if event.stream == "stdout" else sys.stderr
        stream.write(event.text)
        stream.flush()


def _print_event_json(event: RunEvent) -> None:
    kind = re.sub(r"(?<!^)(?=[A-Z])", "_", type(event).__name__).lower()
    print(json.dumps(jsonable({"event": kind, **dataclasses.asdict(event)}),
                     ensure_ascii=False), flush=True)


def _print_human(result: RunResult, *, live: bool = False) -> None:
    if live:  # the output was printed as it came, up to the output cap
        if result.stats.output_truncated:
            print("\ntether: output past the output cap was not shown", file=sys.stderr)
    else:
        for chunk in result.chunks:
            (sys.stdout if chunk.stream == "stdout" else sys.stderr).write(chunk.text)
    if result.chunks and not result.chunks[-1].text.endswith("\n"):
        # What follows starts a line of its own, not the end of the program's last one.
        last = result.chunks[-1]
        (sys.stdout if last.stream == "stdout" else sys.stderr).write("\n")
    sys.stdout.flush()
    if result.ok:
        if result.value is not None:
            print("=>", json.dumps(jsonable(result.value), ensure_ascii=False, indent=2))
        return
    error = result.error
    if result.status == "error" and error is not None and error.traceback:
        sys.stderr.write(error.traceback)  # it ends with the exception's type and message
        if not error.traceback.endswith("\n"):
            sys.stderr.write("\n")
    else:
        limit = f" ({result.limit})" if result.limit else ""
        detail = "" if error is None else (
            f"{error.type}: {error.message}" if result.status == "error" else error.message)
        print(f"tether: {result.status}{limit}: {detail}", file=sys.stderr)
    for problem in result.diagnostics:  # status invalid: every problem the check found
        where = f"line {problem.line}, column {problem.column}: " if problem.line else ""
        print(f"  {where}{problem.message}", file=sys.stderr)
    if result.raw_stderr and result.status in ("crashed", "protocol_error"):
        print(f"tether: the guest's raw stderr:\n{result.raw_stderr}", file=sys.stderr)


async def _run(args: argparse.Namespace) -> int:
    if args.demo:
        from . import demo

        if args.path is not None:
            _fail("--demo runs the demo program: give no program's file with it")
        source, language = demo.PROGRAM, "python"
        bindings = _load_bindings(args.bindings) if args.bindings else dict(demo.BINDINGS)
    else:
        if args.path is None:
            _fail("run needs the program's file, - for standard input, or --demo")
        source, language = _read_program(args.path, args.lang)
        bindings = _load_bindings(args.bindings)
    limits = _limits(args)
    env = _env(args.env)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            runtime = Runtime(limits=limits, env=env, sandbox=args.sandbox, pool=None)
        except SandboxUnavailable as exc:
            _fail(str(exc), "SandboxUnavailable")
    for warning in caught:  # the message alone, not a line of tether's source
        print(f"tether: warning: {str(warning.message).removeprefix('tether: ')}",
              file=sys.stderr)
    async with runtime:
        try:
            on_event = (_print_event_json if args.events else None) if args.json else \
                (None if args.buffer else _print_live)
            result = await runtime.run(source, language=language, bindings=bindings,
                                       check=args.check, on_event=on_event)
        except GuestUnavailable as exc:
            _fail(str(exc), "GuestUnavailable")
        except (ValueError, TypeError) as exc:
            _fail(str(exc))
    if result.check is not None and not result.check.checked:
        print(f"tether: not checked: {result.check.reason}", file=sys.stderr)
    if args.json:
        print(json.dumps(jsonable(result.to_dict()), ensure_ascii=False))
    else:
        _print_human(result, live=not args.buffer)
    return 0 if result.ok else 1


def _describe(args: argparse.Namespace) -> int:
    bindings = _load_bindings(args.bindings)
    try:
        text = prompt.text(describe_bindings(bindings), args.language, Limits(),
                           summary_only=args.summary)
    except (ValueError, TypeError) as exc:
        _fail(str(exc))
    sys.stdout.write(text)
    return 0


def _mcp(args: argparse.Namespace) -> int:
    try:
        from .integrations.mcp import serve
    except ImportError as exc:
        _fail(f"tether mcp needs the mcp extra (pip install \"./tether[mcp]\"): {exc}")
    bindings = _load_bindings(args.bindings)
    limits = _limits(args)
    try:
        asyncio.run(serve(bindings, upstreams=args.upstream, language=args.language,
                          limits=limits, sandbox=args.sandbox, check=args.check,
                          transport=args.transport, port=args.port))
    except SandboxUnavailable as exc:
        _fail(str(exc), "SandboxUnavailable")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "conformance":
        return conformance_cli.main(args)
    if args.command == "doctor":
        from .doctor import doctor

        return asyncio.run(doctor(args.repeat))
    try:
        if args.command == "describe":
            return _describe(args)
        if args.command == "mcp":
            return _mcp(args)
        return asyncio.run(_run(args))
    except UsageError as exc:
        print(f"tether: {exc}", file=sys.stderr)
        if getattr(args, "json", False):
            print(json.dumps({"status": None, "error": {"type": exc.type, "message": str(exc)}},
                             ensure_ascii=False))
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
