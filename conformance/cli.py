"""``tether conformance``: check a guest or our host against the transcripts.

    tether conformance guest --language python            # our CPython guest
    tether conformance guest --language ruby -- ruby guest.rb   # any guest
    tether conformance host                               # our host engine
    tether conformance record [--check] [SCENARIO...]

Each case prints PASS, FAIL (with the first differing frame) or SKIP and the
requirement ids it checks; the last line counts them. Cases that are not the
guest's (host-mode scenarios, another language's own case) are not listed. A
scenario every guest runs that has no program for the guest's language fails.
``--junit FILE`` writes a JUnit XML report; ``--known-failures FILE`` lists
case ids (one a line, ``#`` comments) expected to fail: they do not fail the
run, but one that passes does, so the list only shrinks. ``--strict`` adds
SHOULD-level expectations (optional frames become required). ``--programs
DIR`` reads a language's ``<scenario>/program.<ext>`` files from DIR (a
port keeps them in its own repository); ``--env NAME[=VALUE]`` passes an
environment variable to the guest.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from . import TRANSCRIPTS

#: The verdict of a case that is not the guest's (runner.NOT_APPLICABLE).
NOT_APPLICABLE = "n/a"

if TYPE_CHECKING:  # the runner loads the host engine: only a conformance command needs it
    from .runner import CaseResult
    from .transcript import Transcript


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser("conformance", help="check a guest or the host against the "
                                 "recorded transcripts")
    modes = parser.add_subparsers(dest="mode", required=True)
    guest = modes.add_parser("guest", help="play the host's side against a guest")
    guest.add_argument("--language", default="python",
                       help="whose program.<ext> files to send (default: python)")
    guest.add_argument("--extension", metavar="EXT",
                       help="the extension of that language's program files (default: the "
                            "language's usual one, e.g. rb for ruby, else its name)")
    guest.add_argument("--transport", choices=("fd3", "stdio"), default="fd3",
                       help="fd3 (default), or stdio: the guest is started with "
                            "TETHER_TRANSPORT=stdio and speaks on stdin/stdout (spec §3.1)")
    guest.add_argument("--env", action="append", default=[], metavar="NAME[=VALUE]",
                       help="set NAME in the guest's environment (repeatable): to VALUE, or "
                            "to its value here; the guest gets only PATH, HOME, TMPDIR, PWD, "
                            "LANG and LC_ALL besides")
    guest.add_argument("--programs", type=Path, metavar="DIR",
                       help="read the language's programs from DIR/<scenario>/program.<ext> "
                            "(before those beside the transcripts)")
    guest.add_argument("guest_command", nargs="*", metavar="-- COMMAND",
                       help="start the guest with this command (default: tether's own guest)")
    host = modes.add_parser("host", help="play recorded guest sides against tether's host")
    host.add_argument("--language", default="python")
    for sub in (guest, host):
        sub.add_argument("--junit", type=Path, metavar="FILE", help="write a JUnit XML report")
        sub.add_argument("--known-failures", type=Path, metavar="FILE")
        sub.add_argument("--strict", action="store_true", help="add SHOULD-level cases")
        sub.add_argument("--scenario", action="append", default=[], help="only these scenarios")
        sub.add_argument("--transcripts", type=Path, default=TRANSCRIPTS, metavar="DIR",
                         help="the transcripts to play (default: those tether ships)")
    record = modes.add_parser("record", help="record the transcripts from our host and guests")
    record.add_argument("--check", action="store_true",
                        help="fail if a fresh recording differs from the committed one")
    record.add_argument("scenarios", nargs="*")


def load_all(directory: Path, only: Sequence[str] = (),
             languages: dict[str, str] | None = None,
             programs: Path | None = None) -> list[Transcript]:
    """Every transcript under ``directory`` (or only those named);
    ``languages``: extension -> language for program files; ``programs``: a
    directory of ``<scenario>/program.<ext>`` files that come before those
    beside the transcripts."""
    from .transcript import load_transcript, read_programs

    names = sorted(d.name for d in directory.iterdir() if (d / "transcript.txt").exists())
    unknown = [name for name in only if name not in names]
    if unknown:
        raise SystemExit(f"tether conformance: unknown scenario {', '.join(map(repr, unknown))}"
                         f" (known: {', '.join(names)})")
    loaded = [load_transcript(directory / name, languages) for name in names
              if not only or name in only]
    if programs is not None:
        for t in loaded:
            t.programs.update(read_programs(programs / t.scenario, languages))
            t.programs_directory = programs / t.scenario
    return loaded


def guest_environment(names: Sequence[str]) -> dict[str, str]:
    """``--env`` arguments as a mapping: NAME=VALUE, or NAME for its value
    here (an unset NAME is an error, not an empty value)."""
    env = {}
    for item in names:
        name, equals, value = item.partition("=")
        if not equals:
            if name not in os.environ:
                raise SystemExit(f"tether conformance: --env {name}: not set here; "
                                 f"give its value as --env {name}=VALUE")
            value = os.environ[name]
        env[name] = value
    return env


def missing_programs(directories: Sequence[Path], language: str,
                     extension: str | None = None) -> str:
    """Why no case can run for ``language`` when not one scenario under
    ``directories`` has a program in it ("" when one has)."""
    from .transcript import extension_of

    ext = extension or extension_of(language)
    # TypeScript runs the JavaScript programs where it has none of its own.
    extensions = (ext, "js") if language == "typescript" else (ext,)
    if any(next(d.glob(f"*/program.{e}"), None) is not None
           for d in directories for e in extensions):
        return ""
    where = " or ".join(str(d) for d in directories)
    return (f"tether conformance: no {language} programs: not one */program.{ext} under "
            f"{where}. Each scenario runs a program written in the guest's language: write "
            f"them as conformance/README.md, 'Porting a guest', says (keep them in a "
            f"directory of your own with --programs DIR; --extension EXT for a language the "
            f"runner does not know).")


async def _run(args: argparse.Namespace, transcripts: Sequence[Transcript]) -> list[CaseResult]:
    from .runner import check_guest, check_host, command_guest, our_guest

    results = []
    extension = getattr(args, "extension", None)
    for t in transcripts:
        if args.mode == "guest":
            launch = (command_guest(args.guest_command, guest_environment(args.env))
                      if args.guest_command else our_guest(args.language))
            case = await check_guest(t, args.language, launch, strict=args.strict,
                                     extension=extension, transport=args.transport)
        else:
            case = await check_host(t, args.language, strict=args.strict)
        results.append(case)
        _print_case(case)
    return results


def _print_case(case: CaseResult) -> None:
    if case.verdict == NOT_APPLICABLE:
        return
    reqs = f" ({', '.join(case.requirements)})" if case.requirements else ""
    print(f"{case.verdict.upper():5} {case.case_id}{reqs}")
    if case.verdict != "pass" and case.detail:
        for line in case.detail.splitlines():
            print(f"      {line}")


def known_failures(path: Path | None) -> set[str]:
    if path is None:
        return set()
    lines = (line.split("#", 1)[0].strip() for line in path.read_text().splitlines())
    return {line for line in lines if line}


def write_junit(results: list[CaseResult], path: Path) -> None:
    results = [r for r in results if r.verdict != NOT_APPLICABLE]
    suite = ET.Element("testsuite", name="tether-conformance", tests=str(len(results)),
                       failures=str(sum(r.verdict == "fail" for r in results)),
                       skipped=str(sum(r.verdict == "skip" for r in results)))
    for r in results:
        case = ET.SubElement(suite, "testcase", classname=f"{r.mode}.{r.language}",
                             name=r.scenario, time=f"{r.seconds:.3f}")
        ET.SubElement(ET.SubElement(case, "properties"), "property", name="requirements",
                      value=", ".join(r.requirements))
        if r.verdict == "fail":
            ET.SubElement(case, "failure", message=r.detail.splitlines()[0] if r.detail
                          else "failed").text = r.detail
        elif r.verdict == "skip":
            ET.SubElement(case, "skipped", message=r.detail)
    ET.ElementTree(suite).write(path, encoding="unicode", xml_declaration=True)


def main(args: argparse.Namespace) -> int:
    from .transcript import MissingDependency

    try:
        return _main(args)
    except MissingDependency as exc:
        print(f"tether: {exc}", file=sys.stderr)
        return 2


def _main(args: argparse.Namespace) -> int:
    if args.mode == "record":
        from .record import record_all

        problems = asyncio.run(record_all(args.scenarios or None, check=args.check))
        for problem in problems:
            print(problem, file=sys.stderr)
        return 1 if problems else 0
    extension = getattr(args, "extension", None)
    languages = {extension: args.language} if extension else None
    transcripts = load_all(args.transcripts, args.scenario, languages,
                           getattr(args, "programs", None))
    if args.mode == "guest":
        guest_environment(args.env)  # before anything runs
        missing = missing_programs([d for d in (args.programs, args.transcripts) if d],
                                   args.language, extension)
        if missing:
            print(missing, file=sys.stderr)
            return 2
    results = asyncio.run(_run(args, transcripts))
    known = known_failures(args.known_failures)
    failed = [r for r in results if r.verdict == "fail" and r.case_id not in known]
    fixed = [r for r in results if r.verdict == "pass" and r.case_id in known]
    for r in fixed:
        print(f"FIXED {r.case_id}: passes but is listed in {args.known_failures}; remove it")
    if args.junit:
        write_junit(results, args.junit)
    counts = {v: sum(r.verdict == v for r in results) for v in ("pass", "fail", "skip")}
    should = "" if args.strict else " (SHOULD-level expectations not checked: --strict)"
    print(f"{counts['pass']} passed, {counts['fail']} failed, {counts['skip']} skipped{should}")
    return 1 if failed or fixed else 0
