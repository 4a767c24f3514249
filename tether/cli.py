"""The ``tether`` command line."""

from __future__ import annotations

import argparse
import asyncio
import base64
import importlib
import json
import math
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, NoReturn

from .conformance import cli as conformance_cli
from .host import Binding, Limits, RunResult, Runtime, Sandbox, SandboxUnavailable, prompt
from .host.bindings import describe_bindings

EXTENSIONS = {".py": "python", ".js": "javascript", ".mjs": "javascript", ".ts": "typescript"}


class UsageError(Exception):
    pass


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tether", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="run one program and print what it printed and returned")
    run.add_argument("path", help="the program's file, or - for standard input")
    run.add_argument("--lang", choices=sorted(set(EXTENSIONS.values())),
                     help="the program's language (default: from the file's extension)")
    run.add_argument("--bindings", action="append", default=[], metavar="MODULE:ATTR",
                     help="a mapping of name to callable, or an iterable of callables; repeatable")
    run.add_argument("--timeout", type=float, default=None, metavar="SECONDS",
                     help="wall-clock limit (default: %(default)s, i.e. the Limits default)")
    run.add_argument("--json", action="store_true",
                     help="print exactly one JSON object describing the result")
    run.add_argument("--check", action="store_true",
                     help="type-check the program against the bindings first; "
                     "a program that fails is not run (status invalid)")
    run.add_argument("--sandbox", choices=[s.value for s in Sandbox], default="auto",
                     help="isolation profile (default: auto = namespaces where available)")
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
    doctor.add_argument("--repeat", type=int, default=5, help="cold starts to time per profile")
    conformance_cli.add_parser(commands)
    return parser


def _fail(message: str) -> NoReturn:
    raise UsageError(message)


def _load_bindings(specs: Sequence[str]) -> dict[str, Callable[..., Any] | Binding]:
    bindings: dict[str, Callable[..., Any] | Binding] = {}
    for spec in specs:
        module_name, _, attr = spec.partition(":")
        if not module_name or not attr:
            _fail(f"--bindings {spec!r}: expected MODULE:ATTR")
        try:
            obj: Any = getattr(importlib.import_module(module_name), attr)
        except (ImportError, AttributeError) as exc:
            _fail(f"--bindings {spec!r}: {exc}")
        if isinstance(obj, Mapping):
            bindings.update(obj)
        elif isinstance(obj, Iterable):
            bindings.update({f.name if isinstance(f, Binding)
                             else str(getattr(f, "__name__", repr(f))): f for f in obj})
        else:
            _fail(f"--bindings {spec!r}: not a mapping or an iterable of callables")
    return bindings


def _read_program(path: str, lang: str | None) -> tuple[str, str]:
    if path == "-":
        if lang is None:
            _fail("reading the program from standard input needs --lang")
        return sys.stdin.read(), lang
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


def _print_human(result: RunResult) -> None:
    for chunk in result.chunks:
        (sys.stdout if chunk.stream == "stdout" else sys.stderr).write(chunk.text)
    if result.stats.output_truncated:
        print("[tether: output truncated]", file=sys.stderr)
    if result.ok:
        if result.value is not None:
            print("=>", json.dumps(jsonable(result.value), ensure_ascii=False, indent=2))
        return
    error = result.error
    if error is not None and error.traceback:
        sys.stderr.write(error.traceback)
    detail = f"{error.type}: {error.message}" if error is not None else ""
    limit = f" ({result.limit})" if result.limit else ""
    print(f"tether: {result.status}{limit}: {detail}", file=sys.stderr)
    if result.raw_stderr and result.status in ("crashed", "protocol_error"):
        print(f"tether: the guest's raw stderr:\n{result.raw_stderr}", file=sys.stderr)


async def _run(args: argparse.Namespace) -> int:
    source, language = _read_program(args.path, args.lang)
    bindings = _load_bindings(args.bindings)
    try:
        limits = Limits() if args.timeout is None else Limits(timeout=args.timeout)
    except ValueError as exc:
        _fail(str(exc))
    try:
        runtime = Runtime(limits=limits, sandbox=args.sandbox, pool=None)
    except SandboxUnavailable as exc:
        _fail(str(exc))
    async with runtime:
        try:
            result = await runtime.run(source, language=language, bindings=bindings,
                                       check=args.check)
        except (ValueError, TypeError) as exc:
            _fail(str(exc))
    if args.json:
        print(json.dumps(jsonable(result.to_dict()), ensure_ascii=False))
    else:
        _print_human(result)
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
        return asyncio.run(_run(args))
    except UsageError as exc:
        print(f"tether: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
