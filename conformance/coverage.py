"""Which vectors, transcripts and tests check each requirement of the spec.

    python -m tether.conformance.coverage          # rewrite conformance/coverage.md
    python -m tether.conformance.coverage --check  # fail if it is stale

A requirement's level is the strongest key word in its text (MUST, SHOULD,
else MAY). Every MUST and SHOULD is cited by a test vector
(``vectors/frames.json``), a transcript (``# requirements:``) or a test
under ``tests/`` (its id written in the test's source), or is listed with a
reason in ``coverage-exceptions.txt``; the test suite checks both ways (an
exception that becomes cited must leave the list). The last column names
the mutants that break each requirement (``mutant_list.py``) and the case
that catches each: the proof that the citations check something.
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SPEC = ROOT / "spec" / "tether-v1.md"
TABLE = HERE / "coverage.md"
EXCEPTIONS = HERE / "coverage-exceptions.txt"

_ID = re.compile(r"\bR-[A-Z]+-\d+\b")
_DEFINITION = re.compile(r"\*\*\[(R-[A-Z]+-\d+)\]\*\*")


@dataclass
class Requirement:
    id: str
    section: str
    level: str  # "MUST" | "SHOULD" | "MAY"
    vectors: list[str] = field(default_factory=list)
    transcripts: list[str] = field(default_factory=list)
    tests: list[str] = field(default_factory=list)
    mutants: list[str] = field(default_factory=list)  # "mutant: the cases that catch it"

    @property
    def cited(self) -> bool:
        return bool(self.vectors or self.transcripts or self.tests)


def _level(text: str) -> str:
    if re.search(r"\b(MUST|REQUIRED|SHALL)\b", text):
        return "MUST"
    if re.search(r"\b(SHOULD|RECOMMENDED)\b", text):
        return "SHOULD"
    return "MAY"


def requirements(spec: str | None = None) -> dict[str, Requirement]:
    """Every requirement the spec defines, with its section and level; a
    requirement's text runs to the next definition or heading."""
    text = SPEC.read_text(encoding="utf-8") if spec is None else spec
    found: dict[str, Requirement] = {}
    section = ""
    marks = [(m.start(), "id", m.group(1)) for m in _DEFINITION.finditer(text)]
    marks += [(m.start(), "heading", m.group(1))
              for m in re.finditer(r"^#{2,3} (\d+(?:\.\d+)?)\.? ", text, re.M)]
    marks.sort()
    for i, (start, kind, value) in enumerate(marks):
        if kind == "heading":
            section = value
            continue
        end = marks[i + 1][0] if i + 1 < len(marks) else len(text)
        found[value] = Requirement(value, section, _level(text[start:end]))
    return found


def collect(root: Path = ROOT) -> dict[str, Requirement]:
    from .mutant_list import MUTANTS

    reqs = requirements()
    vectors = json.loads((HERE / "vectors" / "frames.json").read_text())["vectors"]
    for vector in vectors:
        for rid in vector["requirements"]:
            if rid in reqs:
                reqs[rid].vectors.append(vector["id"])
    for transcript in sorted((HERE / "transcripts").glob("*/transcript.txt")):
        header = re.search(r"^# requirements: (.*)$", transcript.read_text(), re.M)
        for rid in _ID.findall(header.group(1) if header else ""):
            if rid in reqs:
                reqs[rid].transcripts.append(transcript.parent.name)
    for test in sorted((root / "tests").rglob("*.py")) + sorted(
            (root / "guest" / "node" / "test").glob("*.mjs")):
        name = test.relative_to(root).as_posix()
        for rid in sorted(set(_ID.findall(test.read_text(encoding="utf-8")))):
            if rid in reqs:
                reqs[rid].tests.append(name)
    scenarios = {path.parent.name for path in (HERE / "transcripts").glob("*/transcript.txt")}
    for mutant in MUTANTS:
        for rid in mutant.requirements:
            if rid in reqs:
                reqs[rid].mutants.append(f"{mutant.name} → {', '.join(mutant.cases)}")
                # a scenario that fails on the mutant checks the requirement
                reqs[rid].transcripts += sorted(
                    set(mutant.cases) & scenarios - set(reqs[rid].transcripts))
    return reqs


def exceptions(path: Path = EXCEPTIONS) -> dict[str, str]:
    """``R-ID  reason`` lines (``#`` comments): requirements deliberately uncited."""
    out = {}
    for raw in path.read_text(encoding="utf-8").splitlines():
        line = raw.split("#", 1)[0].strip()
        if line:
            rid, _, reason = line.partition(" ")
            out[rid] = reason.strip()
    return out


def render(reqs: dict[str, Requirement], excepted: dict[str, str],
           not_mutated: dict[str, str] | None = None) -> str:
    from .mutant_list import NOT_MUTATED

    not_mutated = NOT_MUTATED if not_mutated is None else not_mutated

    def cell(items: list[str], limit: int = 6) -> str:
        shown = ", ".join(items[:limit])
        return shown + (f" (+{len(items) - limit})" if len(items) > limit else "")

    out = ["# Requirement coverage",
           "",
           "Generated by `python -m tether.conformance.coverage` from `spec/tether-v1.md`,",
           "`vectors/frames.json`, the transcripts and the tests; do not edit. Each",
           "requirement, its level (the strongest key word in its text), and what checks",
           "it. A MUST or SHOULD that nothing checks is listed with its reason in",
           "`coverage-exceptions.txt`. The last column is the proof: each mutant",
           "(`mutant_list.py`) breaks the requirement in a copy of one of tether's guests",
           "or its host, and the cases after the arrow fail on it (`make mutants`).",
           "",
           "| requirement | § | level | vectors | transcripts | tests | mutant → caught by |",
           "| --- | --- | --- | --- | --- | --- | --- |"]
    for r in reqs.values():
        tests = [Path(t).name for t in r.tests]
        unchecked = f"not checked: {excepted[r.id]}" if r.id in excepted else ""
        unmutated = f"none: {not_mutated[r.id]}" if r.id in not_mutated else ""
        out.append(f"| {r.id} | {r.section} | {r.level} | {cell(r.vectors)} | "
                   f"{cell(r.transcripts)} | {cell(tests) or unchecked} | "
                   f"{'; '.join(r.mutants) or unmutated} |")
    return "\n".join(out) + "\n"


def main() -> int:
    table = render(collect(), exceptions())
    if "--check" in sys.argv:
        if not TABLE.exists() or TABLE.read_text(encoding="utf-8") != table:
            print("stale: conformance/coverage.md; run python -m tether.conformance.coverage",
                  file=sys.stderr)
            return 1
        return 0
    TABLE.write_text(table, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
