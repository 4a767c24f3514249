"""Every public name of ``tether`` is in the API reference, with text for
every field, member and property (the docs build shows what is checked here)."""

from __future__ import annotations

import dataclasses
import enum
import inspect
import re
from pathlib import Path

import pytest

import tether

pycode = pytest.importorskip("sphinx.pycode")

API = (Path(__file__).resolve().parents[2] / "docs" / "api.md").read_text()
PUBLIC = [name for name in tether.__all__ if name != "__version__"]


@pytest.mark.parametrize("name", PUBLIC)
def test_the_reference_shows_it(name: str) -> None:
    assert re.search(rf"^\.\. auto(class|exception|function|data):: tether\.{name}$", API,
                     re.MULTILINE)


@pytest.mark.parametrize("name", PUBLIC)
def test_every_field_has_text(name: str) -> None:
    obj = getattr(tether, name)
    if not inspect.isclass(obj):
        return
    assert inspect.getdoc(obj), f"{name} has no docstring"
    if dataclasses.is_dataclass(obj):
        fields = [f.name for f in dataclasses.fields(obj)]
    elif issubclass(obj, enum.Enum):
        fields = list(obj.__members__)
    else:
        fields = []
    analyzer = pycode.ModuleAnalyzer.for_module(obj.__module__)
    documented = {attr for (cls, attr) in analyzer.find_attr_docs() if cls == obj.__qualname__}
    listed = set(re.findall(r"``(\w+)``", inspect.getdoc(obj) or ""))  # Limits-style lists
    missing = [f for f in fields if f not in documented | listed]
    assert not missing, f"{name}: no text for {missing}"
    for attr, value in vars(obj).items():
        if isinstance(value, property) and not attr.startswith("_"):
            assert value.__doc__, f"{name}.{attr} has no docstring"
