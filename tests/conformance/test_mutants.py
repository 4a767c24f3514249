"""The mutation check: every MUST and SHOULD has a mutant whose change still
applies, and the requirements no case caught before spec 1.2 (R-CBOR-11,
R-ERR-2, R-STATE-1, R-CANCEL-2, R-VAL-1, R-DONE-7, R-VARS-3, R-FRAME-4)
are caught now. ``make mutants`` runs them all."""

from __future__ import annotations

import asyncio
from dataclasses import replace

import pytest

from tether.conformance import coverage
from tether.conformance.mutant_list import MUTANTS, NOT_MUTATED, Mutant
from tether.conformance.mutants import applies_to, run_mutant, selected

BY_NAME = {m.name: m for m in MUTANTS}

#: The mutants of the requirements that spec 1.2's issue found uncaught:
#: a guest broken this way passed the whole suite before.
ONCE_UNCAUGHT = ("items-unbounded", "error-answered", "second-run-read", "second-cancel-read",
                 "queued-calls-sent", "deep-values-sent", "lone-surrogate-replaced",
                 "type-uncut", "variables-lost-at-syntax-error", "flags-unchecked")


def test_mutant_names_are_unique() -> None:
    assert len(BY_NAME) == len(MUTANTS)


@pytest.mark.parametrize("mutant", MUTANTS, ids=[m.name for m in MUTANTS])
def test_every_mutant_still_applies(mutant: Mutant) -> None:
    """The code a mutant changes has not moved away from under it."""
    assert applies_to(mutant) == ""


def test_every_must_and_should_has_a_mutant_or_a_reason() -> None:
    reqs = coverage.collect()
    strong = {r.id for r in reqs.values() if r.level != "MAY"}
    mutated = {rid for m in MUTANTS for rid in m.requirements}
    assert not strong - mutated - set(NOT_MUTATED), "no mutant and no reason"
    assert not set(NOT_MUTATED) & mutated, "a reason for a requirement that has a mutant"
    assert mutated | set(NOT_MUTATED) <= set(reqs), "a requirement the spec does not define"


@pytest.mark.parametrize("name", ONCE_UNCAUGHT)
def test_the_once_uncaught_requirements_are_caught(name: str) -> None:
    outcome = asyncio.run(run_mutant(BY_NAME[name], {}))
    assert outcome.killed, outcome.problem or f"survived: {outcome.mutant.what}"


def test_a_harmless_change_survives() -> None:
    """The check can fail: a change that breaks nothing is reported."""
    harmless = replace(BY_NAME["flags-unchecked"], name="harmless",
                       new="  if (DataViewPrototypeGetUint16(view, 4) !== 0) { // a comment")
    outcome = asyncio.run(run_mutant(harmless, {}))
    assert not outcome.killed and not outcome.problem


def test_a_change_that_no_longer_applies_is_reported() -> None:
    moved = replace(BY_NAME["flags-unchecked"], name="moved", old="no such text")
    outcome = asyncio.run(run_mutant(moved, {}))
    assert not outcome.killed
    assert "there 0 times" in outcome.problem


def test_mutants_are_chosen_by_requirement_or_name() -> None:
    assert {m.name for m in selected(["R-ERR-2"])} == {"error-answered", "guest-error-ignored"}
    assert [m.name for m in selected(["type-uncut"])] == ["type-uncut"]
    with pytest.raises(SystemExit, match="R-NOPE-1"):
        selected(["R-NOPE-1"])
