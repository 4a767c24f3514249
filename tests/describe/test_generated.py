"""Hypothesis over generated signatures: hints -> schema -> stubs that
type-check, and validation that admits exactly the values of the hints."""

from __future__ import annotations

import ast
import asyncio
import inspect
import itertools
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, NotRequired, Optional

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typing_extensions import TypedDict

from tether.host import describe, prepare_bindings
from tether.host.bindings import stubs_python, stubs_typescript

from .test_render import Checker, checker, ty_errors, typescript_errors

__all__ = ["checker"]  # the module's warm TypeScript checker (a fixture)

_names = itertools.count()


@dataclass(frozen=True)
class Kind:
    """A type hint, the values it admits, and a value it refuses (None: none)."""

    hint: Any
    values: st.SearchStrategy[Any]
    wrong: Any


text = st.text(max_size=5)
SCALARS = [
    Kind(str, text, 1), Kind(int, st.integers(), "1"), Kind(bool, st.booleans(), 0),
    Kind(float, st.floats(allow_nan=False, allow_infinity=False) | st.integers(), "1.5"),
    Kind(bytes, st.binary(max_size=4), "b"), Kind(type(None), st.none(), 0),
    Kind(Any, st.integers() | text, None),
    Kind(Literal["a", "b"], st.sampled_from(["a", "b"]), "c"),
]


def _typed_dict(fields: dict[str, Kind]) -> Kind:
    hints = {k: NotRequired[v.hint] if i % 2 else v.hint for i, (k, v) in enumerate(fields.items())}
    cls = TypedDict(f"Record{next(_names)}", hints)  # type: ignore[operator]
    values = st.fixed_dictionaries(
        {k: v.values for i, (k, v) in enumerate(fields.items()) if not i % 2},
        optional={k: v.values for i, (k, v) in enumerate(fields.items()) if i % 2})
    return Kind(cls, values, [])


def _extend(inner: st.SearchStrategy[Kind]) -> st.SearchStrategy[Kind]:
    return st.one_of(
        inner.map(lambda k: Kind(list[k.hint], st.lists(k.values, max_size=3), "x")),
        inner.map(lambda k: Kind(dict[str, k.hint], st.dictionaries(text, k.values, max_size=3),
                                 [])),
        inner.map(lambda k: Kind(Optional[k.hint], st.none() | k.values, k.wrong)),  # noqa: UP045
        st.dictionaries(st.sampled_from(["a", "b", "c_d"]), inner, min_size=1).map(_typed_dict),
    )


kinds = st.recursive(st.sampled_from(SCALARS), _extend, max_leaves=4)


@st.composite
def functions(draw: st.DrawFn) -> tuple[Any, list[Kind]]:
    params, kinds_drawn = [], []
    for i, kind in enumerate(draw(st.lists(kinds, max_size=4))):
        keyword_only = draw(st.booleans())
        params.append(inspect.Parameter(
            f"p{i}", inspect.Parameter.KEYWORD_ONLY if keyword_only
            else inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=kind.hint))
        kinds_drawn.append(kind)

    def function(*args: Any, **kwargs: Any) -> Any:
        return args, kwargs

    params.sort(key=lambda p: p.kind)  # positional ones first
    function.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    function.__annotations__ = {p.name: p.annotation for p in params}
    function.__name__ = f"f{next(_names)}"
    return function, kinds_drawn


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(generated=functions())
def test_generated_stubs_are_valid_in_both_languages(checker: Checker,
                                                     generated: tuple[Any, list[Kind]]) -> None:
    description = describe(generated[0])
    python = stubs_python.render([description])
    ast.parse(python)
    with tempfile.TemporaryDirectory() as scratch:
        assert ty_errors(python, Path(scratch)) == "", python
    typescript = stubs_typescript.render([description])
    assert typescript_errors(checker, [typescript]) == [[]], typescript


@settings(max_examples=150, deadline=None)
@given(functions(), st.data())
def test_validation_admits_exactly_the_values_of_the_hints(
        generated: tuple[Any, list[Kind]], data: st.DataObject) -> None:
    function, drawn = generated
    binding = prepare_bindings({"f": function})["f"]
    values = {f"p{i}": data.draw(k.values) for i, k in enumerate(drawn)}
    asyncio.run(binding.invoke([], values))  # admitted
    wrong = [(f"p{i}", k.wrong) for i, k in enumerate(drawn) if k.wrong is not None]
    if wrong:
        name, value = data.draw(st.sampled_from(wrong))
        try:
            asyncio.run(binding.invoke([], {**values, name: value}))
        except TypeError as exc:
            assert f"'{name}'" in str(exc)
        else:
            raise AssertionError(f"{name}={value!r} was admitted")
