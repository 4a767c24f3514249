"""The mutation check: every requirement broken in turn, and a case that fails.

    python -m tether.conformance.mutants                  # every mutant
    python -m tether.conformance.mutants R-ERR-2 R-VAL-1  # the mutants of these
    python -m tether.conformance.mutants --list           # what each breaks, no run

Each mutant (mutant_list.py) is one small change to a temporary copy of the
repository's code: the Node guest, the CPython guest or the host. The copy
is made, the change applied to it (never to the repository's files), and
the mutant's cases are run against it: scenarios in guest mode with
``--strict`` (the copy's guest started as a porter's would be, by its
command), scenarios in host mode (``tether conformance host`` run from the
copy), the copy's codec vectors, or a test of the suite. A mutant that no
case fails *survives*, and the check fails: the requirement it breaks is not
caught. So is a mutant whose change no longer applies (the code it names
has moved), and a case that fails on the unchanged copy (it proves nothing).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from tether.host.guests.languages import GuestCommand, guest_env

from . import TRANSCRIPTS
from .mutant_list import MUTANTS, Mutant
from .runner import GuestLauncher, check_guest
from .transcript import Transcript, load_transcript

ROOT = Path(__file__).resolve().parent.parent
#: What a copy holds: the package and what its cases read.
COPIED = ("codec", "conformance", "guest", "host", "tether", "tests", "pyproject.toml")
#: How long a case waits for a guest's frame: our guests answer in
#: milliseconds, and a mutant often never answers.
READ_TIMEOUT = 3.0
#: The longest a host-mode or test case may take in the copy.
CASE_TIMEOUT = 300.0


@dataclass
class Outcome:
    mutant: Mutant
    killed_by: str = ""  # the first case that failed
    problem: str = ""  # the change does not apply, or the check could not run
    seconds: float = 0.0

    @property
    def killed(self) -> bool:
        return bool(self.killed_by) and not self.problem


def copy_tree(into: Path) -> None:
    """The repository's code, as :data:`COPIED` says, in ``into``; the Node
    guest's packages linked, not copied."""
    ignore = shutil.ignore_patterns("node_modules", "__pycache__", "_build")
    for name in COPIED:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, into / name, symlinks=True, ignore=ignore)
        elif source.exists():
            shutil.copy2(source, into / name)
    modules = ROOT / "guest" / "node" / "node_modules"
    if modules.exists():
        (into / "guest" / "node" / "node_modules").symlink_to(modules)


def applies_to(mutant: Mutant, root: Path = ROOT) -> str:
    """Whether the mutant's change applies to the code under ``root``
    (without making it): "" when it does, else why not."""
    path = root / mutant.file
    if not path.exists():
        return f"{mutant.file} does not exist"
    found = path.read_text(encoding="utf-8").count(mutant.old)
    return "" if found == 1 else f"{mutant.file}: the text to change is there {found} times"


def apply(mutant: Mutant, tree: Path) -> str:
    """Make the mutant's change in ``tree``; what is wrong if it cannot."""
    problem = applies_to(mutant, tree)
    if not problem:
        path = tree / mutant.file
        path.write_text(path.read_text(encoding="utf-8").replace(mutant.old, mutant.new),
                        encoding="utf-8")
    return problem


def _launcher(guest: str, tree: Path) -> tuple[str, GuestLauncher]:
    """The language a guest-mode case runs, and how to start the copy's guest."""
    if guest == "javascript":
        node = shutil.which("node") or "node"
        main = tree / "guest" / "node" / "main.mjs"
        return "javascript", lambda workdir: GuestCommand(
            (node, "--disable-warning=ExperimentalWarning", str(main), "--cwd", workdir),
            guest_env(workdir))
    import cbor2

    paths = (str(tree), str(Path(cbor2.__file__).resolve().parent.parent))
    main = tree / "guest" / "python" / "main.py"
    argv = [os.path.realpath(sys.executable), "-I", "-S", "-B", str(main)]
    for path in paths:
        argv += ["--path", path]
    return "python", lambda workdir: GuestCommand((*argv, "--cwd", workdir),
                                                  guest_env(workdir))


_transcripts: dict[str, Transcript] = {}


def _transcript(name: str) -> Transcript:
    if name not in _transcripts:
        _transcripts[name] = load_transcript(TRANSCRIPTS / name)
    return _transcripts[name]


async def failing_case(mutant: Mutant, tree: Path) -> tuple[str, str]:
    """The first of the mutant's cases that fails on ``tree`` (and why), or
    ("", "") when every one passes."""
    for case in mutant.cases:
        detail = await _run_case(mutant.guest, case, tree, mutant.transport)
        if detail:
            return case, detail
    return "", ""


