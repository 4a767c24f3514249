"""The differential test's tally: how many programs of each corpus matched the
plain interpreter, said at the end of the test session's summary."""

from __future__ import annotations

from collections import Counter

import pytest

#: corpus -> Counter of "match", "known" (a listed difference), "differ".
TALLY = pytest.StashKey[dict[str, Counter[str]]]()


@pytest.fixture
def tally(request: pytest.FixtureRequest) -> dict[str, Counter[str]]:
    return request.config.stash.setdefault(TALLY, {})


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    counts = terminalreporter.config.stash.get(TALLY, {})
    if not counts:
        return
    terminalreporter.section("differential: tether against the plain interpreter")
    for corpus, seen in sorted(counts.items()):
        total = sum(seen.values())
        terminalreporter.write_line(
            f"{corpus}: {seen['match']} of {total} programs match "
            f"({100 * seen['match'] / total:.1f}%); {seen['known']} known differences, "
            f"{seen['differ']} unexpected")
