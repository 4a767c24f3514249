"""The README's module table names every module of codec/, host/ and guest/."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_readme_names_every_module() -> None:
    readme = (ROOT / "README.md").read_text()
    named = set(re.findall(r"`((?:codec|host|guest)/[\w/]+\.(?:py|mjs))`", readme))
    modules = {str(p.relative_to(ROOT)) for folder in ("codec", "host", "guest", "guest/python")
               for p in (ROOT / folder).glob("*.py") if p.name != "__init__.py"}
    modules |= {str(p.relative_to(ROOT)) for p in (ROOT / "guest" / "node").glob("*.mjs")}
    assert modules - named == set(), "modules the README's layout does not name"
    assert named - modules == set(), "modules the README names that do not exist"


def test_the_host_imports_nothing_of_the_guests() -> None:
    """The host and the guests meet only in the codec (and the spec)."""
    importing = re.compile(r"^\s*(from|import)\s+(tether\.guest|\.\.guest)\b", re.M)
    offenders = [str(p) for p in sorted((ROOT / "host").glob("*.py"))
                 if importing.search(p.read_text())]
    assert offenders == []