async def _run_case(guest: str, case: str, tree: Path, transport: str) -> str:
    """Why ``case`` fails on the copy in ``tree`` ("" when it passes)."""
    if case == "vectors":
        return _subprocess(["node", "--test", "test/vectors.test.mjs"], tree,
                           tree / "guest" / "node")
    if case.startswith("test:"):
        return _subprocess([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider",
                            case[len("test:"):]], tree)
    if guest == "host":
        return _subprocess([sys.executable, "-m", "tether", "conformance", "host", "--strict",
                            "--scenario", case], tree)
    language, launch = _launcher(guest, tree)
    result = await check_guest(_transcript(case), language, launch, strict=True,
                                transport=transport, read_timeout=READ_TIMEOUT)
    if result.verdict not in ("pass", "fail"):
        return f"not run: {result.verdict} {result.detail}"
    return result.detail if result.verdict == "fail" else ""


def _subprocess(argv: Sequence[str], tree: Path, cwd: Path | None = None) -> str:
    """Run a case in the copy ``tree`` (in ``cwd``, else its top), the copy's
    package first on the path."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    try:
        done = subprocess.run(argv, cwd=cwd or tree, env=env, capture_output=True, text=True,
                              timeout=CASE_TIMEOUT, check=False)
    except subprocess.TimeoutExpired:
        return f"timed out after {CASE_TIMEOUT:g} s"
    if done.returncode == 0:
        return ""
    lines = (done.stdout + done.stderr).strip().splitlines()
    return " / ".join(line for line in lines[-6:] if line.strip())


async def run_mutant(mutant: Mutant, baseline: dict[tuple[str, str, str], str]) -> Outcome:
    started = time.monotonic()
    outcome = Outcome(mutant)
    with tempfile.TemporaryDirectory(prefix="tether-mutant-") as scratch:
        tree = Path(scratch)
        copy_tree(tree)
        for case in mutant.cases:  # each case once on the unchanged copy
            key = (mutant.guest, case, mutant.transport)
            if key not in baseline:
                baseline[key] = await _run_case(mutant.guest, case, tree, mutant.transport)
            if baseline[key]:
                outcome.problem = f"{case} fails without the change: {baseline[key]}"
                return outcome
        outcome.problem = apply(mutant, tree)
        if not outcome.problem:
            outcome.killed_by, _ = await failing_case(mutant, tree)
    outcome.seconds = time.monotonic() - started
    return outcome


def selected(names: Iterable[str]) -> list[Mutant]:
    """The mutants that break any of ``names`` (requirement ids or mutant
    names); all of them for none."""
    wanted = set(names)
    if not wanted:
        return list(MUTANTS)
    chosen = [m for m in MUTANTS if wanted & {m.name, *m.requirements}]
    unknown = wanted - {n for m in chosen for n in (m.name, *m.requirements)}
    if unknown:
        raise SystemExit(f"tether mutants: no mutant breaks {', '.join(sorted(unknown))}")
    return chosen


async def run_all(mutants: Sequence[Mutant]) -> list[Outcome]:
    baseline: dict[tuple[str, str, str], str] = {}
    outcomes = []
    for mutant in mutants:
        outcome = await run_mutant(mutant, baseline)
        outcomes.append(outcome)
        _print(outcome)
    return outcomes


def _print(outcome: Outcome) -> None:
    m = outcome.mutant
    what = f"{m.name} ({', '.join(m.requirements)}; {m.guest})"
    if outcome.problem:
        print(f"BROKEN   {what}: {outcome.problem}", flush=True)
    elif outcome.killed:
        print(f"KILLED   {what} by {outcome.killed_by} [{outcome.seconds:.1f} s]", flush=True)
    else:
        print(f"SURVIVED {what}: {m.what}; every case passed: {', '.join(m.cases)}",
              flush=True)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tether.conformance.mutants",
                                     description="Break each requirement in a copy of our "
                                                 "code and check that a case fails.")
    parser.add_argument("names", nargs="*", help="requirement ids or mutant names (default: all)")
    parser.add_argument("--list", action="store_true", help="list the mutants; run nothing")
    args = parser.parse_args(argv)
    mutants = selected(args.names)
    if args.list:
        for m in mutants:
            print(f"{m.name}: {', '.join(m.requirements)} ({m.guest}, {m.file}): {m.what}; "
                  f"cases {', '.join(m.cases)}")
        return 0
    outcomes = asyncio.run(run_all(mutants))
    bad = [o for o in outcomes if not o.killed]
    print(f"{len(outcomes) - len(bad)} killed, {sum(not o.problem for o in bad)} survived, "
          f"{sum(bool(o.problem) for o in bad)} broken")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
